package agentproc

import (
	"context"
	"encoding/json"
	"fmt"

	"agenthub/backend"
)

// Actions of a session tool's calls.
const (
	ActionStart  = "start"
	ActionReport = "report"
)

// SessionArgs are the arguments of a session tool's calls: the session and
// what to do, with the facts about the CLI the call records (each adapter
// fills those it knows).
type SessionArgs struct {
	Session string `json:"session"`
	Action  string `json:"action,omitempty"` // "" is start
	Runtime string `json:"runtime,omitempty"`
	Mode    string `json:"mode,omitempty"`
	Version string `json:"version,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
	Tested  string `json:"testedVersion,omitempty"`
}

// Starter is an adapter's session as its session tool drives it.
type Starter interface {
	// Launch starts the CLI in the run's workspace and records that it
	// runs; the message tells the model what started. On an error the
	// session must already be set to fail its next Stream.
	Launch(ctx context.Context, env backend.ToolEnv) (message string, err error)
	// Report emits the problems found in the CLI's output so far and
	// returns how many there were.
	Report(env backend.ToolEnv) int
}

// SessionTool is the one session tool every agent CLI adapter offers: it
// starts a run's CLI (the first point where the run's workspace, id, event
// log and process tracking are at hand) and records problems with its
// output. It needs no approval: it changes nothing in the workspace, and
// every action of the CLI is gated on its own.
type SessionTool struct {
	ToolSpec backend.ToolSpec
	Label    string // "Claude Code", in messages to the model
	// Lookup finds a live session by id.
	Lookup func(id string) (Starter, bool)
	// Gone is what the model is told when the session is no longer live
	// (AgentHub restarted, or the run ended).
	Gone string
}

func (t SessionTool) Spec() backend.ToolSpec { return t.ToolSpec }

func (SessionTool) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}

func (t SessionTool) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	var a SessionArgs
	if err := json.Unmarshal(in.Arguments, &a); err != nil {
		return backend.ToolResult{Content: "not a " + t.Label + " session call", IsError: true}, nil
	}
	s, ok := t.Lookup(a.Session)
	if !ok {
		return backend.ToolResult{Content: t.Gone, IsError: true}, nil
	}
	if a.Action == ActionReport {
		n := s.Report(env)
		return backend.ToolResult{Content: fmt.Sprintf("%s printed %d line(s) AgentHub could not read; "+
			"they are kept in the raw output and recorded as %s events", t.Label, n, backend.EvSchemaValidation)}, nil
	}
	msg, err := s.Launch(ctx, env)
	if err != nil {
		return backend.ToolResult{Content: t.Label + " could not be started", IsError: true}, nil
	}
	return backend.ToolResult{Content: msg}, nil
}
