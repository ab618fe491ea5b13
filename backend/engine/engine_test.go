package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"agenthub/backend"
	"agenthub/backend/store"
)

// script is a scripted model: one response per step, in order.
type script struct {
	mu    sync.Mutex
	steps []backend.ModelResponse
	calls int
}

func (s *script) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	s.mu.Lock()
	i := s.calls
	s.calls++
	s.mu.Unlock()
	if i >= len(s.steps) {
		return backend.ModelResponse{Text: "done"}, nil
	}
	r := s.steps[i]
	if r.Text != "" {
		delta(r.Text)
	}
	return r, ctx.Err()
}

type echoTool struct{}

func (echoTool) Spec() backend.ToolSpec { return backend.ToolSpec{Name: "echo"} }
func (echoTool) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}
func (echoTool) Execute(_ context.Context, _ backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	return backend.ToolResult{Content: string(in.Arguments)}, nil
}

// writeTool is gated as a patch; executions counts real executions.
type writeTool struct {
	mu         sync.Mutex
	executions int
}

func (*writeTool) Spec() backend.ToolSpec { return backend.ToolSpec{Name: "write"} }
func (*writeTool) Action(_ context.Context, _ backend.ToolEnv, args json.RawMessage) (*backend.GatedAction, error) {
	return &backend.GatedAction{Kind: backend.ActionPatch, Title: "write", Risk: backend.RiskMedium,
		Subject: args, Preview: args}, nil
}
func (w *writeTool) Execute(context.Context, backend.ToolEnv, backend.ToolInput) (backend.ToolResult, error) {
	w.mu.Lock()
	w.executions++
	w.mu.Unlock()
	return backend.ToolResult{Content: "written"}, nil
}

