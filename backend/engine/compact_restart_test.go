package engine

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/llm"
	"agenthub/backend/llm/llmtest"
)

// contextEngine opens an engine over the SQLite file at path with the
// compaction tests' tools and a profile on srv, and recovers what a
// previous engine on the same file left.
func contextEngine(t *testing.T, w wire, srv *llmtest.Server, path string) *fixture {
	t.Helper()
	model := llm.AsModel(llm.NewFallback(w.client(srv), llm.Retry{Attempts: 1}, "backup-model"),
		llm.ModelConfig{Model: "primary-model"})
	wr := &writeTool{}
	f := openFixture(t, path, Config{Default: "test",
		Tools:    map[string]backend.Tool{"echo": echoTool{}, "big": bigTool{}, "write": wr},
		Profiles: map[string]Profile{"test": {Runtime: "native", Model: model, Stop: DefaultStop}}})
	f.write = wr
	return f
}

// TestCompactionSurvivesRestart, for both wire formats: a run overflows and
// compacts, and the process stops during the retry. After the restart the
// run is Failed(run_interrupted); resuming it starts a run whose first
// request carries the summary in place of the summarised turns (not the
// full history, which overflowed), and whose next compaction is the run's
// second: the count survives the restart too.
func TestCompactionSurvivesRestart(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			o := w.overflow
			srv := w.server(bigCall("c1", 10), o, text("SUMMARY-ONE"), llmtest.Turn{Hang: true},
				// after the restart: the resumed run
				o, text("SUMMARY-TWO"), text("done"))
			t.Cleanup(srv.Close)
			path := filepath.Join(t.TempDir(), "a.db")

			f := contextEngine(t, w, srv, path)
			r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "TASK-MARKER: fix the bug"})
			if err != nil {
				t.Fatal(err)
			}
			waitRequests(t, srv, 4) // the retry after the compaction hangs
			f.close(t)              // the process goes away mid-retry

			f2 := contextEngine(t, w, srv, path)
			defer f2.close(t)
			next := f2.resumeInterrupted(t, r.ID)
			f2.waitDone(t, next.ID)
			if done, _ := f2.e.Run(t.Context(), next.ID); done.State != backend.RunCompleted {
				t.Fatalf("resumed run %s %+v", done.State, done.Failure)
			}
			reqs := srv.Requests()
			if len(reqs) != 7 {
				t.Fatalf("%d requests, want 7", len(reqs))
			}
			checkModels(t, reqs)
			first := reqs[4].Raw // the resumed run's first request
			// The task appears once, in the resume prompt; the full history
			// would carry it twice.
			if !bytes.Contains(first, []byte("SUMMARY-ONE")) || bytes.Count(first, []byte("TASK-MARKER")) != 1 ||
				!bytes.Contains(first, []byte("BEGIN")) || !bytes.Contains(first, []byte("AgentHub resumed")) {
				t.Errorf("the first request after resume does not carry the compacted context:\n%s", first)
			}
			if bytes.Count(reqs[1].Raw, []byte("TASK-MARKER")) != 1 || bytes.Contains(reqs[1].Raw, []byte("SUMMARY")) {
				t.Errorf("the request that overflowed before the restart:\n%s", reqs[1].Raw)
			}
			if !bytes.Contains(reqs[5].Raw, []byte("earlier-summary")) || !bytes.Contains(reqs[5].Raw, []byte("SUMMARY-ONE")) {
				t.Errorf("the second summary does not build on the first:\n%s", reqs[5].Raw)
			}
			if !bytes.Contains(reqs[6].Raw, []byte("SUMMARY-TWO")) || bytes.Contains(reqs[6].Raw, []byte("SUMMARY-ONE")) {
				t.Errorf("the retry after the second compaction:\n%s", reqs[6].Raw)
			}
			before := f2.compactions(t, r.ID)
			if len(before) != 1 || before[0]["replacedMessages"] != 1.0 || before[0]["compaction"] != 1.0 {
				t.Errorf("run.context.compacted before the restart = %v", before)
			}
			after := f2.compactions(t, next.ID)
			if len(after) != 1 || after[0]["compaction"] != 2.0 || after[0]["summary"] != "SUMMARY-TWO" {
				t.Errorf("run.context.compacted of the resumed run = %v, want compaction 2", after)
			}
		})
	}
}

