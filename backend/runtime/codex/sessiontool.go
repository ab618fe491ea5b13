package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"agenthub/backend"
	"agenthub/backend/runtime/agentbin"
	"agenthub/backend/runtime/agentproc"
	"agenthub/backend/runtime/rawlog"
	"agenthub/backend/scrub"
)

// Event types this runtime adds to the run's stream (EV13 keeps unknown
// types): the CLI that ran, a warning when its version is not the one the
// adapter was tested with (AD4), a run whose record of the CLI is
// incomplete, and an action Codex took without asking.
const (
	EvRuntimeStarted backend.EventType = "runtime.started"
	EvVersionDrift   backend.EventType = "runtime.version_drift"
	EvDegraded       backend.EventType = "runtime.degraded"
	EvUngated        backend.EventType = "runtime.ungated_action"
)

// sessionTool starts a run's Codex CLI and records what it printed that
// AgentHub could not read (agentproc.SessionTool, shared by every adapter).
func sessionTool() agentproc.SessionTool {
	return agentproc.SessionTool{Label: "Codex", Gone: errGone.Message,
		ToolSpec: spec(ToolSession, "Starts the Codex CLI for this run, or records what it printed that AgentHub could not read."),
		Lookup: func(id string) (agentproc.Starter, bool) {
			s, ok := live.ByID(id)
			return s, ok
		}}
}

// Launch implements agentproc.Starter: app-server, or `codex exec` with
// advisory gating.
func (s *session) Launch(ctx context.Context, env backend.ToolEnv) (string, error) {
	start := s.start
	if s.cfg.advisory() {
		start = s.startExec
	}
	if err := start(ctx, env); err != nil {
		s.stopQuietly()
		s.fail(err)
		return "", err
	}
	s.announce(env)
	msg := fmt.Sprintf("Codex %s started in the workspace (binary sha256 %s); its commands and patches come to "+
		"AgentHub for approval", s.Bin.Version, scrub.Short(s.Bin.SHA256))
	if s.cfg.advisory() {
		msg = fmt.Sprintf("Codex %s started in the workspace (binary sha256 %s) with advisory gating: it acts "+
			"inside its %s sandbox without asking, and AgentHub records what it did", s.Bin.Version,
			scrub.Short(s.Bin.SHA256), s.cfg.sandbox())
	}
	if s.Bin.Drift() {
		msg += "; " + driftWarning(s.Bin.Version)
	}
	return msg, nil
}

// Report implements agentproc.Starter.
func (s *session) Report(env backend.ToolEnv) int { return len(s.takeDiagsFor(env)) }

// stopQuietly stops a process that failed to start properly, keeping the
// session so that the next Stream reports the failure.
func (s *session) stopQuietly() {
	if s.P != nil {
		_ = s.P.Stop(2 * time.Second)
	}
}

func driftWarning(version string) string {
	return agentbin.DriftWarning("Codex", version, TestedVersion, InstallHint)
}

// announce records the CLI that runs (AD4) and warns on drift.
func (s *session) announce(env backend.ToolEnv) {
	if env.Emit == nil {
		return
	}
	mode := "app-server"
	if s.cfg.advisory() {
		mode = "exec"
	}
	env.Emit(EvRuntimeStarted, map[string]any{"runtime": "codex", "mode": mode, "version": s.Bin.Version,
		"sha256": s.Bin.SHA256, "testedVersion": TestedVersion, "drift": s.Bin.Drift(), "sessionId": s.ID,
		"sandbox": s.cfg.sandbox(), "rawOutput": rawlog.Name(s.ID), "capabilities": Capabilities(s.cfg.Gating)})
	if s.Bin.Drift() {
		env.Emit(EvVersionDrift, map[string]any{"runtime": "codex", "version": s.Bin.Version,
			"testedVersion": TestedVersion, "message": driftWarning(s.Bin.Version)})
	}
}

// takeDiags returns the problems not yet emitted, and whether the run is
// to be marked degraded now (the first time there are any).
func (s *session) takeDiags() ([]agentproc.Diag, bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	d := s.Diags
	s.Diags = nil
	first := len(d) > 0 && !s.degraded
	if first {
		s.degraded = true
	}
	return d, first
}

func (s *session) pendingDiags() bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return len(s.Diags) > 0
}

// emitDiags records pending problems as schema.validation_failed events.
func (s *session) emitDiags(env backend.ToolEnv) { s.takeDiagsFor(env) }