func call(id, name, args string) backend.ToolCallRequest {
	return backend.ToolCallRequest{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

type fixture struct {
	st    *store.Store
	e     *Engine
	path  string
	write *writeTool
}

func newFixture(t *testing.T, path string, model backend.Model, limit int) *fixture {
	t.Helper()
	w := &writeTool{}
	f := openFixture(t, path, Config{GlobalLimit: limit, Default: "test",
		Tools:    map[string]backend.Tool{"echo": echoTool{}, "write": w},
		Profiles: map[string]Profile{"test": {Runtime: "native", Model: model, Stop: DefaultStop}}})
	f.write = w
	return f
}

// openFixture opens the SQLite file at path, adds workspace ws_1 unless the
// file already holds it, and starts an engine over it with cfg (whose Store
// it sets), recovering what a previous engine on the same file left. Every
// fixture of this package's tests is built here; they differ only in cfg.
func openFixture(t *testing.T, path string, cfg Config) *fixture {
	t.Helper()
	st, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Workspace(t.Context(), "ws_1"); err != nil {
		if err := st.AddWorkspace(t.Context(), backend.Workspace{ID: "ws_1", Name: "w", Path: "/abs/w",
			DisplayPath: "~/w"}, store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Store = st
	f := &fixture{st: st, path: path, e: New(cfg)}
	if err := f.e.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) close(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Close(); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) waitState(t *testing.T, runID string, want backend.RunState) backend.RunSummary {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := f.e.Run(t.Context(), runID)
		if err != nil {
			t.Fatal(err)
		}
		if r.State == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s, want %s", runID, r.State, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *fixture) types(t *testing.T, runID string) []backend.EventType {
	t.Helper()
	evs, err := f.e.Events(t.Context(), runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []backend.EventType
	for i, ev := range evs {
		if ev.Sequence != int64(i+1) {
			t.Fatalf("event %d has sequence %d (gap)", i, ev.Sequence)
		}
		out = append(out, ev.Type)
	}
	return out
}

func TestHappyPath(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), &script{steps: []backend.ModelResponse{{Text: "hello"}}}, 4)
	defer f.close(t)
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "say hi", Actor: "me",
		Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	got := f.waitState(t, r.ID, backend.RunCompleted)
	if got.DoneReason != backend.DoneNatural {
		t.Errorf("done reason %q", got.DoneReason)
	}
	want := []backend.EventType{backend.EvRunCreated, backend.EvRunStatusChanged, backend.EvRunStatusChanged,
		backend.EvRunStatusChanged, backend.EvRunStarted, backend.EvMessageDelta, backend.EvMessageCompleted,
		backend.EvCheckpointCreated, backend.EvRunCompleted}
	if diff := cmp.Diff(want, f.types(t, r.ID)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestToolRoundTripAndTranscript(t *testing.T) {
	defer goleak.VerifyNone(t)
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{call("c1", "echo", `{"x":1}`)}},
		{Text: "ok"}}}
	f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), m, 4)
	defer f.close(t)
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	f.waitState(t, r.ID, backend.RunCompleted)
	msgs, err := f.st.Messages(t.Context(), r.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range msgs {
		roles = append(roles, string(m.Role)+":"+m.ToolCallID)
	}
	if diff := cmp.Diff([]string{"user:", "assistant:", "tool:c1", "assistant:"}, roles); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}

func TestApprovalAndDuplicateAndStale(t *testing.T) {
	defer goleak.VerifyNone(t)
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{
		call("c1", "write", `{"p":"a"}`), call("c2", "echo", `{}`)}}, {Text: "done"}}}
	f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), m, 4)
	defer f.close(t)
	r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	f.waitState(t, r.ID, backend.RunNeedsApproval)
	aps, err := f.e.Approvals(t.Context(), r.ID)
	if err != nil || len(aps) != 1 {
		t.Fatalf("approvals = %v, %v", aps, err)
	}
	a := aps[0]
	_, err = f.e.Decide(t.Context(), backend.Decision{DecisionID: "d0", ApprovalID: a.ID, Kind: backend.ApproveOnce,
		SubjectHash: "sha256:old"})
	if backend.CodeOf(err) != backend.CodeApprovalStale {
		t.Fatalf("stale decision: %v", err)
	}
	d := backend.Decision{DecisionID: "d1", ApprovalID: a.ID, Kind: backend.ApproveOnce, SubjectHash: a.SubjectHash,
		Actor: "me", Surface: backend.SurfaceCLI}
	for range 2 {
		if _, err := f.e.Decide(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	d.DecisionID = "d2"
	if _, err := f.e.Decide(t.Context(), d); backend.CodeOf(err) != backend.CodeApprovalAlreadyResolved {
		t.Fatalf("second decision: %v", err)
	}
	f.waitState(t, r.ID, backend.RunCompleted)
	if f.write.executions != 1 {
		t.Errorf("write executed %d times, want 1", f.write.executions)
	}
	if m.calls != 2 {
		t.Errorf("model called %d times, want 2", m.calls)
	}
}

func TestRestartWhileWaitingKeepsRunID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{call("c1", "write", `{"p":"a"}`)}},
		{Text: "done"}}}
	f := newFixture(t, path, m, 4)
	r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	f.waitState(t, r.ID, backend.RunNeedsApproval)
	f.close(t)

	f2 := newFixture(t, path, m, 4)
	defer f2.close(t)
	aps, _ := f2.e.Approvals(t.Context(), r.ID)
	if len(aps) != 1 {
		t.Fatalf("after restart: %d tickets", len(aps))
	}
	if _, err := f2.e.Decide(t.Context(), backend.Decision{DecisionID: "d1", ApprovalID: aps[0].ID,
		Kind: backend.ApproveOnce, SubjectHash: aps[0].SubjectHash}); err != nil {
		t.Fatal(err)
	}
	f2.waitState(t, r.ID, backend.RunCompleted)
	created := 0
	for _, ty := range f2.types(t, r.ID) {
		if ty == backend.EvRunCreated || ty == backend.EvRunStarted {
			created++
		}
	}
	if created != 2 {
		t.Errorf("run.created + run.started = %d, want 2 (same run id, no new ones)", created)
	}
}

