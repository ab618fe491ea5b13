package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
	"agenthub/backend/redact"
)

// holdCommitter blocks the committer in a job until the returned func is
// called, so that everything submitted meanwhile shares the next group.
func holdCommitter(t *testing.T, s *Store) (release func()) {
	t.Helper()
	entered, hold := make(chan struct{}), make(chan struct{})
	s.Go(func(*Tx) error { close(entered); <-hold; return nil }, nil)
	<-entered
	var once sync.Once
	release = func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	return release
}

// committedSink checks EV6 for every event it is handed: the row must
// already be readable from another connection, which sees only committed
// transactions.
type committedSink struct {
	t   *testing.T
	s   *Store
	mu  sync.Mutex
	got []string
}

func (c *committedSink) Publish(ev backend.Event) {
	var n int
	err := c.s.r.QueryRow(`SELECT count(*) FROM events WHERE run_id = ? AND seq = ? AND id = ?`, ev.RunID,
		ev.Sequence, ev.ID).Scan(&n)
	if err != nil || n != 1 {
		c.t.Errorf("published %s #%d before it was committed (%d rows, %v)", ev.RunID, ev.Sequence, n, err)
	}
	c.mu.Lock()
	c.got = append(c.got, fmt.Sprintf("%s#%d", ev.RunID, ev.Sequence))
	c.mu.Unlock()
}

// TestEmitKeepsSubmissionOrder: emits and jobs of two runs, submitted while
// the committer is busy so that they share one group, are stored and
// published in submission order with gap-free sequences per run; each
// emit's done sees its one event.
func TestEmitKeepsSubmissionOrder(t *testing.T) {
	s, _ := openTest(t)
	newRun(t, s, "run_a")
	newRun(t, s, "run_b")
	sink := &committedSink{t: t, s: s}
	s.SetPublisher(sink)
	release := holdCommitter(t, s)
	var want []string
	next := map[string]int64{"run_a": 1, "run_b": 1}
	results := make(chan string, 200)
	for i := range 150 {
		run := []string{"run_a", "run_b"}[i%7%2]
		next[run]++
		want = append(want, fmt.Sprintf("%s#%d", run, next[run]))
		done := func(evs []backend.Event, err error) {
			if err != nil || len(evs) != 1 {
				results <- fmt.Sprintf("submission %d: %d events, %v", i, len(evs), err)
				return
			}
			results <- ""
		}
		if i%10 == 9 { // a job between emits, reading what the emits before it wrote
			s.Go(func(tx *Tx) error {
				_, err := tx.Append(run, "x.job", map[string]int{"i": i})
				return err
			}, done)
			continue
		}
		s.Emit(run, backend.EvMessageDelta, map[string]int{"i": i}, done)
	}
	release()
	for range 150 {
		if r := <-results; r != "" {
			t.Error(r)
		}
	}
	if diff := cmp.Diff(want, sink.got); diff != "" {
		t.Errorf("published (-want +got):\n%s", diff)
	}
	rows, err := s.r.Query(`SELECT run_id, seq FROM events WHERE seq > 1 ORDER BY pos`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var stored []string
	for rows.Next() {
		var run string
		var seq int64
		if err := rows.Scan(&run, &seq); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, fmt.Sprintf("%s#%d", run, seq))
	}
	if diff := cmp.Diff(want, stored); diff != "" {
		t.Errorf("stored in commit order (-want +got):\n%s", diff)
	}
}

// TestEmitFailuresStayPerEvent: in one group, an emit with invalid JSON
// (the database refuses it, failing a multi-row statement), one for an
// unknown run and one for a run that has ended fail alone; the others are
// stored with gap-free sequences and only they are published.
func TestEmitFailuresStayPerEvent(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	newRun(t, s, "run_a")
	newRun(t, s, "run_done")
	_, err := s.Do(ctx, func(tx *Tx) error {
		_, err := tx.Transition("run_done", backend.RunCancelled, "", &End{DoneReason: backend.DoneUserCancelled})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var published []string
	s.SetPublisher(sinkFunc(func(ev backend.Event) {
		mu.Lock()
		published = append(published, fmt.Sprintf("%s#%d:%s", ev.RunID, ev.Sequence, ev.Payload))
		mu.Unlock()
	}))
	release := holdCommitter(t, s)
	type sub struct {
		run     string
		payload json.RawMessage
		wantErr error // nil: stored
	}
	var subs []sub
	for i := range 40 {
		subs = append(subs, sub{run: "run_a", payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
	}
	subs[5] = sub{run: "run_a", payload: json.RawMessage(`{"i":`), wantErr: errors.New("constraint")}
	subs[17] = sub{run: "run_missing", payload: json.RawMessage(`{}`), wantErr: backend.ErrNotFound}
	subs[33] = sub{run: "run_done", payload: json.RawMessage(`{}`), wantErr: backend.ErrIllegalTransition}
	errs := make([]chan error, len(subs))
	for i, sb := range subs {
		errs[i] = make(chan error, 1)
		s.Emit(sb.run, backend.EvMessageDelta, sb.payload, func(_ []backend.Event, err error) { errs[i] <- err })
	}
	release()
	var want []string
	for i, sb := range subs {
		err := <-errs[i]
		switch {
		case sb.wantErr == nil && err != nil:
			t.Errorf("emit %d: %v", i, err)
		case sb.wantErr == nil:
			want = append(want, fmt.Sprintf("run_a#%d:%s", len(want)+2, sb.payload))
		case err == nil:
			t.Errorf("emit %d was stored, want %v", i, sb.wantErr)
		case !errors.Is(err, sb.wantErr) && !strings.Contains(err.Error(), sb.wantErr.Error()):
			t.Errorf("emit %d: %v, want %v", i, err, sb.wantErr)
		}
	}
	if diff := cmp.Diff(want, published); diff != "" {
		t.Errorf("published (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, payloads(t, s, "run_a")); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	if r, err := s.Run(ctx, "run_a"); err != nil || r.LastSeq != int64(len(want)+1) {
		t.Errorf("run_a last_seq = %d (%v), want %d", r.LastSeq, err, len(want)+1)
	}
}

func payloads(t *testing.T, s *Store, runID string) []string {
	t.Helper()
	evs, err := s.Events(t.Context(), runID, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, fmt.Sprintf("%s#%d:%s", ev.RunID, ev.Sequence, ev.Payload))
	}
	return out
}

// TestEmitRedacts: an emitted payload is redacted before it is stored or
// published (EV11), although it never runs on the committer.
func TestEmitRedacts(t *testing.T) {
	s, _ := openTest(t)
	s.SetRedactor(redact.New())
	newRun(t, s, "run_1")
	var published string
	s.SetPublisher(sinkFunc(func(ev backend.Event) { published = string(ev.Payload) }))
	done := make(chan error, 1)
	s.Emit("run_1", backend.EvMessageDelta, map[string]string{"text": "token " + leakToken},
		func(_ []backend.Event, err error) { done <- err })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	stored := payloads(t, s, "run_1")
	if len(stored) != 1 || strings.Contains(stored[0], leakToken) || strings.Contains(published, leakToken) ||
		!strings.Contains(stored[0], "REDACTED") {
		t.Errorf("stored %q, published %q: want the token redacted", stored, published)
	}
}