// TestRestoredCompactionsKeepTheCap: a run that used all three compactions
// before the restart does not compact again once resumed: the next
// overflow goes straight to truncation (CX4 step 4) and then fails.
func TestRestoredCompactionsKeepTheCap(t *testing.T) {
	w := wires[0]
	o := w.overflow
	srv := w.server(bigCall("c1", 50_000), o, text("S1"), o, text("S2"), o, text("S3"), llmtest.Turn{Hang: true},
		o, o, o)
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "a.db")
	f := contextEngine(t, w, srv, path)
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "TASK-MARKER: fix the bug"})
	if err != nil {
		t.Fatal(err)
	}
	waitRequests(t, srv, 8)
	f.close(t)

	f2 := contextEngine(t, w, srv, path)
	defer f2.close(t)
	next := f2.resumeInterrupted(t, r.ID)
	f2.waitDone(t, next.ID)
	done, _ := f2.e.Run(t.Context(), next.ID)
	if done.State != backend.RunFailed || done.Failure == nil || done.Failure.Code != backend.FailContextOverflow {
		t.Fatalf("resumed run %s %+v, want Failed(context_overflow)", done.State, done.Failure)
	}
	reqs := srv.Requests()
	if len(reqs) != 10 || !bytes.Contains(reqs[8].Raw, []byte("S3")) {
		t.Fatalf("%d requests, want 10 with S3 still in the 9th (no summary request after the resume)", len(reqs))
	}
	var methods []string
	for _, c := range f2.compactions(t, next.ID) {
		methods = append(methods, c["method"].(string))
	}
	if len(methods) != 1 || methods[0] != methodTruncate {
		t.Errorf("compactions of the resumed run: %v, want one truncation", methods)
	}
}

// TestCompactionSurvivesRestartWhileWaiting: the same run, not a resumed
// one. It compacts, then waits for an approval when the process stops; at
// the next start it waits again under its own id, and once approved its
// next request carries the summary, not the task it replaced.
func TestCompactionSurvivesRestartWhileWaiting(t *testing.T) {
	w := wires[1]
	srv := w.server(bigCall("c1", 10), w.overflow, text("SUMMARY-ONE"),
		llmtest.Turn{Calls: []llmtest.Call{{ID: "c2", Name: "write", Args: []string{`{"p":"a"}`}}}},
		text("done"))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "a.db")
	f := contextEngine(t, w, srv, path)
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "TASK-MARKER: fix the bug"})
	if err != nil {
		t.Fatal(err)
	}
	f.waitState(t, r.ID, backend.RunNeedsApproval)
	f.close(t)

	f2 := contextEngine(t, w, srv, path)
	defer f2.close(t)
	aps, err := f2.e.Approvals(t.Context(), r.ID)
	if err != nil || len(aps) != 1 {
		t.Fatalf("after restart: %v, %v", aps, err)
	}
	if _, err := f2.e.Decide(t.Context(), backend.Decision{DecisionID: "d1", ApprovalID: aps[0].ID,
		Kind: backend.ApproveOnce, SubjectHash: aps[0].SubjectHash}); err != nil {
		t.Fatal(err)
	}
	f2.waitState(t, r.ID, backend.RunCompleted)
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	last := reqs[4].Raw // the first request after the restart
	if !bytes.Contains(last, []byte("SUMMARY-ONE")) || bytes.Contains(last, []byte("TASK-MARKER")) ||
		!bytes.Contains(last, []byte("written")) {
		t.Errorf("the first request after the restart does not carry the compacted context:\n%s", last)
	}
}

func waitRequests(t *testing.T, srv *llmtest.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.Requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests, want %d", len(srv.Requests()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
