package codex

import (
	"context"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/backend/runtime/agentproc"
	"agenthub/backend/runtime/sessions"
	"agenthub/backend/scrub"
)

// Model drives Codex as a [backend.Model]. The engine's run loop is
// unchanged: each Stream returns when Codex asks for approval (calls to
// proxy tools, which the engine gates like any other), reports an action
// it took without asking (a call that records it), or ends its turn (the
// final text, no calls).
type Model struct {
	cfg Config
}

// NewModel returns the model of one Codex profile.
func NewModel(cfg Config) *Model { return &Model{cfg: cfg} }

// Capabilities is what the Codex runtime declares (AD2) for a gating mode.
// Enforced (app-server): every command (and so every network access: the
// sandbox has none, hosted web search is off) and every patch waits for
// AgentHub; reads are advisory, since Codex reads files itself (its
// view_image tool, and whatever an approved command reads); a patch is
// accepted or declined whole (no partial apply). Advisory (exec --json):
// nothing waits; AgentHub records what Codex did.
func Capabilities(gating string) backend.Capabilities {
	g := map[backend.ActionKind]backend.Enforcement{}
	if gating == GatingAdvisory {
		for _, k := range []backend.ActionKind{backend.ActionRead, backend.ActionWrite, backend.ActionPatch,
			backend.ActionShell, backend.ActionNetwork} {
			g[k] = backend.Advisory
		}
		return backend.Capabilities{Gating: g, Usage: true}
	}
	for _, k := range []backend.ActionKind{backend.ActionWrite, backend.ActionPatch, backend.ActionShell,
		backend.ActionNetwork} {
		g[k] = backend.Enforced
	}
	g[backend.ActionRead] = backend.Advisory
	return backend.Capabilities{Gating: g, Streaming: true, PartialApply: false, Usage: true}
}

// Stream implements backend.Model.
func (m *Model) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	if m.cfg.Mode == ModeExec && !m.cfg.advisory() {
		return backend.ModelResponse{}, errExecUngated
	}
	if err := m.cfg.Validate(); err != nil {
		return backend.ModelResponse{}, &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "profile",
			Message: "the Codex profile is invalid: " + err.Error()}
	}
	s, task, err := live.Find(req.Messages, errGone)
	if err != nil {
		return backend.ModelResponse{}, err
	}
	if s == nil {
		return m.open(ctx, task)
	}
	s.settle(req.Messages)
	return s.next(ctx, delta)
}

// open prepares a session and returns the call that starts it. The process
// starts in the session tool's Execute, the first point where the run's
// workspace, id and process tracking are known.
func (m *Model) open(ctx context.Context, task string) (backend.ModelResponse, error) {
	bin, err := m.cfg.resolve(ctx)
	if err != nil {
		return backend.ModelResponse{}, err
	}
	s := newSession(m.cfg, bin, task)
	live.Add(s.ID, s.startCallID(), s)
	mode := "app-server"
	if m.cfg.advisory() {
		mode = "exec"
	}
	return sessions.Call("", s.startCallID(), ToolSession, agentproc.SessionArgs{Session: s.ID, Action: agentproc.ActionStart,
		Mode: mode, Version: bin.Version, SHA256: bin.SHA256, Tested: TestedVersion})
}

// settle declines the approval requests the engine decided without
// accepting them: a rejection, a policy denial, a refused path, an
// approval that drifted, or a patch only some files of which were
// approved. The transcript's tool messages say why, and that is what the
// agent is told.
func (s *session) settle(msgs []backend.Message) {
	told := sessions.Replies(msgs)
	s.Mu.Lock()
	var open []*request
	approved := map[*request]map[int]bool{}
	for _, r := range s.reqs {
		if r.sent && !r.answered && !containsReq(open, r) {
			open = append(open, r)
			approved[r] = map[int]bool{}
			for i := range r.approved {
				approved[r][i] = true
			}
		}
	}
	s.Mu.Unlock()
	for _, r := range open {
		var why []string
		for i, c := range r.calls {
			if approved[r][i] {
				continue
			}
			if t := told[c]; t != "" {
				why = append(why, t)
			}
		}
		if len(why) == 0 {
			why = []string{"AgentHub did not approve it"}
		}
		what := "command `" + scrub.Clip(innerCommand(s.commandArgs(callArgs{}, r.cmd)), 120) + "`"
		if r.method == methodFileApproval {
			what = "patch (item " + scrub.Clip(r.itemID, 40) + ")"
		}
		s.decline(r, fmt.Sprintf("your %s was declined and not run: %s", what, strings.Join(why, "; ")))
	}
}

