package store

import (
	"errors"
	"testing"

	"agenthub/backend"
)

// TestAnnotateAfterTheEnd: a workspace conflict and its resolution are
// appended to a run that has ended, with the next sequence (the one
// exception to LC2); any other event is still refused there, and Append
// still refuses them.
func TestAnnotateAfterTheEnd(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	newRun(t, s, "run_done")
	_, err := s.Do(ctx, func(tx *Tx) error {
		_, err := tx.Transition("run_done", backend.RunCancelled, "", &End{DoneReason: backend.DoneUserCancelled})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.Events(ctx, "run_done", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name string
		fn   func(tx *Tx) (backend.Event, error)
	}{
		{"append the resolution", func(tx *Tx) (backend.Event, error) {
			return tx.Append("run_done", backend.EvWorkspaceConflictResolved, map[string]string{})
		}},
		{"append the conflict", func(tx *Tx) (backend.Event, error) {
			return tx.Append("run_done", backend.EvWorkspaceConflict, map[string]string{})
		}},
		{"annotate with another type", func(tx *Tx) (backend.Event, error) {
			return tx.Annotate("run_done", backend.EvMessageDelta, map[string]string{})
		}},
	}
	for _, r := range refused {
		_, err := s.Do(ctx, func(tx *Tx) error { _, err := r.fn(tx); return err })
		if !errors.Is(err, backend.ErrIllegalTransition) {
			t.Errorf("%s: %v, want ErrIllegalTransition", r.name, err)
		}
	}
	var conflict, ev backend.Event
	_, err = s.Do(ctx, func(tx *Tx) (err error) {
		if conflict, err = tx.Annotate("run_done", backend.EvWorkspaceConflict, backend.WorkspaceConflict{
			IntentID: "ck_1", Code: backend.CodeWorkspaceConflict}); err != nil {
			return err
		}
		ev, err = tx.Annotate("run_done", backend.EvWorkspaceConflictResolved, backend.WorkspaceConflictResolved{
			IntentID: "ck_1", Choice: backend.ConflictKeep})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := before[len(before)-1].Sequence + 1; conflict.Sequence != want || ev.Sequence != want+1 {
		t.Errorf("annotation sequences %d, %d, want %d, %d", conflict.Sequence, ev.Sequence, want, want+1)
	}
	if r, err := s.Run(ctx, "run_done"); err != nil || r.State != backend.RunCancelled {
		t.Errorf("run %s %v after the annotation, want still Cancelled", r.State, err)
	}
}
