package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"agenthub/backend"
	"agenthub/backend/runtime/agentbin"
	"agenthub/backend/runtime/agentproc"
	"agenthub/backend/runtime/rawlog"
	"agenthub/backend/runtime/sessions"
	"agenthub/backend/scrub"
)

// Model drives an ACP agent as a [backend.Model]. The engine's run loop is
// unchanged: each Stream returns when the agent asks for permission or
// writes a file no approval covered (one call to a proxy tool, which the
// engine gates like any other) or when the turn ends (the final text).
type Model struct {
	cfg Config
}

// NewModel returns the model of one ACP profile.
func NewModel(cfg Config) *Model { return &Model{cfg: cfg} }

// Stream implements backend.Model.
func (m *Model) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
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
// workspace, id, events and process tracking are known.
func (m *Model) open(ctx context.Context, task string) (backend.ModelResponse, error) {
	bin, err := m.cfg.resolve(ctx)
	if err != nil {
		return backend.ModelResponse{}, err
	}
	s := newSession(m.cfg, bin, task)
	live.Add(s.ID, s.startCallID(), s)
	return sessions.Call("", s.startCallID(), ToolSession, agentproc.SessionArgs{Session: s.ID, Runtime: m.cfg.name(),
		SHA256: bin.SHA256})
}

// errGone is the failure of a run whose session no longer exists.
var errGone = &backend.Error{Code: backend.FailRunInterrupted,
	Message: "the ACP agent of this run is gone (AgentHub restarted or the process ended); ACP runs cannot be resumed"}

// next streams the agent's text and records its events until it asks for
// something or ends its turn.
func (s *session) next(ctx context.Context, delta func(string)) (backend.ModelResponse, error) {
	var text strings.Builder
	for {
		it, ok, wait := s.Pop()
		if !ok {
			if err := s.wait(ctx, wait); err != nil {
				_ = s.stop(2 * time.Second)
				return backend.ModelResponse{}, err
			}
			continue
		}
		switch it.kind {
		case itemDelta:
			delta(it.text)
			text.WriteString(it.text)
		case itemEvent:
			if s.emit != nil {
				s.emit(it.evType, it.payload)
			}
		case itemPermission, itemWrite, itemTerminal:
			call, err := s.callFor(it)
			if err != nil {
				_ = s.stop(2 * time.Second)
				return backend.ModelResponse{}, err
			}
			return backend.ModelResponse{Text: text.String(), Calls: []backend.ToolCallRequest{call}}, nil
		case itemEnd:
			return s.end(it, text.String())
		case itemExit:
			if s.endsSoon() {
				continue
			}
			s.drop()
			return backend.ModelResponse{}, s.exitError()
		case itemFail:
			s.drop()
			return backend.ModelResponse{}, it.err
		}
	}
}

// callFor marks a request as handed to the engine and returns its call.
func (s *session) callFor(it item) (backend.ToolCallRequest, error) {
	s.Mu.Lock()
	switch {
	case it.perm != nil:
		it.perm.sent = true
	case it.term != nil:
		it.term.sent = true
	default:
		it.write.sent = true
	}
	s.Mu.Unlock()
	switch {
	case it.perm != nil:
		return s.proxyCall(it.perm)
	case it.term != nil:
		return s.terminalCall(it.term)
	}
	return s.writeCall(it.write)
}

// endsSoon reports whether the turn's answer arrived, or arrives shortly,
// after the process exited: the exit and the answer race.
func (s *session) endsSoon() bool {
	select {
	case <-s.turnEnded():
	case <-time.After(time.Second):
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.ended
}

// end is the turn's result: the final answer, or the failure of the turn.
func (s *session) end(it item, text string) (backend.ModelResponse, error) {
	if it.err != nil {
		err := s.promptError(it.err)
		_ = s.stop(2 * time.Second)
		return backend.ModelResponse{}, err
	}
	s.drainEvents()
	s.finish()
	if it.resp.StopReason == sdk.StopReasonRefusal {
		return backend.ModelResponse{}, &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "refusal",
			Message: s.cfg.label() + " refused to continue the turn"}
	}
	return backend.ModelResponse{Text: text, Usage: usageOf(it.resp)}, nil
}

// drainEvents records the events queued before the turn ended.
func (s *session) drainEvents() {
	s.Mu.Lock()
	var rest []item
	for _, it := range s.Queue {
		if it.kind == itemEvent {
			rest = append(rest, it)
		}
	}
	s.Queue = nil
	s.Mu.Unlock()
	for _, it := range rest {
		if s.emit != nil {
			s.emit(it.evType, it.payload)
		}
	}
}