func containsReq(rs []*request, r *request) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// next streams Codex's text until it asks for approval, reports an action
// it took on its own, or ends its turn.
func (s *session) next(ctx context.Context, delta func(string)) (backend.ModelResponse, error) {
	var text strings.Builder
	streamed := false // deltas came since the last whole message
	for {
		ev, ok, wait := s.Pop()
		if !ok {
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				s.stop()
				return backend.ModelResponse{}, ctx.Err()
			}
		}
		switch ev.kind {
		case evDelta:
			delta(ev.text)
			streamed = true
		case evText:
			if !streamed && !ev.shown {
				delta(ev.text)
			}
			streamed = false
			if text.Len() > 0 && ev.text != "" {
				text.WriteString("\n\n")
			}
			text.WriteString(ev.text)
		case evApproval:
			calls, err := s.proxyCalls(ev.req)
			if err != nil {
				s.stop()
				return backend.ModelResponse{}, err
			}
			s.Mu.Lock()
			ev.req.sent = true
			s.Mu.Unlock()
			return backend.ModelResponse{Text: text.String(), Calls: calls, Usage: s.takeUsage()}, nil
		case evObserved:
			call, err := s.observedCall(ev.item, s.observedSeq())
			if err != nil {
				return backend.ModelResponse{}, err
			}
			return backend.ModelResponse{Text: text.String(), Calls: []backend.ToolCallRequest{call},
				Usage: s.takeUsage()}, nil
		case evTurnDone:
			return s.end(ev, text.String())
		case evExit:
			s.drop()
			return backend.ModelResponse{}, s.exitError()
		case evFail:
			s.stop()
			return backend.ModelResponse{}, ev.err
		}
	}
}

// observedSeq numbers observation calls within the session.
func (s *session) observedSeq() int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.nextObserved++
	return s.nextObserved
}

// end is the turn's result: the final answer, or first a report call when
// problems with the output are still to be recorded.
func (s *session) end(ev event, text string) (backend.ModelResponse, error) {
	if s.pendingDiags() {
		// The report goes first; the turn's text is read again after it
		// (already streamed), so the final answer keeps it.
		s.PushFront(ev)
		if text != "" {
			s.PushFront(event{kind: evText, text: text, shown: true})
		}
		id := fmt.Sprintf("codex-%s-report-%d", s.ID, s.reportSeq())
		live.AddCall(id, s)
		return sessions.Call("", id, ToolSession, agentproc.SessionArgs{Session: s.ID, Action: agentproc.ActionReport})
	}
	s.finish()
	usage := s.takeUsage()
	switch ev.turn.Status {
	case "completed":
		return backend.ModelResponse{Text: text, Usage: usage}, nil
	case "interrupted":
		return backend.ModelResponse{}, &backend.Error{Code: backend.FailRunInterrupted,
			Message: "Codex's turn was interrupted before it finished"}
	}
	s.Mu.Lock()
	last := s.lastErr
	s.Mu.Unlock()
	if ev.turn.Error != nil {
		last = ev.turn.Error
	}
	return backend.ModelResponse{}, s.turnError(last, ev.turn.Status)
}

func (s *session) reportSeq() int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Lines
}

// turnError maps a failed turn to a stable failure.
func (s *session) turnError(e *turnError, status string) error {
	if e == nil {
		return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "turn_failed",
			Message: "Codex ended the turn with status " + scrub.Clip(status, 40) + " and no error message"}
	}
	msg := scrub.Clip(s.Scrub(e.Message), 300)
	code, http := e.code(), e.httpStatus()
	switch {
	case http == 401 || http == 403 || code == "unauthorized":
		return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "auth",
			Message: "the model server rejected Codex's credentials (" + msg + ")",
			Next:    authStep}
	case code == "usageLimitExceeded":
		return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "usage_limit", Message: msg}
	case code == "contextWindowExceeded":
		return &backend.Error{Code: backend.FailContextOverflow, Message: msg}
	}
	return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "api_error",
		Message: "Codex ended the turn with an error: " + msg}
}

// authStep is the recovery of a refused key. Codex needs no login of its
// own here: AgentHub gives it the profile's key and server.
const authStep = "Check the variable the profile's key_env names (its value is sent as a bearer token) and base_url."

// exitError is the failure of a CLI that exited before its turn ended.
func (s *session) exitError() error {
	s.Mu.Lock()
	code, tail, invalid, lines := s.ExitCode, s.Stderr, s.Invalid, s.Lines
	s.Mu.Unlock()
	return agentproc.ExitError("the Codex CLI", code, strings.TrimSpace(tail), invalid, lines)
}
