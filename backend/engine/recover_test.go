package engine

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"agenthub/backend"
	"agenthub/backend/store"
)

// TestRestartAppliesCommittedDecision: the process dies after a decision is
// committed and before the run leaves NeedsApproval (TestKill9Recovery hit
// this window while the run waited for a global slot). The decision is
// durable (SR3): at the next start the run applies it and completes instead
// of waiting forever with no open ticket.
func TestRestartAppliesCommittedDecision(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "a.db")
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{call("c1", "write", `{"p":"a"}`)}},
		{Text: "done"}}}
	f := newFixture(t, path, m, 4)
	r, _ := f.e.Start(ctx, StartRequest{WorkspaceID: "ws_1", Task: "t"})
	f.waitState(t, r.ID, backend.RunNeedsApproval)
	f.close(t)

	// What Decide commits, with no engine left to act on it.
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	tks, err := st.Tickets(ctx, r.ID, true)
	if err != nil || len(tks) != 1 {
		t.Fatalf("tickets = %v, %v", tks, err)
	}
	_, err = st.Do(ctx, func(tx *store.Tx) error {
		return tx.Resolve(store.StoredDecision{RunID: r.ID, Decision: backend.Decision{DecisionID: "d1",
			ApprovalID: tks[0].ID, ToolCallID: tks[0].ToolCallID, Kind: backend.ApproveOnce,
			SubjectHash: tks[0].SubjectHash, Actor: "me", Surface: backend.SurfaceCLI}}, "user")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	f2 := newFixture(t, path, m, 4)
	defer f2.close(t)
	f2.waitState(t, r.ID, backend.RunCompleted)
	f2.write.mu.Lock()
	defer f2.write.mu.Unlock()
	if f2.write.executions != 1 {
		t.Errorf("write executed %d times after the restart, want 1", f2.write.executions)
	}
}

// TestRestartWhileWaitingInLaterStep: a run that already finished a step
// stored its task message with that step. Resumed after a restart, it must
// not add the task again (it did: the transcript held the task twice and
// the model saw it repeated after the first step's results).
func TestRestartWhileWaitingInLaterStep(t *testing.T) {
	defer goleak.VerifyNone(t)
	path := filepath.Join(t.TempDir(), "a.db")
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{call("c1", "echo", `{}`)}},
		{Calls: []backend.ToolCallRequest{call("c2", "write", `{"p":"a"}`)}}, {Text: "done"}}}
	f := newFixture(t, path, m, 4)
	r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "the task"})
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
	msgs, err := f2.st.Messages(t.Context(), r.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, string(m.Role)+":"+m.ToolCallID+m.Text)
	}
	want := []string{"user:the task", "assistant:", "tool:c1{}", "assistant:", "tool:c2written", "assistant:done"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}

// TestDrainGrantsNothing: once the engine quits, a run that gives its slots
// back hands them to no one, so the runs queued behind it stay queued for
// the next start (CC4, SR12). Before, Shutdown stopped a waiting run, its
// session slot went to the next queued run of the session, and that run
// committed Preparing and Running while the engine stopped; the next start
// then failed it with run_interrupted instead of re-enqueueing it.
func TestDrainGrantsNothing(t *testing.T) {
	l := newLanes(1)
	first := l.enqueue("s", "a")
	second := l.enqueue("s", "b")
	select {
	case <-first.ready:
	default:
		t.Fatal("the first run of an idle session was not granted its slot")
	}
	if err := l.acquireGlobal(t.Context(), "a", false); err != nil {
		t.Fatal(err)
	}
	l.drain()
	l.releaseSession("s", "a")
	l.releaseGlobal()
	select {
	case <-second.ready:
		t.Fatal("a queued run got its session slot while the lanes drain")
	default:
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := l.acquireGlobal(ctx, "c", true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquireGlobal while draining = %v, want it to wait until its context ends", err)
	}
}
