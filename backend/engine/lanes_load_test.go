package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"agenthub/backend"
	playbook "agenthub/backend/runtime/script"
	"agenthub/backend/store"
)

// Two playbooks for the scripted runtime: one that completes on its own
// (an ungated tool call) and one whose write waits for a reviewer.
const (
	quickPlaybook = `
version = 1
name = "quick"
[[step]]
say = "Echoing the input back first."
[[step.call]]
tool = "echo"
args = { n = 7 }
[[step]]
expect = ["7"]
say = "Done with the quick task."
`
	gatedPlaybook = `
version = 1
name = "gated"
[[step]]
say = "I would like to write the notes file."
[[step.call]]
tool = "write"
args = { path = "notes.md", text = "hello" }
[[step]]
say = "Finished, whatever the reviewer decided."
`
)

const (
	loadRuns     = 50
	loadSessions = 10
	loadLimit    = 4 // the engine's default global limit (CC2)
)

// TestLanesUnderLoad: 50 scripted runs in 10 sessions, submitted at once
// through the real engine and store with the default global limit; every
// third run asks for approval and a reviewer goroutine decides it through
// the engine's decision API (approving or rejecting with a message). The
// lane invariants are checked on every committed event and every lane
// change, all runs must complete, each session runs its runs in submission
// order, every run's sequences are gap-free, and no goroutine is left.
func TestLanesUnderLoad(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newLaneWatch()
	f := newLoadFixture(t, w)
	defer f.close(t)
	var laneMax int
	var laneMu sync.Mutex
	f.e.lanes.observe = func(active int, _ map[string]int) { // under the lanes' mutex
		laneMu.Lock()
		laneMax = max(laneMax, active)
		laneMu.Unlock()
	}
	ctx, stop := context.WithCancel(t.Context())
	reviewed := make(chan reviewTally, 1)
	go review(ctx, t, f.e, w.asks, reviewed)
	finish := sync.OnceValue(func() reviewTally { stop(); return <-reviewed })
	defer finish() // before the fixture closes, on every exit

	ids, gated := f.submit(t)
	f.waitEnded(t, ids, 60*time.Second)
	tally := finish()

	if v := w.result(); len(v) > 0 {
		t.Errorf("lane invariants broken:\n%v", v)
	}
	laneMu.Lock()
	if laneMax != loadLimit { // all four used, never more
		t.Errorf("the lanes granted at most %d global slots at once, want the limit, %d", laneMax, loadLimit)
	}
	laneMu.Unlock()
	if tally.approved+tally.rejected != gated {
		t.Errorf("reviewer decided %d approvals (%d approved, %d rejected), want %d", tally.approved+tally.rejected,
			tally.approved, tally.rejected, gated)
	}
	f.write.mu.Lock()
	if f.write.executions != tally.approved {
		t.Errorf("the gated write ran %d times, want %d (the approved ones)", f.write.executions, tally.approved)
	}
	f.write.mu.Unlock()
	w.checkFIFO(t)
	for _, id := range ids {
		f.checkRun(t, id)
	}
}

// laneWatch is the engine's Sink: it sees every committed event in commit
// order, on the committer, and checks the lane invariants against the run
// states the events imply. A run holds its session from Preparing until its
// terminal event (CC1) and a global slot while Preparing, Running or
// Applying (CC2); the engine takes a slot before committing the state that
// needs it and gives it back after committing the one that does not, so
// this view never counts more holders than the lanes have.
type laneWatch struct {
	mu         sync.Mutex
	session    map[string]string // run → session
	state      map[string]backend.RunState
	occupant   map[string]string   // session → run holding it
	created    map[string][]string // session → runs in submission order
	started    map[string][]string // session → runs in the order they reached Preparing
	global     int
	violations []string
	asks       chan string // runs that asked for approval; never blocks (buffered for all)
}

func newLaneWatch() *laneWatch {
	return &laneWatch{session: map[string]string{}, state: map[string]backend.RunState{},
		occupant: map[string]string{}, created: map[string][]string{}, started: map[string][]string{},
		asks: make(chan string, loadRuns)}
}

func (w *laneWatch) Publish(ev backend.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case ev.Type == backend.EvRunCreated:
		w.session[ev.RunID], w.state[ev.RunID] = ev.SessionID, backend.RunCreated
		w.created[ev.SessionID] = append(w.created[ev.SessionID], ev.RunID)
	case ev.Type == backend.EvApprovalRequested:
		select {
		case w.asks <- ev.RunID:
		default: // the committer must never block
			w.violate("%s: more approval requests than runs", ev.RunID)
		}
	case ev.Type == backend.EvRunStatusChanged, ev.Type == backend.EvRunStarted:
		var p backend.StatusChanged
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			w.violate("%s #%d: %v", ev.RunID, ev.Sequence, err)
			return
		}
		w.move(ev.RunID, p.To)
	case ev.Type.Terminal():
		w.move(ev.RunID, map[backend.EventType]backend.RunState{backend.EvRunCompleted: backend.RunCompleted,
			backend.EvRunFailed: backend.RunFailed, backend.EvRunCancelled: backend.RunCancelled}[ev.Type])
	}
}

func holdsGlobal(s backend.RunState) bool {
	return s == backend.RunPreparing || s == backend.RunRunning || s == backend.RunApplying
}

