package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"agenthub/backend"
	"agenthub/backend/store"
)

// holdTool asks (a write of the path in its arguments), counts its
// executions and how many run at once, and blocks while hold is set until
// release is closed.
type holdTool struct {
	name    string
	mu      sync.Mutex
	runs    []string
	now     atomic.Int32
	peak    atomic.Int32
	hold    bool
	release chan struct{}
}

func newHold(name string) *holdTool { return &holdTool{name: name, release: make(chan struct{})} }

func (g *holdTool) Spec() backend.ToolSpec { return backend.ToolSpec{Name: g.name} }
func (g *holdTool) Action(_ context.Context, _ backend.ToolEnv, args json.RawMessage) (*backend.GatedAction, error) {
	var a struct{ Path, Content string }
	_ = json.Unmarshal(args, &a)
	subject, _ := json.Marshal(map[string]string{"kind": "write", "path": a.Path, "content": a.Content})
	return &backend.GatedAction{Kind: backend.ActionWrite, Title: "write " + a.Path, Risk: backend.RiskMedium,
		Subject: subject, Preview: args}, nil
}
func (g *holdTool) Execute(ctx context.Context, _ backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	n := g.now.Add(1)
	defer g.now.Add(-1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	if g.hold {
		select {
		case <-g.release:
		case <-ctx.Done():
			return backend.ToolResult{}, ctx.Err()
		}
	}
	g.mu.Lock()
	g.runs = append(g.runs, in.CallID)
	g.mu.Unlock()
	return backend.ToolResult{Content: "wrote " + in.CallID}, nil
}

func (g *holdTool) executed() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.runs...)
}

// barrierTool is not gated; each call waits until all n calls of the batch
// have started (or a second passes) and says whether they met, so only a
// concurrent executor makes them meet. Later calls finish first.
type barrierTool struct {
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
	// alone is how long a call waits for the others before it gives up;
	// 0 means 30 s. Calls that run together meet at once, so the parallel
	// tests never wait for it, while on a loaded machine the last goroutine
	// of a batch may take well over a second to arrive. The sequential
	// control sets it short: there the calls can never meet.
	alone time.Duration
}

func (b *barrierTool) Spec() backend.ToolSpec { return backend.ToolSpec{Name: "barrier"} }
func (b *barrierTool) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}
func (b *barrierTool) Execute(_ context.Context, _ backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	var a struct{ Delay int }
	_ = json.Unmarshal(in.Arguments, &a)
	wait := b.alone
	if wait == 0 {
		wait = 30 * time.Second
	}
	select {
	case <-b.all:
		time.Sleep(time.Duration(a.Delay) * time.Millisecond)
		return backend.ToolResult{Content: "met"}, nil
	case <-time.After(wait):
		return backend.ToolResult{Content: "alone"}, nil
	}
}

func execFixture(t *testing.T, exec Executor, m backend.Model, tools map[string]backend.Tool) *fixture {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddWorkspace(t.Context(), backend.Workspace{ID: "ws_1", Name: "w", Path: "/abs/w", DisplayPath: "~/w"},
		store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, write: &writeTool{}}
	f.e = New(Config{Store: st, Default: "test", Tools: tools,
		Profiles: map[string]Profile{"test": {Runtime: "native", Model: m, Stop: DefaultStop, Executor: exec}}})
	t.Cleanup(func() { f.close(t) })
	return f
}