// promptError maps a failed session/prompt to a stable failure.
func (s *session) promptError(err error) error {
	if s.exitedNow() {
		return s.exitError() // the SDK reports a lost peer as an internal error
	}
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "prompt",
			Message: s.cfg.label() + " stopped answering", Err: err}
	}
	msg := re.Message
	if b, jerr := json.Marshal(re.Data); jerr == nil && re.Data != nil {
		msg += " " + string(b)
	}
	low := strings.ToLower(msg)
	if re.Code == -32000 || strings.Contains(low, "api key") || strings.Contains(low, "api_key") ||
		strings.Contains(low, "401") || strings.Contains(low, "403") || strings.Contains(low, "permission_denied") ||
		strings.Contains(low, "unauthenticated") {
		return s.authError(msg)
	}
	return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "prompt",
		Message: fmt.Sprintf("%s failed the turn: %s", s.cfg.label(), scrub.Clip(s.Scrub(msg), 400))}
}

func (s *session) exitedNow() bool {
	select {
	case <-s.P.Done():
		<-s.exitRecorded()
		return true
	case <-time.After(500 * time.Millisecond):
		return false
	}
}

// usageOf reads the turn's token usage: ACP's usage field, or Gemini CLI's
// _meta.quota.token_count.
func usageOf(r sdk.PromptResponse) backend.Usage {
	if r.Usage != nil {
		return backend.Usage{InputTokens: int64(r.Usage.InputTokens), OutputTokens: int64(r.Usage.OutputTokens)}
	}
	var meta struct {
		Quota struct {
			TokenCount struct {
				Input  int64 `json:"input_tokens"`
				Output int64 `json:"output_tokens"`
			} `json:"token_count"`
		} `json:"quota"`
	}
	b, _ := json.Marshal(r.Meta)
	_ = json.Unmarshal(b, &meta)
	return backend.Usage{InputTokens: meta.Quota.TokenCount.Input, OutputTokens: meta.Quota.TokenCount.Output}
}

// sessionTool starts a run's agent (agentproc.SessionTool, shared by every
// adapter). An ACP session queues the problems it finds as events when it
// finds them, so it never reports any later.
func sessionTool() agentproc.SessionTool {
	return agentproc.SessionTool{Label: "the ACP agent", Gone: errGone.Message,
		ToolSpec: spec(ToolSession, "Starts the ACP agent for this run."),
		Lookup: func(id string) (agentproc.Starter, bool) {
			s, ok := live.ByID(id)
			return s, ok
		}}
}

// Launch implements agentproc.Starter.
func (s *session) Launch(_ context.Context, env backend.ToolEnv) (string, error) {
	if err := s.start(env); err != nil {
		if s.P != nil {
			_ = s.P.Stop(2 * time.Second)
		}
		s.fail(err)
		return "", err
	}
	s.announce(env)
	msg := fmt.Sprintf("%s %s started in the workspace over ACP (program sha256 %s); its permission requests "+
		"and file writes come to AgentHub for approval", s.agentLabel(), s.agent.Version, scrub.Short(s.Bin.SHA256))
	if w := s.driftWarning(); w != "" {
		msg += "; " + w
	}
	return msg, nil
}

// Report implements agentproc.Starter: nothing is left to report.
func (s *session) Report(backend.ToolEnv) int { return 0 }

func (s *session) agentLabel() string {
	if s.agent.Name != "" {
		return scrub.Clip(s.agent.Name, 60)
	}
	return s.cfg.label()
}

// driftWarning is the warning for an agent of another version than the
// tested one, or for an agent AgentHub was never tested with.
func (s *session) driftWarning() string {
	return agentbin.DriftWarning(s.agentLabel(), scrub.Clip(s.agent.Version, 40), testedVersion(s.agent.Name),
		s.cfg.installHint())
}

// announce records the agent that runs (AD4) and warns on drift.
func (s *session) announce(env backend.ToolEnv) {
	if env.Emit == nil {
		return
	}
	tested := testedVersion(s.agent.Name)
	drift := s.agent.Version != tested
	cmd := s.cfg.command()
	env.Emit(backend.EvRuntimeStarted, map[string]any{"runtime": s.cfg.name(), "agent": s.agent.Name,
		"version": s.agent.Version, "sha256": s.Bin.SHA256, "testedVersion": tested, "drift": drift,
		"sessionId": s.ID, "rawOutput": rawlog.Name(s.ID), "program": programName(cmd[0]), "args": s.scrubAll(s.cfg.args()),
		"capabilities": Capabilities(s.cfg.Gemini)})
	if drift {
		env.Emit(backend.EvVersionDrift, map[string]any{"runtime": s.cfg.name(), "agent": s.agent.Name,
			"version": s.agent.Version, "testedVersion": tested, "message": s.driftWarning()})
	}
}

func (s *session) scrubAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if filepath.IsAbs(a) {
			a = programName(a) // a machine path; its name is enough
		}
		out[i] = s.Scrub(a)
	}
	return out
}

// programName is a program as events show it: its name, never a machine
// path.
func programName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// fail makes the next Stream end the run with err.
func (s *session) fail(err error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Queue = nil // the failure, not what the dying process left, ends the run
	s.Push(item{kind: itemFail, err: err})
}