// move applies one committed transition of run and checks CC1 and CC2.
func (w *laneWatch) move(run string, to backend.RunState) {
	from, ses := w.state[run], w.session[run]
	w.state[run] = to
	if to == backend.RunPreparing {
		if other := w.occupant[ses]; other != "" {
			w.violate("session %s: %s started while %s was active", ses, run, other)
		}
		w.occupant[ses] = run
		w.started[ses] = append(w.started[ses], run)
	}
	if to.Terminal() && w.occupant[ses] == run {
		delete(w.occupant, ses)
	}
	switch {
	case !holdsGlobal(from) && holdsGlobal(to):
		if w.global++; w.global > loadLimit {
			w.violate("%d runs active at once when %s became %s, limit %d", w.global, run, to, loadLimit)
		}
	case holdsGlobal(from) && !holdsGlobal(to):
		w.global--
	}
}

func (w *laneWatch) violate(format string, args ...any) {
	w.violations = append(w.violations, fmt.Sprintf(format, args...))
}

func (w *laneWatch) result() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.violations
}

// checkFIFO: each session started its runs in submission order (CC1).
func (w *laneWatch) checkFIFO(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.created) != loadSessions {
		t.Errorf("%d sessions, want %d", len(w.created), loadSessions)
	}
	for ses, runs := range w.created {
		if fmt.Sprint(runs) != fmt.Sprint(w.started[ses]) {
			t.Errorf("session %s: submitted %v, started %v", ses, runs, w.started[ses])
		}
	}
}

type reviewTally struct{ approved, rejected int }

// review decides every approval a run asks for, alternately approving it
// and rejecting it with a message (the run continues either way), until
// ctx ends; then it reports what it decided.
func review(ctx context.Context, t *testing.T, e *Engine, asks <-chan string, out chan<- reviewTally) {
	var tally reviewTally
	defer func() { out <- tally }()
	for {
		var run string
		select {
		case <-ctx.Done():
			return
		case run = <-asks:
		}
		aps, err := e.Approvals(ctx, run)
		if err != nil || len(aps) != 1 {
			t.Errorf("run %s asked for approval; pending: %v, %v", run, aps, err)
			continue
		}
		kind := backend.ApproveOnce
		if (tally.approved+tally.rejected)%2 == 1 {
			kind = backend.RejectAndTell
		}
		_, err = e.Decide(ctx, backend.Decision{ApprovalID: aps[0].ID, Kind: kind, SubjectHash: aps[0].SubjectHash,
			Reason: "not now", Actor: "reviewer", Surface: backend.SurfaceCLI})
		switch {
		case err != nil:
			t.Errorf("decide %s: %v", aps[0].ID, err)
		case kind == backend.ApproveOnce:
			tally.approved++
		default:
			tally.rejected++
		}
	}
}

type loadFixture struct {
	st    *store.Store
	e     *Engine
	write *writeTool
}

func newLoadFixture(t *testing.T, sink backend.Sink) *loadFixture {
	t.Helper()
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "load.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddWorkspace(ctx, backend.Workspace{ID: "ws_1", Name: "w", Path: "/abs/w", DisplayPath: "~/w"},
		store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	f := &loadFixture{st: st, write: &writeTool{}}
	profiles := map[string]Profile{}
	for name, text := range map[string]string{"quick": quickPlaybook, "gated": gatedPlaybook} {
		pb, err := playbook.Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		m := playbook.NewModel(pb)
		m.Pace = 200 * time.Microsecond // words arrive over time, so runs overlap
		profiles[name] = Profile{Runtime: "script", Model: m, Stop: DefaultStop, Scripted: true}
	}
	f.e = New(Config{Store: st, Default: "quick", Sink: sink, Profiles: profiles,
		Tools: map[string]backend.Tool{"echo": echoTool{}, "write": f.write}})
	if err := f.e.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *loadFixture) close(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.e.Shutdown(ctx); err != nil {
		t.Error(err)
	}
	if err := f.st.Close(); err != nil {
		t.Error(err)
	}
}

// submit starts the runs and returns their ids and how many ask for
// approval. Each session's runs are submitted one after another (the first
// creates the session), so that only the session lane keeps them apart:
// the global lane alone would start four of them at once.
func (f *loadFixture) submit(t *testing.T) (ids []string, gated int) {
	t.Helper()
	perSession := loadRuns / loadSessions
	var session string
	for i := range loadRuns {
		req := StartRequest{WorkspaceID: "ws_1", Task: fmt.Sprint("task ", i), Profile: "quick"}
		if i%3 == 2 {
			req.Profile = "gated"
			gated++
		}
		if i%perSession != 0 {
			req.SessionID = session
		}
		r, err := f.e.Start(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		session = r.SessionID
		ids = append(ids, r.ID)
	}
	return ids, gated
}

func (f *loadFixture) waitEnded(t *testing.T, ids []string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for _, id := range ids {
		for {
			r, err := f.e.Run(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if r.State.Terminal() {
				if r.State != backend.RunCompleted {
					t.Errorf("run %s ended %s (%s, %+v)", id, r.State, r.DoneReason, r.Failure)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s is still %s after %v", id, r.State, limit)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// checkRun: sequences 1…n without a gap, run.created first and the
// terminal event last (EV1).
func (f *loadFixture) checkRun(t *testing.T, id string) {
	t.Helper()
	evs, err := f.e.Events(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.Sequence != int64(i+1) {
			t.Fatalf("run %s: event %d has sequence %d", id, i, ev.Sequence)
		}
	}
	if len(evs) < 2 || evs[0].Type != backend.EvRunCreated || !evs[len(evs)-1].Type.Terminal() {
		t.Errorf("run %s: %d events, first %v, last %v", id, len(evs), evs[0].Type, evs[len(evs)-1].Type)
	}
}