func (f *fixture) start(t *testing.T) string {
	t.Helper()
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// decide answers the pending approval of one call.
func (f *fixture) decide(t *testing.T, runID, callID string, kind backend.DecisionKind) {
	t.Helper()
	aps, err := f.e.Approvals(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range aps {
		if a.ToolCallID == callID {
			if _, err := f.e.Decide(t.Context(), backend.Decision{ApprovalID: a.ID, Kind: kind,
				SubjectHash: a.SubjectHash, Reason: "r", Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no pending approval for %s in %v", callID, aps)
}

// results are the call ids of run.tool.result events, in sequence order,
// with their content.
func (f *fixture) results(t *testing.T, runID string) [][2]string {
	t.Helper()
	evs, err := f.e.Events(t.Context(), runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, ev := range evs {
		if ev.Type == backend.EvToolResult {
			var p struct {
				ToolCallID string `json:"toolCallId"`
				Content    string `json:"content"`
			}
			_ = json.Unmarshal(ev.Payload, &p)
			out = append(out, [2]string{p.ToolCallID, p.Content})
		}
	}
	return out
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestParallelExecutesTogetherCommitsInOrder: unapproved calls of one step
// run concurrently (they meet at the barrier) and their results are
// committed in call order though the last finishes first (EX2).
func TestParallelExecutesTogetherCommitsInOrder(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the fixture's own cleanup
	for _, exec := range []Executor{ExecParallelBatch, ExecParallelStreaming} {
		t.Run(string(exec), func(t *testing.T) {
			b := &barrierTool{n: 3, all: make(chan struct{})}
			m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{
				call("c1", "barrier", `{"delay":200}`), call("c2", "barrier", `{"delay":100}`), call("c3", "barrier", `{}`)}}}}
			f := execFixture(t, exec, m, map[string]backend.Tool{"barrier": b})
			id := f.start(t)
			f.waitState(t, id, backend.RunCompleted)
			want := [][2]string{{"c1", "met"}, {"c2", "met"}, {"c3", "met"}}
			if d := cmp.Diff(want, f.results(t, id)); d != "" {
				t.Errorf("results (-want +got):\n%s", d)
			}
		})
	}
}

// TestSequentialDoesNotMeet is the control: the sequential executor runs
// one call at a time.
func TestSequentialDoesNotMeet(t *testing.T) {
	b := &barrierTool{n: 2, all: make(chan struct{}), alone: time.Second}
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{
		call("c1", "barrier", `{}`), call("c2", "barrier", `{}`)}}}}
	f := execFixture(t, ExecSequential, m, map[string]backend.Tool{"barrier": b})
	id := f.start(t)
	f.waitState(t, id, backend.RunCompleted)
	if got := f.results(t, id); got[0][1] != "alone" {
		t.Errorf("sequential calls met: %v", got)
	}
}

// TestBatchApprovalReplaysTogether is scenario 4: with c1 and c2 asking
// and c3 not, approving c1 replays nothing until c2 is decided; then both
// replay concurrently, and the model is called twice.
func TestBatchApprovalReplaysTogether(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the fixture's own cleanup
	w := newHold("w")
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{
		call("c1", "w", `{"path":"a"}`), call("c2", "w", `{"path":"b"}`), call("c3", "echo", `{}`)}}, {Text: "done"}}}
	f := execFixture(t, ExecParallelBatch, m, map[string]backend.Tool{"w": w, "echo": echoTool{}})
	id := f.start(t)
	f.waitState(t, id, backend.RunNeedsApproval)
	f.decide(t, id, "c1", backend.ApproveOnce)
	time.Sleep(300 * time.Millisecond)
	if got := w.executed(); len(got) != 0 {
		t.Fatalf("replayed before the batch was decided: %v", got)
	}
	if r, _ := f.e.Run(t.Context(), id); r.State != backend.RunNeedsApproval {
		t.Fatalf("run is %s while c2 waits", r.State)
	}
	w.hold = true
	f.decide(t, id, "c2", backend.ApproveOnce)
	eventually(t, "both replays running together", func() bool { return w.peak.Load() == 2 })
	close(w.release)
	f.waitState(t, id, backend.RunCompleted)
	m.mu.Lock()
	calls := m.calls
	m.mu.Unlock()
	if calls != 2 {
		t.Errorf("model called %d times, want 2", calls)
	}
	want := [][2]string{{"c3", "{}"}, {"c1", "wrote c1"}, {"c2", "wrote c2"}}
	if d := cmp.Diff(want, f.results(t, id)); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
}

// TestStreamingReplaysAtOnce: approving c1 replays it at once, while c2
// still waits; c2's decision, arriving while c1's replay runs, starts its
// replay beside it (EX3).
func TestStreamingReplaysAtOnce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the fixture's own cleanup
	w := newHold("w")
	w.hold = true
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{
		call("c1", "w", `{"path":"a"}`), call("c2", "w", `{"path":"b"}`)}}, {Text: "done"}}}
	f := execFixture(t, ExecParallelStreaming, m, map[string]backend.Tool{"w": w})
	id := f.start(t)
	f.waitState(t, id, backend.RunNeedsApproval)
	f.decide(t, id, "c1", backend.ApproveOnce)
	eventually(t, "c1 replaying", func() bool { return w.now.Load() == 1 })
	if r, _ := f.e.Run(t.Context(), id); r.State != backend.RunApplying {
		t.Errorf("run is %s during c1's replay, want Applying", r.State)
	}
	f.decide(t, id, "c2", backend.ApproveOnce)
	eventually(t, "c2 replaying beside c1", func() bool { return w.peak.Load() == 2 })
	close(w.release)
	f.waitState(t, id, backend.RunCompleted)
	if got := w.executed(); len(got) != 2 {
		t.Errorf("executions %v", got)
	}
}

