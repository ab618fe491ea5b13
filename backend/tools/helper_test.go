package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agenthub/backend"
)

// fixture is one workspace in a temp dir, the tools over it and what they
// emitted and tracked.
type fixture struct {
	root    string // canonical absolute root
	ckDir   string
	tools   map[string]backend.Tool
	mu      sync.Mutex
	events  []emitted
	tracked []backend.Stopper
}

type emitted struct {
	typ     backend.EventType
	payload any
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ck := t.TempDir()
	return &fixture{root: root, ckDir: ck, tools: New(Config{CheckpointDir: ck})}
}

func (f *fixture) env() backend.ToolEnv {
	return backend.ToolEnv{RunID: "run_1", SessionID: "ses_1", WorkspaceID: "ws_1", WorkspaceRoot: f.root,
		Emit: func(typ backend.EventType, payload any) {
			f.mu.Lock()
			f.events = append(f.events, emitted{typ, payload})
			f.mu.Unlock()
		},
		Track: func(s backend.Stopper) {
			f.mu.Lock()
			f.tracked = append(f.tracked, s)
			f.mu.Unlock()
		}}
}

// write creates a file of the workspace (test setup, not through a tool).
func (f *fixture) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(f.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// read returns a file's content, or "<absent>".
func (f *fixture) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(rel)))
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// action runs a tool's Action; it must never fail for the model's mistakes.
func (f *fixture) action(t *testing.T, name, args string) *backend.GatedAction {
	t.Helper()
	a, err := f.tools[name].Action(t.Context(), f.env(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s.Action(%s): %v", name, args, err)
	}
	return a
}

// execute runs a tool's Execute; it must never return a Go error here.
func (f *fixture) execute(t *testing.T, name, args string) backend.ToolResult {
	t.Helper()
	res, err := f.tools[name].Execute(t.Context(), f.env(), backend.ToolInput{CallID: "call_1", Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s.Execute(%s): %v", name, args, err)
	}
	return res
}

// call drives a tool as the engine does when the gate allows or the user
// approves: Action, then Execute.
func (f *fixture) call(t *testing.T, name, args string) (*backend.GatedAction, backend.ToolResult) {
	t.Helper()
	a := f.action(t, name, args)
	return a, f.execute(t, name, args)
}

func (f *fixture) eventsOf(typ backend.EventType) []any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []any
	for _, e := range f.events {
		if e.typ == typ {
			out = append(out, e.payload)
		}
	}
	return out
}

// noMachinePaths fails when text holds the workspace root or the home
// directory.
func (f *fixture) noMachinePaths(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, f.root) {
		t.Errorf("%s contains the workspace root:\n%s", what, text)
	}
	if h := homeDir(); len(h) > 1 && strings.Contains(text, h+"/") {
		t.Errorf("%s contains the home directory:\n%s", what, text)
	}
}

func mustJSON(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
