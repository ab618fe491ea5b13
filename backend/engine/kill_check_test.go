//go:build unix

package engine

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/store"
)

// checkAfterKill reopens the killed child's database and checks, in order:
//   - before recovery: PRAGMA integrity_check is ok; the audit chain verifies;
//     every event the child reported is stored with the same id; per run the
//     sequences are 1..N with no hole, N = runs.last_seq, run.created first,
//     and a terminal event exists exactly when the run is terminal, last;
//   - after [Engine.Recover] (SR10–SR12): runs that were Preparing, Running or
//     Applying are Failed(run_interrupted) with every call paired; waiting runs
//     are still NeedsApproval, each Suspended call with its open ticket and
//     nothing else unpaired, unless a decision was committed before the kill
//     and not yet applied: then the run goes on (SR3); queued runs were
//     re-enqueued, not failed; terminal runs did not change;
//   - when final: after approving every ticket, every run ends, and the whole
//     database passes checkFinal.
func checkAfterKill(t *testing.T, path string, reported []evRef, final bool) killStats {
	ctx := t.Context()
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	}()
	if err := st.Integrity(ctx); err != nil {
		t.Fatalf("after the kill: %v", err)
	}
	pre, decided, stats := checkStored(t, st, reported)
	e := killEngine(st, &script{}, nil, slog.New(slog.NewTextHandler(tlog{t}, &slog.HandlerOptions{
		Level: slog.LevelWarn})))
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := e.Shutdown(sctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	if err := e.Recover(ctx); err != nil {
		t.Fatalf("recover: %v", err)
	}
	checkRecovered(t, st, pre, decided)
	if final && !t.Failed() {
		driveToEnd(t, e, st)
		checkFinal(t, st)
	}
	return stats
}

type evKey struct {
	run string
	seq int64
}

