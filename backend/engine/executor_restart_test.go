package engine

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"agenthub/backend"
)

// restartFixture opens an engine on the SQLite file at path under a profile
// with the given executor, and recovers what the file holds.
func restartFixture(t *testing.T, path string, exec Executor, m backend.Model, tools map[string]backend.Tool) *fixture {
	t.Helper()
	return openFixture(t, path, Config{Default: "test", Tools: tools,
		Profiles: map[string]Profile{"test": {Runtime: "native", Model: m, Stop: DefaultStop, Executor: exec}}})
}

// statuses is "id:status" for every call of a run.
func (f *fixture) statuses(t *testing.T, runID string) []string {
	t.Helper()
	calls, err := f.st.Calls(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range calls {
		out = append(out, c.ID+":"+string(c.Status))
	}
	slices.Sort(out)
	return out
}

func writeCalls(ids ...string) []backend.ToolCallRequest {
	var out []backend.ToolCallRequest
	for _, id := range ids {
		out = append(out, call(id, "w", `{"path":"`+id+`.txt","content":"x"}`))
	}
	return out
}

// TestRestartKeepsBatchExecutor: a ParallelBatchApproval run suspended on
// three calls gets one decision, then AgentHub restarts with the profile
// switched to sequential. The run replays under its own executor: the
// decision committed before the restart and a second one after it run
// nothing (partial resume: the run stays NeedsApproval, the calls
// Suspended), and the third decision replays all three together.
func TestRestartKeepsBatchExecutor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	w := newHold("w")
	tools := map[string]backend.Tool{"w": w}
	m := &script{steps: []backend.ModelResponse{{Calls: writeCalls("c1", "c2", "c3")}, {Text: "done"}}}
	f := restartFixture(t, path, ExecParallelBatch, m, tools)
	id := f.start(t)
	f.waitState(t, id, backend.RunNeedsApproval)
	f.decide(t, id, "c1", backend.ApproveOnce)
	time.Sleep(200 * time.Millisecond)
	if got := w.executed(); len(got) != 0 {
		t.Fatalf("batch replayed before every call had a decision: %v", got)
	}
	f.close(t)

	w.hold = true // the replays block until all three run at once
	f2 := restartFixture(t, path, ExecSequential, m, tools)
	defer f2.close(t)
	time.Sleep(200 * time.Millisecond)
	f2.decide(t, id, "c2", backend.ApproveOnce)
	time.Sleep(300 * time.Millisecond)
	if got := w.executed(); len(got) != 0 || w.now.Load() != 0 {
		t.Fatalf("after the restart a decision replayed before the batch was complete: executed %v, running %d",
			got, w.now.Load())
	}
	if r, _ := f2.e.Run(t.Context(), id); r.State != backend.RunNeedsApproval {
		t.Fatalf("run is %s, want NeedsApproval", r.State)
	}
	want := []string{"c1:Suspended", "c2:Suspended", "c3:Suspended"}
	if got := f2.statuses(t, id); !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	f2.decide(t, id, "c3", backend.ApproveOnce)
	eventually(t, "three concurrent replays", func() bool { return w.peak.Load() == 3 })
	close(w.release)
	f2.waitState(t, id, backend.RunCompleted)
	if got := w.executed(); len(got) != 3 {
		t.Errorf("executed %v", got)
	}
}

// TestRestartKeepsStreamingExecutor: a ParallelStreaming run suspended on
// two calls restarts under a profile switched to sequential; after the
// restart the first decision replays at once and, while it still runs,
// the second replays beside it (the sequential path would hold the second
// decision until the first replay ended). The run is Applying meanwhile.
func TestRestartKeepsStreamingExecutor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	w := newHold("w")
	tools := map[string]backend.Tool{"w": w}
	m := &script{steps: []backend.ModelResponse{{Calls: writeCalls("c1", "c2")}, {Text: "done"}}}
	f := restartFixture(t, path, ExecParallelStreaming, m, tools)
	id := f.start(t)
	f.waitState(t, id, backend.RunNeedsApproval)
	f.close(t)

	w.hold = true
	f2 := restartFixture(t, path, ExecSequential, m, tools)
	defer f2.close(t)
	f2.decide(t, id, "c1", backend.ApproveOnce)
	eventually(t, "the first replay", func() bool { return w.now.Load() == 1 })
	f2.waitState(t, id, backend.RunApplying)
	if got := f2.statuses(t, id); !slices.Equal(got, []string{"c1:Running", "c2:Suspended"}) {
		t.Fatalf("calls %v", got)
	}
	f2.decide(t, id, "c2", backend.ApproveOnce)
	eventually(t, "two concurrent replays", func() bool { return w.peak.Load() == 2 })
	close(w.release)
	f2.waitState(t, id, backend.RunCompleted)
	if got := w.executed(); len(got) != 2 {
		t.Errorf("executed %v", got)
	}
}
