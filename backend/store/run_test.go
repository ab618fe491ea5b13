package store

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
)

// newRun creates a workspace, a session and a run in Created.
func newRun(t *testing.T, s *Store, id string) {
	t.Helper()
	ctx := t.Context()
	if _, err := s.Workspace(ctx, "ws_1"); err != nil {
		if err := s.AddWorkspace(ctx, backend.Workspace{ID: "ws_1", Name: "w", Path: "/abs/w", DisplayPath: "~/w"},
			By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Do(ctx, func(tx *Tx) error {
		if err := tx.CreateSession("ses_"+id, "ws_1", ""); err != nil {
			return err
		}
		_, err := tx.CreateRun(RunRecord{ID: id, SessionID: "ses_" + id, WorkspaceID: "ws_1", Profile: "demo",
			AgentID: "demo", Runtime: "script", Task: "t"}, map[string]string{"task": "t"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTransitionsEmitOneEventEach(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	newRun(t, s, "run_1")
	steps := []backend.RunState{backend.RunPlanned, backend.RunAccepted, backend.RunPreparing, backend.RunRunning,
		backend.RunRunning}
	for _, to := range steps {
		if _, err := s.Do(ctx, func(tx *Tx) error { _, err := tx.Transition("run_1", to, "", nil); return err }); err != nil {
			t.Fatal(err)
		}
	}
	// Illegal: Running → Accepted. Nothing changes, nothing is emitted.
	_, err := s.Do(ctx, func(tx *Tx) error { _, err := tx.Transition("run_1", backend.RunAccepted, "", nil); return err })
	if !errors.Is(err, backend.ErrIllegalTransition) {
		t.Fatalf("illegal transition: %v", err)
	}
	_, err = s.Do(ctx, func(tx *Tx) error {
		_, err := tx.Transition("run_1", backend.RunCompleted, "", &End{DoneReason: backend.DoneNatural})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing follows the terminal event (LC2).
	_, err = s.Do(ctx, func(tx *Tx) error { _, err := tx.Append("run_1", "x.custom", nil); return err })
	if !errors.Is(err, backend.ErrIllegalTransition) {
		t.Fatalf("append after terminal: %v", err)
	}
	evs, err := s.Events(ctx, "run_1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []backend.EventType
	for i, ev := range evs {
		if ev.Sequence != int64(i+1) {
			t.Errorf("event %d has sequence %d", i, ev.Sequence)
		}
		types = append(types, ev.Type)
	}
	want := []backend.EventType{backend.EvRunCreated, backend.EvRunStatusChanged, backend.EvRunStatusChanged,
		backend.EvRunStatusChanged, backend.EvRunStarted, backend.EvRunCompleted}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	r, err := s.Run(ctx, "run_1")
	if err != nil || r.State != backend.RunCompleted || r.LastSeq != 6 || r.DoneReason != "natural" {
		t.Errorf("run = %+v, %v", r, err)
	}
}

func TestFailedJobRollsBackOnlyItself(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	newRun(t, s, "run_1")
	done := make(chan error, 3)
	s.Go(func(tx *Tx) error { _, err := tx.Append("run_1", "a", nil); return err }, func(_ []backend.Event, err error) { done <- err })
	s.Go(func(tx *Tx) error {
		if _, err := tx.Append("run_1", "b", nil); err != nil {
			return err
		}
		return errors.New("boom")
	}, func(_ []backend.Event, err error) { done <- err })
	s.Go(func(tx *Tx) error { _, err := tx.Append("run_1", "c", nil); return err }, func(_ []backend.Event, err error) { done <- err })
	var errs int
	for range 3 {
		if <-done != nil {
			errs++
		}
	}
	if errs != 1 {
		t.Fatalf("%d jobs failed, want 1", errs)
	}
	evs, _ := s.Events(ctx, "run_1", 1, 0)
	var got []string
	for _, ev := range evs {
		got = append(got, string(ev.Type)+":"+string(rune('0'+ev.Sequence)))
	}
	if diff := cmp.Diff([]string{"a:2", "c:3"}, got); diff != "" {
		t.Errorf("events after a failed job (-want +got):\n%s", diff)
	}
}
