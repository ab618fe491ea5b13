package tools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/engine"
	"agenthub/backend/store"
)

// script is a scripted model: one response per step.
type script struct {
	mu    sync.Mutex
	steps []backend.ModelResponse
	calls int
}

func (s *script) Stream(ctx context.Context, _ backend.ModelRequest, _ func(string)) (backend.ModelResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.calls
	s.calls++
	if i >= len(s.steps) {
		return backend.ModelResponse{Text: "done"}, ctx.Err()
	}
	return s.steps[i], ctx.Err()
}

// driven runs one tool call through the real engine and default gate.
type driven struct {
	e   *engine.Engine
	st  *store.Store
	run backend.RunSummary
}

func drive(t *testing.T, f *fixture, name, args string) *driven {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddWorkspace(t.Context(), backend.Workspace{ID: "ws_1", Name: "w", Path: f.root, DisplayPath: "w"},
		store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{{ID: "c1", Name: name,
		Arguments: json.RawMessage(args)}}}}}
	e := engine.New(engine.Config{Store: st, Tools: f.tools, Default: "test",
		Profiles: map[string]engine.Profile{"test": {Runtime: "native", Model: m, Stop: engine.DefaultStop}},
		Roots:    func(string) (string, error) { return f.root, nil }})
	if err := e.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Shutdown(ctx)
		_ = st.Close()
	})
	run, err := e.Start(t.Context(), engine.StartRequest{WorkspaceID: "ws_1", Task: "t", Actor: "me", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	return &driven{e: e, st: st, run: run}
}

func (d *driven) wait(t *testing.T, want backend.RunState) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r, err := d.e.Run(t.Context(), d.run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run is %s, want %s", r.State, want)
		}
	}
}

func (d *driven) approve(t *testing.T) backend.ApprovalRequest {
	t.Helper()
	d.wait(t, backend.RunNeedsApproval)
	aps, err := d.e.Approvals(t.Context(), d.run.ID)
	if err != nil || len(aps) != 1 {
		t.Fatalf("approvals = %v, %v", aps, err)
	}
	if _, err := d.e.Decide(t.Context(), backend.Decision{DecisionID: "d1", ApprovalID: aps[0].ID,
		Kind: backend.ApproveOnce, SubjectHash: aps[0].SubjectHash, Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	return aps[0]
}

// toolResult is the transcript's tool message.
func (d *driven) toolResult(t *testing.T) backend.Message {
	t.Helper()
	msgs, err := d.st.Messages(t.Context(), d.run.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Role == backend.RoleTool {
			return m
		}
	}
	t.Fatal("no tool message")
	return backend.Message{}
}

// TestEngineApprovesThenApplies: through the real engine, an edit waits for
// approval, then applies.
func TestEngineApprovesThenApplies(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.txt", "v1\n")
	d := drive(t, f, EditFile, `{"path":"a.txt","old_string":"v1","new_string":"v2"}`)
	ap := d.approve(t)
	if ap.Kind != backend.ActionPatch || !strings.Contains(string(ap.Preview), `-v1\n+v2`) {
		t.Errorf("ticket %s: %s", ap.Kind, ap.Preview)
	}
	d.wait(t, backend.RunCompleted)
	if got := f.read(t, "a.txt"); got != "v2\n" {
		t.Errorf("a.txt = %q", got)
	}
	if m := d.toolResult(t); m.IsError || !strings.Contains(m.Text, "edit_file: updated a.txt") {
		t.Errorf("tool message %+v", m)
	}
}

// TestEngineCatchesDrift: a file changed while the ticket was open is not
// written (the engine's re-verification sees another subject).
func TestEngineCatchesDrift(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.txt", "v1\n")
	d := drive(t, f, WriteFile, `{"path":"a.txt","content":"agent\n"}`)
	d.wait(t, backend.RunNeedsApproval)
	f.write(t, "a.txt", "user\n")
	d.approve(t)
	d.wait(t, backend.RunCompleted)
	if got := f.read(t, "a.txt"); got != "user\n" {
		t.Errorf("a.txt = %q", got)
	}
	if m := d.toolResult(t); !m.IsError {
		t.Errorf("tool message %+v, want an error", m)
	}
}

// TestEngineDeniesSecrets: the default gate denies a secret read and the run
// fails with permission_denied.
func TestEngineDeniesSecrets(t *testing.T) {
	f := newFixture(t)
	f.write(t, ".env", "KEY=1\n")
	d := drive(t, f, ReadFile, `{"path":".env"}`)
	d.wait(t, backend.RunFailed)
	if m := d.toolResult(t); !m.IsError || strings.Contains(m.Text, "KEY=1") {
		t.Errorf("tool message %+v", m)
	}
}