// checkStored also returns the waiting runs holding a decision that was
// committed but not applied when the child died.
func checkStored(t *testing.T, st *store.Store, reported []evRef) (pre map[string]store.RunRecord,
	decided map[string]bool, s killStats) {
	t.Helper()
	ctx := t.Context()
	runs, err := st.Runs(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	pre, decided = map[string]store.RunRecord{}, map[string]bool{}
	ids := map[evKey]string{}
	for _, r := range runs {
		pre[r.ID] = r
		for _, ev := range runEvents(t, st, r) {
			ids[evKey{r.ID, ev.Sequence}] = ev.ID
		}
		switch r.State {
		case backend.RunPreparing, backend.RunRunning, backend.RunApplying:
			s.interrupted++
		case backend.RunNeedsApproval:
			s.waiting++
			decided[r.ID] = hasDecided(t, st, r)
		case backend.RunCreated, backend.RunPlanned, backend.RunAccepted:
			s.queued++
		default:
			s.closed++
		}
	}
	s.runs, s.events = len(runs), len(ids)
	missing := 0
	for _, ref := range reported {
		if got := ids[evKey{ref.run, ref.seq}]; got != ref.id {
			if missing < 5 {
				t.Errorf("event %s #%d (%s) was reported committed; stored: %q", ref.run, ref.seq, ref.id, got)
			}
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d reported events are missing", missing, len(reported))
	}
	if broken, _, err := st.VerifyAudit(ctx); err != nil || broken != 0 {
		t.Errorf("audit chain: broken at %d, %v", broken, err)
	}
	return pre, decided, s
}

// hasDecided reports whether a waiting run has a Suspended call whose ticket
// is already resolved; a closed ticket there is an error.
func hasDecided(t *testing.T, st *store.Store, r store.RunRecord) bool {
	t.Helper()
	calls, err := st.Calls(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range calls {
		if c.Status != backend.CallSuspended {
			continue
		}
		tk, err := st.Ticket(t.Context(), c.TicketID)
		switch {
		case err != nil:
			t.Errorf("waiting run %s: call %s: %v", r.ID, c.ID, err)
		case tk.Status == "resolved":
			found = true
		case tk.Status != "pending":
			t.Errorf("waiting run %s: Suspended call %s has a %s ticket", r.ID, c.ID, tk.Status)
		}
	}
	return found
}

// runEvents reads a run's events and checks EV1 and the sequence rules. The
// run must not be moving while it is read.
func runEvents(t *testing.T, st *store.Store, r store.RunRecord) []backend.Event {
	t.Helper()
	evs, err := st.Events(t.Context(), r.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.Sequence != int64(i+1) {
			t.Errorf("run %s: event %d has sequence %d (a hole or a duplicate)", r.ID, i+1, ev.Sequence)
			return evs
		}
	}
	if int64(len(evs)) != r.LastSeq {
		t.Errorf("run %s: %d events stored, last_seq %d", r.ID, len(evs), r.LastSeq)
	}
	if len(evs) == 0 || evs[0].Type != backend.EvRunCreated {
		t.Errorf("run %s: the first event is not run.created", r.ID)
		return evs
	}
	terminals := 0
	for _, ev := range evs {
		if ev.Type.Terminal() {
			terminals++
		}
	}
	last := evs[len(evs)-1].Type
	switch {
	case r.State.Terminal() && (terminals != 1 || !last.Terminal()):
		t.Errorf("run %s is %s with %d terminal events, last %s", r.ID, r.State, terminals, last)
	case !r.State.Terminal() && terminals != 0:
		t.Errorf("run %s is %s but has a terminal event", r.ID, r.State)
	}
	return evs
}

func checkRecovered(t *testing.T, st *store.Store, pre map[string]store.RunRecord, decided map[string]bool) {
	t.Helper()
	for id, p := range pre {
		r, err := st.Run(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		switch p.State {
		case backend.RunPreparing, backend.RunRunning, backend.RunApplying:
			if r.State != backend.RunFailed || r.FailureCode != backend.FailRunInterrupted {
				t.Errorf("run %s was %s at the kill; after recovery %s(%s), want Failed(run_interrupted)", id,
					p.State, r.State, r.FailureCode)
				continue
			}
			checkPaired(t, st, r, runEvents(t, st, r), nil)
		case backend.RunNeedsApproval:
			if decided[id] { // the recovered run applies the decision now; driveToEnd checks it ends
				if r.State == backend.RunFailed {
					t.Errorf("run %s was waiting with a committed decision; after recovery %s(%s)", id, r.State,
						r.FailureCode)
				}
				continue
			}
			if r.State != backend.RunNeedsApproval {
				t.Errorf("run %s was waiting at the kill; after recovery %s(%s)", id, r.State, r.FailureCode)
				continue
			}
			checkWaiting(t, st, r)
		case backend.RunCreated, backend.RunPlanned, backend.RunAccepted:
			if r.State == backend.RunFailed || r.State == backend.RunCancelled {
				t.Errorf("run %s was queued at the kill; after recovery %s(%s), want it re-enqueued", id, r.State,
					r.DoneReason)
			}
		default:
			if r.State != p.State || r.LastSeq != p.LastSeq {
				t.Errorf("terminal run %s changed in recovery: %s #%d → %s #%d", id, p.State, p.LastSeq, r.State,
					r.LastSeq)
			}
		}
	}
}

// checkWaiting: a recovered waiting run (SR10) has open tickets, every call
// not yet terminal is Suspended with its ticket open, and the suspension was
// the last thing it committed (EV3).
func checkWaiting(t *testing.T, st *store.Store, r store.RunRecord) {
	t.Helper()
	ctx := t.Context()
	tickets, err := st.Tickets(ctx, r.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	calls, err := st.Calls(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	open := map[string]bool{}
	for _, tk := range tickets {
		open[tk.ToolCallID] = true
	}
	if len(tickets) == 0 {
		t.Errorf("run %s waits in NeedsApproval with no open ticket: nothing can ever resume it", r.ID)
	}
	for _, c := range calls {
		switch {
		case c.Status.Terminal():
		case c.Status != backend.CallSuspended || !open[c.ID]:
			tk, _ := st.Ticket(ctx, c.TicketID)
			t.Errorf("waiting run %s: call %s is %s, its ticket %s is %q; want Suspended with an open ticket",
				r.ID, c.ID, c.Status, c.TicketID, tk.Status)
		}
	}
	evs := runEvents(t, st, r)
	checkPaired(t, st, r, evs, open)
	var sc backend.StatusChanged
	if last := evs[len(evs)-1]; last.Type != backend.EvRunStatusChanged ||
		json.Unmarshal(last.Payload, &sc) != nil || sc.To != backend.RunNeedsApproval {
		t.Errorf("waiting run %s: the last event is %s %s, want run.status.changed to NeedsApproval", r.ID,
			last.Type, last.Payload)
	}
}

// checkPaired: every run.tool.call has exactly one run.tool.result after it
// and every call row is terminal with a result (TC6), except the calls in
// open (Suspended, waiting for their ticket).
func checkPaired(t *testing.T, st *store.Store, r store.RunRecord, evs []backend.Event, open map[string]bool) {
	t.Helper()
	seen := map[string]int{} // 1 = called, 2 = has its result
	for _, ev := range evs {
		if ev.Type != backend.EvToolCall && ev.Type != backend.EvToolResult {
			continue
		}
		var p struct {
			ToolCallID string `json:"toolCallId"`
		}
		if err := json.Unmarshal(ev.Payload, &p); err != nil || p.ToolCallID == "" {
			t.Errorf("run %s #%d: %s without a toolCallId", r.ID, ev.Sequence, ev.Type)
			continue
		}
		switch {
		case ev.Type == backend.EvToolCall && seen[p.ToolCallID] != 0:
			t.Errorf("run %s #%d: call %s announced twice", r.ID, ev.Sequence, p.ToolCallID)
		case ev.Type == backend.EvToolResult && seen[p.ToolCallID] != 1:
			t.Errorf("run %s #%d: result of %s without its call, or a second one", r.ID, ev.Sequence,
				p.ToolCallID)
		}
		seen[p.ToolCallID]++
	}
	calls, err := st.Calls(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		switch {
		case open[c.ID]:
		case seen[c.ID] != 2:
			t.Errorf("run %s (%s): call %s (%s) is unpaired in the events", r.ID, r.State, c.ID, c.Status)
		case !c.Status.Terminal() || len(c.Result) == 0:
			t.Errorf("run %s (%s): call %s is %s with result %q", r.ID, r.State, c.ID, c.Status, c.Result)
		}
	}
	if len(seen) != len(calls) {
		t.Errorf("run %s: %d calls announced, %d call rows", r.ID, len(seen), len(calls))
	}
}

// driveToEnd approves every open ticket until every run is terminal.
func driveToEnd(t *testing.T, e *Engine, st *store.Store) {
	t.Helper()
	ctx := t.Context()
	live := []backend.RunState{backend.RunCreated, backend.RunPlanned, backend.RunAccepted, backend.RunPreparing,
		backend.RunRunning, backend.RunApplying, backend.RunNeedsApproval}
	deadline := time.Now().Add(30 * time.Second)
	for {
		aps, err := e.Approvals(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range aps {
			if _, err := e.Decide(ctx, backend.Decision{DecisionID: backend.NewID(backend.PrefixDecision),
				ApprovalID: a.ID, Kind: backend.ApproveOnce, SubjectHash: a.SubjectHash, Actor: "parent",
				Surface: backend.SurfaceCLI}); err != nil {
				t.Errorf("approve %s of run %s: %v", a.ID, a.RunID, err)
			}
		}
		rs, err := st.Runs(ctx, store.RunFilter{States: live})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, r := range rs {
				t.Errorf("run %s is still %s (%d open tickets) 30 s after recovery", r.ID, r.State,
					r.PendingApprovals)
			}
			t.FailNow()
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// checkFinal: with every run ended, each has one run.created, at most one
// run.started (a resumed run keeps its id, SR10), paired calls, no open
// ticket; within a session runs ran one at a time in queue order (CC1,
// SR12); each session's transcript pairs every call with one result (TC6)
// and holds each run's task at most once (exactly once when it completed).
func checkFinal(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := t.Context()
	runs, err := st.Runs(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	sessions := map[string][]store.RunRecord{} // queue order
	var order []string
	window := map[string][2]string{} // run → started, ended timestamps
	for _, r := range runs {
		if !r.State.Terminal() {
			t.Errorf("run %s is %s", r.ID, r.State)
			continue
		}
		evs := runEvents(t, st, r)
		checkPaired(t, st, r, evs, nil)
		var created, started int
		var w [2]string
		for _, ev := range evs {
			switch {
			case ev.Type == backend.EvRunCreated:
				created++
			case ev.Type == backend.EvRunStarted:
				started++
				w[0] = ev.Timestamp
			case ev.Type.Terminal():
				w[1] = ev.Timestamp
			}
		}
		if created != 1 || started > 1 {
			t.Errorf("run %s: %d run.created, %d run.started", r.ID, created, started)
		}
		window[r.ID] = w
		if _, ok := sessions[r.SessionID]; !ok {
			order = append(order, r.SessionID)
		}
		sessions[r.SessionID] = append(sessions[r.SessionID], r)
	}
	if tks, err := st.Tickets(ctx, "", true); err != nil || len(tks) != 0 {
		t.Errorf("%d tickets still open after every run ended (%v)", len(tks), err)
	}
	for _, s := range order {
		checkSession(t, st, sessions[s], window)
	}
	if err := st.Integrity(ctx); err != nil {
		t.Error(err)
	}
	if broken, _, err := st.VerifyAudit(ctx); err != nil || broken != 0 {
		t.Errorf("audit chain: broken at %d, %v", broken, err)
	}
}

func checkSession(t *testing.T, st *store.Store, runs []store.RunRecord, window map[string][2]string) {
	t.Helper()
	var prev store.RunRecord
	for _, r := range runs {
		w := window[r.ID]
		if w[0] == "" {
			continue // never started: cancelled while queued
		}
		if prev.ID != "" && w[0] < window[prev.ID][1] {
			t.Errorf("session %s: run %s started at %s, before run %s (queued earlier) ended at %s",
				r.SessionID, r.ID, w[0], prev.ID, window[prev.ID][1])
		}
		prev = r
	}
	msgs, err := st.Messages(t.Context(), runs[0].SessionID)
	if err != nil {
		t.Fatal(err)
	}
	tasks := map[string]int{}
	for i := 0; i < len(msgs); i++ {
		switch m := msgs[i]; m.Role {
		case backend.RoleUser:
			tasks[m.Text]++
		case backend.RoleAssistant:
			for j, c := range m.Calls {
				if k := i + 1 + j; k >= len(msgs) || msgs[k].Role != backend.RoleTool || msgs[k].ToolCallID != c.ID {
					t.Errorf("session %s: message %d calls %s but message %d is not its result", runs[0].SessionID,
						i, c.ID, k)
				}
			}
			i += len(m.Calls)
		default:
			t.Errorf("session %s: message %d (%s %s) follows no assistant call", runs[0].SessionID, i, m.Role,
				m.ToolCallID)
		}
	}
	for _, r := range runs {
		if n := tasks[r.Task]; n > 1 || (r.State == backend.RunCompleted && n != 1) {
			t.Errorf("session %s: the task of %s run %s is in the transcript %d times", r.SessionID, r.State, r.ID, n)
		}
	}
}
