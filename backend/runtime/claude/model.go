package claude

import (
	"context"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/backend/runtime/agentproc"
	"agenthub/backend/runtime/sessions"
	"agenthub/backend/scrub"
)

// Model drives Claude Code as a [backend.Model]. The engine's run loop is
// unchanged: each Stream returns when the CLI asks to use a tool (one call
// to a proxy tool, which the engine gates like any other) or when the turn
// ends (the final text, no calls).
type Model struct {
	cfg Config
}

// NewModel returns the model of one Claude Code profile.
func NewModel(cfg Config) *Model { return &Model{cfg: cfg} }

// Capabilities is what the Claude Code runtime declares (AD2): every write
// and command is gated through AgentHub before the CLI acts; text streams;
// a session cannot be resumed after AgentHub restarts; usage is reported.
func Capabilities() backend.Capabilities {
	gating := map[backend.ActionKind]backend.Enforcement{}
	for _, k := range []backend.ActionKind{backend.ActionRead, backend.ActionWrite, backend.ActionPatch,
		backend.ActionShell, backend.ActionNetwork} {
		gating[k] = backend.Enforced
	}
	return backend.Capabilities{Gating: gating, Streaming: true, PartialApply: true, Usage: true}
}

// Stream implements backend.Model.
func (m *Model) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	if m.cfg.Model == "" {
		return backend.ModelResponse{}, errNoModel
	}
	s, task, err := live.Find(req.Messages, errGone)
	if err != nil {
		return backend.ModelResponse{}, err
	}
	if s == nil {
		return m.open(ctx, task)
	}
	if err := s.settle(req.Messages); err != nil {
		s.stop()
		return backend.ModelResponse{}, err
	}
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
	return sessions.Call("", s.startCallID(), ToolSession, agentproc.SessionArgs{Session: s.ID, Action: agentproc.ActionStart,
		Version: bin.Version, SHA256: bin.SHA256, Tested: TestedVersion})
}

// errGone is the failure of a run whose session no longer exists: the
// process ended, or AgentHub restarted while the run waited (a Claude Code
// session cannot be resumed).
var errGone = &backend.Error{Code: backend.FailRunInterrupted,
	Message: "the Claude Code process of this run is gone (AgentHub restarted or the process ended); Claude Code runs cannot be resumed"}

// settle answers the permission requests the engine decided without
// executing the call: a rejection, a policy denial, a refused path or an
// approval that drifted. The transcript's tool message for the call says
// why, and that is what the CLI is told.
func (s *session) settle(msgs []backend.Message) error {
	told := sessions.Replies(msgs)
	s.Mu.Lock()
	var open []*permission
	for _, p := range s.perms {
		if p.sent && !p.answered {
			open = append(open, p)
		}
	}
	s.Mu.Unlock()
	for _, p := range open {
		why, ok := told[p.callID]
		if !ok || why == "" {
			why = "AgentHub did not run this tool call."
		}
		if err := s.deny(p, why); err != nil {
			return err
		}
	}
	return nil
}

// next streams the CLI's text until it asks for a tool or ends its turn.
func (s *session) next(ctx context.Context, delta func(string)) (backend.ModelResponse, error) {
	var text strings.Builder
	streamed := false // deltas came since the last whole text block
	for {
		it, ok, wait := s.Pop()
		if !ok {
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				s.stop()
				return backend.ModelResponse{}, ctx.Err()
			}
		}
		switch it.kind {
		case itemDelta:
			delta(it.text)
			streamed = true
		case itemText:
			if !streamed {
				delta(it.text)
			}
			streamed = false
			text.WriteString(it.text)
		case itemPermission:
			s.Mu.Lock()
			it.perm.sent = true
			s.Mu.Unlock()
			call, err := s.proxyCall(it.perm)
			if err != nil {
				s.stop()
				return backend.ModelResponse{}, err
			}
			return backend.ModelResponse{Text: text.String(), Calls: []backend.ToolCallRequest{call}}, nil
		case itemResult:
			return s.end(it, text.String())
		case itemExit:
			return backend.ModelResponse{}, s.exitError()
		case itemFail:
			s.drop()
			return backend.ModelResponse{}, it.err
		}
	}
}

// end is the turn's result: the final answer, or first a report call when
// problems with the output are still to be recorded.
func (s *session) end(it item, text string) (backend.ModelResponse, error) {
	r := it.result
	if s.pendingDiags() {
		s.PushFront(it)
		id := fmt.Sprintf("claude-%s-report-%d", s.ID, s.reportSeq())
		live.AddCall(id, s)
		return sessions.Call(text, id, ToolSession, agentproc.SessionArgs{Session: s.ID, Action: agentproc.ActionReport})
	}
	s.finish()
	if r.IsError || r.Subtype != "success" {
		return backend.ModelResponse{}, resultError(r)
	}
	if text == "" {
		text = r.Text
	}
	usage := backend.Usage{InputTokens: r.Usage.Input + r.Usage.CacheCreation + r.Usage.CacheRead,
		OutputTokens: r.Usage.Output}
	return backend.ModelResponse{Text: text, Usage: usage}, nil
}

func (s *session) reportSeq() int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Lines
}

// resultError maps a failed turn to a stable failure.
func resultError(r result) error {
	switch {
	case r.APIErrorStatus == 401 || r.APIErrorStatus == 403:
		return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "auth",
			Message: fmt.Sprintf("the model server rejected the API key (HTTP %d)", r.APIErrorStatus),
			Next:    "Check the profile's key_env variable and base_url."}
	case r.APIErrorStatus != 0:
		return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "api_error",
			Message: fmt.Sprintf("the model server failed (HTTP %d); Claude Code ended the turn", r.APIErrorStatus)}
	}
	reason := r.TerminalReason
	if reason == "" {
		reason = r.Subtype
	}
	return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "result_error",
		Message: "Claude Code ended the turn with an error (" + scrub.Clip(reason, 80) + ")"}
}

// exitError is the failure of a CLI that exited without a result.
func (s *session) exitError() error {
	s.Mu.Lock()
	code, tail, invalid, lines := s.ExitCode, s.Stderr, s.Invalid, s.Lines
	s.Mu.Unlock()
	s.drop()
	return agentproc.ExitError("Claude Code", code, strings.TrimSpace(tail), invalid, lines)
}