// takeDiagsFor emits the pending problems and returns them; the first
// time, the run is marked degraded: its record of what Codex did may be
// incomplete.
func (s *session) takeDiagsFor(env backend.ToolEnv) []agentproc.Diag {
	d, first := s.takeDiags()
	if env.Emit != nil {
		for _, x := range d {
			env.Emit(backend.EvSchemaValidation, x)
		}
		if first {
			env.Emit(EvDegraded, map[string]any{"runtime": "codex", "reason": "schema_validation_failed",
				"message": "Codex printed output AgentHub could not read; the run's record of what Codex did may be " +
					"incomplete (the raw output is kept)", "rawOutput": rawlog.Name(s.ID)})
		}
	}
	return d
}

// observedTool records a command or file change Codex made without asking
// AgentHub first: the normal case with advisory gating, a breach of the
// gate otherwise. Nothing is executed: it already happened.
type observedTool struct{}

func (observedTool) Spec() backend.ToolSpec {
	return spec(ToolObserved, "A command or file change Codex made without asking AgentHub, recorded after the fact.")
}

func (observedTool) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}

// observedArgs are the arguments of an observed call.
type observedArgs struct {
	Session  string   `json:"session"`
	Item     string   `json:"item"`
	Type     string   `json:"type"` // command | file_change
	Command  string   `json:"command,omitempty"`
	Status   string   `json:"status"`
	Exit     *int     `json:"exitCode,omitempty"`
	Files    []string `json:"files,omitempty"` // "add hello.txt", "update README.md"…
	Output   string   `json:"output,omitempty"`
	Advisory bool     `json:"advisory"`
	Source   string   `json:"source,omitempty"` // "rollout": read from the session's rollout file
}

func (observedTool) Execute(_ context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	var a observedArgs
	if err := json.Unmarshal(in.Arguments, &a); err != nil {
		return backend.ToolResult{Content: "not a Codex observation", IsError: true}, nil
	}
	if s, ok := live.ByID(a.Session); ok {
		s.emitDiags(env)
	}
	if env.Emit != nil {
		ev := map[string]any{"runtime": "codex", "item": a.Item, "type": a.Type,
			"command": a.Command, "files": a.Files, "status": a.Status, "exitCode": a.Exit,
			"enforcement": enforcementOf(a.Advisory)}
		if a.Source != "" {
			ev["source"] = a.Source
		}
		env.Emit(EvUngated, ev)
	}
	what := "Codex ran `" + scrub.Clip(a.Command, 200) + "` without asking AgentHub"
	if a.Type == "file_change" {
		what = fmt.Sprintf("Codex changed files without asking AgentHub: %v", a.Files)
	}
	if a.Source == rolloutSource {
		what += " (read from Codex's session rollout: its output did not report it)"
	}
	if a.Advisory {
		what += " (advisory gating: recorded, not approved)"
	} else {
		what += " (this breaks the gate: the run is marked with " + string(EvUngated) + ")"
	}
	content := fmt.Sprintf("%s; status %s", what, a.Status)
	if a.Exit != nil {
		content += fmt.Sprintf(", exit code %d", *a.Exit)
	}
	if a.Output != "" {
		content += "\n" + a.Output
	}
	failed := a.Status != "completed" || (a.Exit != nil && *a.Exit != 0)
	return backend.ToolResult{Content: scrub.Clip(content, maxResult), IsError: failed}, nil
}

func enforcementOf(advisory bool) backend.Enforcement {
	if advisory {
		return backend.Advisory
	}
	return backend.Enforced
}

// observedCall turns an item Codex completed without asking into a call.
func (s *session) observedCall(it threadItem, n int) (backend.ToolCallRequest, error) {
	a := observedArgs{Session: s.ID, Item: it.ID, Status: it.Status, Exit: it.Exit, Advisory: s.cfg.advisory(),
		Source: it.Source}
	switch it.Type {
	case "commandExecution":
		a.Type, a.Command = "command", s.Scrub(it.Command)
		if it.Output != nil {
			a.Output = scrub.Clip(s.Scrub(*it.Output), 16<<10)
		}
	default:
		a.Type = "file_change"
		for _, c := range it.Changes {
			rel, ok := s.rel(c.Path)
			if !ok {
				rel = "(outside the workspace)"
			}
			a.Files = append(a.Files, c.Kind.Type+" "+rel)
		}
	}
	b, err := json.Marshal(a)
	if err != nil {
		return backend.ToolCallRequest{}, fmt.Errorf("encode an observation: %w", err)
	}
	id := fmt.Sprintf("codex-%s-o%d", s.ID, n)
	live.AddCall(id, s)
	return backend.ToolCallRequest{ID: id, Name: ToolObserved, Arguments: b}, nil
}