// TestStreamingPartialResumeWaitsAgain: c1 approved and replayed, the run
// returns to NeedsApproval for c2 without inference (SR8).
func TestStreamingPartialResumeWaitsAgain(t *testing.T) {
	w := newHold("w")
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{
		call("c1", "w", `{"path":"a"}`), call("c2", "w", `{"path":"b"}`)}}, {Text: "done"}}}
	f := execFixture(t, ExecParallelStreaming, m, map[string]backend.Tool{"w": w})
	id := f.start(t)
	f.waitState(t, id, backend.RunNeedsApproval)
	f.decide(t, id, "c1", backend.ApproveOnce)
	eventually(t, "c1 executed", func() bool { return len(w.executed()) == 1 })
	f.waitState(t, id, backend.RunNeedsApproval)
	f.decide(t, id, "c2", backend.RejectAndTell)
	f.waitState(t, id, backend.RunCompleted)
	got := f.results(t, id)
	if len(got) != 2 || got[1] != [2]string{"c2", "rejected by the reviewer: r"} {
		t.Errorf("results %v", got)
	}
}

// TestBatchConflictFailsTheLaterCall is EX2: two approved writes of the
// same file in one batch; the later one in call order fails with a
// conflict and run.patch.rejected{conflict}, whatever the arrival order.
func TestBatchConflictFailsTheLaterCall(t *testing.T) {
	w := newHold("w")
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{
		call("c1", "w", `{"path":"same.txt","content":"one"}`), call("c2", "w", `{"path":"same.txt","content":"two"}`)}}, {Text: "done"}}}
	f := execFixture(t, ExecParallelBatch, m, map[string]backend.Tool{"w": w})
	id := f.start(t)
	f.waitState(t, id, backend.RunNeedsApproval)
	f.decide(t, id, "c2", backend.ApproveOnce)
	f.decide(t, id, "c1", backend.ApproveOnce)
	f.waitState(t, id, backend.RunCompleted)
	if got := w.executed(); len(got) != 1 || got[0] != "c1" {
		t.Errorf("executed %v, want c1 only", got)
	}
	res := f.results(t, id)
	if len(res) != 2 || res[1][0] != "c2" || res[1][1][:len(conflictResult)] != conflictResult {
		t.Errorf("results %v", res)
	}
	evs, _ := f.e.Events(t.Context(), id, 0, 0)
	found := false
	for _, ev := range evs {
		found = found || ev.Type == backend.EvPatchRejected && jsonField(ev.Payload, "reason") == "conflict"
	}
	if !found {
		t.Errorf("no run.patch.rejected{conflict}")
	}
}

func jsonField(b json.RawMessage, k string) string {
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	s, _ := m[k].(string)
	return s
}

// TestStreamingRejectAndStopStopsRunningReplays: reject-and-stop takes
// effect at once, cancelling the replay that runs.
func TestStreamingRejectAndStopStopsRunningReplays(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the fixture's own cleanup
	w := newHold("w")
	w.hold = true
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{
		call("c1", "w", `{"path":"a"}`), call("c2", "w", `{"path":"b"}`)}}}}
	f := execFixture(t, ExecParallelStreaming, m, map[string]backend.Tool{"w": w})
	id := f.start(t)
	f.waitState(t, id, backend.RunNeedsApproval)
	f.decide(t, id, "c1", backend.ApproveOnce)
	eventually(t, "c1 replaying", func() bool { return w.now.Load() == 1 })
	f.decide(t, id, "c2", backend.RejectAndStop)
	r := f.waitState(t, id, backend.RunCancelled)
	if r.DoneReason != backend.DoneApprovalRejected {
		t.Errorf("done reason %q", r.DoneReason)
	}
	if got := w.executed(); len(got) != 0 {
		t.Errorf("the stopped replay finished: %v", got)
	}
}