func TestRejectAndStopAndCancelIdempotent(t *testing.T) {
	defer goleak.VerifyNone(t)
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{call("c1", "write", `{"p":"a"}`)}}}}
	f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), m, 4)
	defer f.close(t)
	r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	f.waitState(t, r.ID, backend.RunNeedsApproval)
	aps, _ := f.e.Approvals(t.Context(), r.ID)
	if _, err := f.e.Decide(t.Context(), backend.Decision{DecisionID: "d1", ApprovalID: aps[0].ID,
		Kind: backend.RejectAndStop, SubjectHash: aps[0].SubjectHash}); err != nil {
		t.Fatal(err)
	}
	got := f.waitState(t, r.ID, backend.RunCancelled)
	if got.DoneReason != backend.DoneApprovalRejected {
		t.Errorf("done reason %q", got.DoneReason)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); f.e.Cancel(t.Context(), r.ID) }()
	}
	wg.Wait()
	n := 0
	for _, ty := range f.types(t, r.ID) {
		if ty.Terminal() {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d terminal events", n)
	}
}

func TestLanesFiftyRunsTenSessions(t *testing.T) {
	defer goleak.VerifyNone(t)
	m := &script{steps: nil} // every step answers "done"
	f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), m, 4)
	defer f.close(t)
	var mu sync.Mutex
	var violations []string
	f.e.lanes.observe = func(active int, busy map[string]int) {
		if active > 4 {
			mu.Lock()
			violations = append(violations, "global")
			mu.Unlock()
		}
		for s, n := range busy {
			if n > 1 {
				violations = append(violations, s)
			}
		}
	}
	var sessions []string
	var ids []string
	for i := range 50 {
		req := StartRequest{WorkspaceID: "ws_1", Task: "t"}
		if i >= 10 {
			req.SessionID = sessions[i%10]
		}
		r, err := f.e.Start(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if i < 10 {
			sessions = append(sessions, r.SessionID)
		}
		ids = append(ids, r.ID)
	}
	for _, id := range ids {
		f.waitState(t, id, backend.RunCompleted)
	}
	if len(violations) > 0 {
		t.Errorf("lane violations: %v", violations)
	}
}

func TestNoQueueRefusesBusySession(t *testing.T) {
	defer goleak.VerifyNone(t)
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{call("c1", "write", `{}`)}}}}
	f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), m, 4)
	defer f.close(t)
	r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	f.waitState(t, r.ID, backend.RunNeedsApproval)
	_, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", SessionID: r.SessionID, Task: "t2", NoQueue: true})
	if backend.CodeOf(err) != backend.CodeActiveRunExists {
		t.Fatalf("no-queue start: %v", err)
	}
	q, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", SessionID: r.SessionID, Task: "t2"})
	if err != nil || q.State != backend.RunAccepted || !q.Queued {
		t.Fatalf("queued start: %+v %v", q, err)
	}
	if got, _ := f.e.Cancel(t.Context(), q.ID); got.State != backend.RunCancelled {
		t.Errorf("cancel queued: %s", got.State)
	}
	if got, _ := f.e.Cancel(t.Context(), r.ID); got.State != backend.RunCancelled {
		t.Errorf("cancel waiting: %s", got.State)
	}
}

func TestInvalidStopConfigCreatesNoRun(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), &script{}, 4)
	defer f.close(t)
	f.e.AddProfile("bad", Profile{Model: &script{}, Stop: StopConfig{ContentMatch: "("}})
	if _, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Profile: "bad", Task: "t"}); err == nil {
		t.Fatal("invalid stop config accepted")
	}
	if rs, _ := f.e.Runs(t.Context(), store.RunFilter{}); len(rs) != 0 {
		t.Errorf("%d runs exist", len(rs))
	}
}
