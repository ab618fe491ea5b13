package claude

import (
	"context"
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

// sessionTool starts a run's Claude Code and records what it printed that
// AgentHub could not read (agentproc.SessionTool, shared by every adapter).
func sessionTool() agentproc.SessionTool {
	return agentproc.SessionTool{Label: "Claude Code", Gone: errGone.Message,
		ToolSpec: spec(ToolSession, "Starts the Claude Code CLI for this run, or records what it printed that AgentHub could not read."),
		Lookup: func(id string) (agentproc.Starter, bool) {
			s, ok := live.ByID(id)
			return s, ok
		}}
}

// Launch implements agentproc.Starter.
func (s *session) Launch(_ context.Context, env backend.ToolEnv) (string, error) {
	if err := s.start(env); err != nil {
		s.fail(err)
		return "", err
	}
	s.announce(env)
	msg := fmt.Sprintf("Claude Code %s started in the workspace (binary sha256 %s); its writes, commands and "+
		"reads come to AgentHub for approval", s.Bin.Version, scrub.Short(s.Bin.SHA256))
	if s.Bin.Drift() {
		msg += "; " + driftWarning(s.Bin.Version)
	}
	return msg, nil
}

// Report implements agentproc.Starter.
func (s *session) Report(env backend.ToolEnv) int { return len(s.takeDiagsFor(env)) }

func driftWarning(version string) string {
	return agentbin.DriftWarning("Claude Code", version, TestedVersion, InstallHint)
}

// announce records the CLI that runs (AD4) and warns on drift.
func (s *session) announce(env backend.ToolEnv) {
	if env.Emit == nil {
		return
	}
	env.Emit(EvRuntimeStarted, map[string]any{"runtime": "claude", "version": s.Bin.Version,
		"sha256": s.Bin.SHA256, "testedVersion": TestedVersion, "drift": s.Bin.Drift(), "sessionId": s.ID,
		"rawOutput": rawlog.Name(s.ID), "capabilities": Capabilities()})
	if s.Bin.Drift() {
		env.Emit(EvVersionDrift, map[string]any{"runtime": "claude", "version": s.Bin.Version,
			"testedVersion": TestedVersion, "message": driftWarning(s.Bin.Version)})
	}
}

// takeDiagsFor emits the pending problems and returns them.
func (s *session) takeDiagsFor(env backend.ToolEnv) []agentproc.Diag {
	d := s.TakeDiags()
	if env.Emit != nil {
		for _, x := range d {
			env.Emit(backend.EvSchemaValidation, x)
		}
	}
	return d
}

// fail makes the next Stream end the run with err.
func (s *session) fail(err error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Queue = append(s.Queue, item{kind: itemFail, err: err})
	s.Signal()
}
