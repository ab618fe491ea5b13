package claude

import (
	"context"
	"encoding/json"
	"fmt"

	"agenthub/backend"
	"agenthub/backend/runtime/agentbin"
	"agenthub/backend/runtime/agentproc"
	"agenthub/backend/runtime/rawlog"
	"agenthub/backend/scrub"
)

// The event types this runtime records about the CLI that ran (AD4).
const (
	EvRuntimeStarted = backend.EvRuntimeStarted
	EvVersionDrift   = backend.EvVersionDrift
)

const (
	actionStart  = "start"
	actionReport = "report"
)

// sessionArgs are the arguments of the session tool's calls.
type sessionArgs struct {
	Session string `json:"session"`
	Action  string `json:"action"`
	Version string `json:"version,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
	Tested  string `json:"testedVersion,omitempty"`
}

// sessionTool starts a run's CLI (the first point where the run's
// workspace, id, event log and process tracking are at hand) and records
// problems with its output. It needs no approval: it changes nothing in the
// workspace, and every action of the CLI is gated on its own.
type sessionTool struct{}

func (sessionTool) Spec() backend.ToolSpec {
	return spec(ToolSession, "Starts the Claude Code CLI for this run, or records what it printed that AgentHub could not read.")
}

func (sessionTool) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}

func (sessionTool) Execute(_ context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	var a sessionArgs
	if err := json.Unmarshal(in.Arguments, &a); err != nil {
		return backend.ToolResult{Content: "not a Claude Code session call", IsError: true}, nil
	}
	s, ok := live.ByID(a.Session)
	if !ok {
		return backend.ToolResult{Content: errGone.Message, IsError: true}, nil
	}
	if a.Action == actionReport {
		n := len(s.takeDiagsFor(env))
		return backend.ToolResult{Content: fmt.Sprintf("Claude Code printed %d line(s) AgentHub could not read; "+
			"they are kept in the raw output and recorded as %s events", n, backend.EvSchemaValidation)}, nil
	}
	if err := s.start(env); err != nil {
		s.fail(err)
		return backend.ToolResult{Content: "Claude Code could not be started", IsError: true}, nil
	}
	s.announce(env)
	msg := fmt.Sprintf("Claude Code %s started in the workspace (binary sha256 %s); its writes, commands and "+
		"reads come to AgentHub for approval", s.bin.Version, scrub.Short(s.bin.SHA256))
	if s.bin.Drift() {
		msg += "; " + driftWarning(s.bin.Version)
	}
	return backend.ToolResult{Content: msg}, nil
}

func driftWarning(version string) string {
	return agentbin.DriftWarning("Claude Code", version, TestedVersion, InstallHint)
}

// announce records the CLI that runs (AD4) and warns on drift.
func (s *session) announce(env backend.ToolEnv) {
	if env.Emit == nil {
		return
	}
	env.Emit(EvRuntimeStarted, map[string]any{"runtime": "claude", "version": s.bin.Version,
		"sha256": s.bin.SHA256, "testedVersion": TestedVersion, "drift": s.bin.Drift(), "sessionId": s.id,
		"rawOutput": rawlog.Name(s.id), "capabilities": Capabilities()})
	if s.bin.Drift() {
		env.Emit(EvVersionDrift, map[string]any{"runtime": "claude", "version": s.bin.Version,
			"testedVersion": TestedVersion, "message": driftWarning(s.bin.Version)})
	}
}

// takeDiagsFor emits the pending problems and returns them.
func (s *session) takeDiagsFor(env backend.ToolEnv) []agentproc.Diag {
	d := s.takeDiags()
	if env.Emit != nil {
		for _, x := range d {
			env.Emit(backend.EvSchemaValidation, x)
		}
	}
	return d
}

// fail makes the next Stream end the run with err.
func (s *session) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, item{kind: itemFail, err: err})
	s.signal()
}
