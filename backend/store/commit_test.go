package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
)

var errJob = errors.New("job failed")

// TestFailedJobIsUndone: a job's savepoint opens on its first write other
// than an event append, so a failed job's writes may sit before, after or
// on both sides of it; all of them are undone, its sequences are given back
// and nothing of it is published.
func TestFailedJobIsUndone(t *testing.T) {
	appendEv := func(tx *Tx) error { _, err := tx.Append("run_1", "x.custom", map[string]int{"n": 1}); return err }
	setting := func(tx *Tx) error { return tx.Exec(`INSERT INTO settings VALUES ('k', '"v"')`) }
	plan := func(tx *Tx) error { _, err := tx.Transition("run_1", backend.RunPlanned, "", nil); return err }
	fail := func(*Tx) error { return errJob }
	for _, tc := range []struct {
		name  string
		steps []func(*Tx) error
	}{
		{"append", []func(*Tx) error{appendEv, fail}},
		{"two appends", []func(*Tx) error{appendEv, appendEv, fail}},
		{"append then write", []func(*Tx) error{appendEv, setting, fail}},
		{"write then append", []func(*Tx) error{setting, appendEv, fail}},
		{"append, transition, append", []func(*Tx) error{appendEv, plan, appendEv, fail}},
		{"append then panic", []func(*Tx) error{appendEv, func(*Tx) error { panic("boom") }}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTest(t)
			ctx := t.Context()
			newRun(t, s, "run_1")
			var published []int64
			s.SetPublisher(sinkFunc(func(ev backend.Event) { published = append(published, ev.Sequence) }))
			_, err := s.Do(ctx, func(tx *Tx) error {
				for _, step := range tc.steps {
					if err := step(tx); err != nil {
						return err
					}
				}
				return nil
			})
			if err == nil {
				t.Fatal("the failing job reported success")
			}
			if len(published) != 0 {
				t.Errorf("published %v from a failed job", published)
			}
			r, err := s.Run(ctx, "run_1")
			if err != nil || r.State != backend.RunCreated || r.LastSeq != 1 {
				t.Fatalf("after the failed job: state %s, last_seq %d, %v; want Created, 1", r.State, r.LastSeq, err)
			}
			if _, ok, _ := s.Setting(ctx, "k"); ok {
				t.Error("the failed job's setting was kept")
			}
			if _, err := s.Do(ctx, appendEv); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int64{1, 2}, seqs(t, s, "run_1")); diff != "" {
				t.Errorf("sequences (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailedJobLeavesNoHoleAfterRestart: the failed job was the last to
// touch its run in the group; its discarded sequence used to be written to
// runs.last_seq, and after a restart the run's next event skipped it.
func TestFailedJobLeavesNoHoleAfterRestart(t *testing.T) {
	s, path := openTest(t)
	newRun(t, s, "run_1")
	_, err := s.Do(t.Context(), func(tx *Tx) error {
		if _, err := tx.Append("run_1", "x.custom", nil); err != nil {
			return err
		}
		return errJob
	})
	if !errors.Is(err, errJob) {
		t.Fatalf("job error = %v", err)
	}
	s.Close()
	s2, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Do(t.Context(), func(tx *Tx) error { _, err := tx.Append("run_1", "x.custom", nil); return err }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{1, 2}, seqs(t, s2, "run_1")); diff != "" {
		t.Errorf("sequences after restart (-want +got):\n%s", diff)
	}
}

// TestGroupKeepsGoodJobsAroundFailedOnes submits mixed jobs without waiting,
// so they share group transactions: every good job's writes stay, in order.
func TestGroupKeepsGoodJobsAroundFailedOnes(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	newRun(t, s, "run_1")
	done := make(chan error, 40)
	for i := range 40 {
		s.Go(func(tx *Tx) error {
			if _, err := tx.Append("run_1", "x.custom", map[string]int{"i": i}); err != nil {
				return err
			}
			if i%4 == 1 {
				if err := tx.Exec(`INSERT INTO settings VALUES (?, '1')`, fmt.Sprintf("k%d", i)); err != nil {
					return err
				}
			}
			if i%3 == 2 {
				return errJob
			}
			return nil
		}, func(_ []backend.Event, err error) { done <- err })
	}
	failed := 0
	for range 40 {
		if err := <-done; err != nil {
			failed++
		}
	}
	evs, err := s.Events(ctx, "run_1", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for i := range 40 {
		if i%3 != 2 {
			want = append(want, fmt.Sprintf("%d:%d", len(want)+2, i))
		}
	}
	for _, ev := range evs {
		var p struct{ I int }
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%d", ev.Sequence, p.I))
	}
	if failed != 13 {
		t.Errorf("%d jobs failed, want 13", failed)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (sequence:job) (-want +got):\n%s", diff)
	}
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM settings WHERE value = '1' AND key LIKE 'k%'`).Scan(&n); err != nil || n != 7 {
		t.Errorf("%d settings kept (%v), want 7 (jobs 1, 9, 13, 21, 25, 33, 37)", n, err)
	}
}

func seqs(t *testing.T, s *Store, runID string) []int64 {
	t.Helper()
	evs, err := s.Events(t.Context(), runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, ev := range evs {
		out = append(out, ev.Sequence)
	}
	return out
}

type sinkFunc func(backend.Event)

func (f sinkFunc) Publish(ev backend.Event) { f(ev) }
