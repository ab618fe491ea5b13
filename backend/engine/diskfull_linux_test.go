package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/store"
)

// TestDiskFullEndsTheRun (issue 15.4): on a real full disk (a 4 MB tmpfs for
// the data directory, filled by the model's last step) the run's end cannot
// be committed. Its subscriber must still hear that it ended, with
// storage_full; status must say so; cancel must answer the storage error
// while the disk is full, and record the end once there is room again; and
// the next start finds nothing left to reconcile.
func TestDiskFullEndsTheRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	data := t.TempDir()
	if err := syscall.Mount("tmpfs", data, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(data, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	root := t.TempDir()
	db := filepath.Join(data, "agenthub.db")
	filler := filepath.Join(data, "filler")
	fill := func() {
		f, err := os.Create(filler)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		chunk := make([]byte, 64<<10)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Errorf("fill: %v", err)
				}
				return
			}
		}
	}
	g := newGated(t, root, db)
	m := &hookedModel{steps: []backend.ModelResponse{{Text: "a first step"}}, before: map[int]func(){0: fill}}
	r := g.start(t, m)
	subCtx, unsubscribe := context.WithCancel(t.Context())
	events := g.e.Subscribe(subCtx, r.ID, 0)
	var end backend.Event
	timeout := time.After(30 * time.Second)
wait:
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the subscription ended without a terminal event")
			}
			if ev.Type.Terminal() {
				end = ev
				break wait
			}
		case <-timeout:
			t.Fatal("no terminal event reached the subscriber after the disk filled")
		}
	}
	var p backend.RunEnded
	if err := json.Unmarshal(end.Payload, &p); err != nil || p.Code != backend.CodeStorageFull || p.Next == "" {
		t.Errorf("terminal notification %s %s, want run.failed with storage_full and a next step", end.Type, end.Payload)
	}
	s, err := g.e.Run(t.Context(), r.ID)
	if err != nil || s.State != backend.RunFailed || s.Failure == nil || s.Failure.Code != backend.CodeStorageFull {
		t.Errorf("status while the end is unrecorded: %+v %v", s, err)
	}
	_, err = g.e.Cancel(t.Context(), r.ID)
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != backend.CodeStorageFull {
		t.Errorf("cancel on a full disk = %v, want a storage_full error", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	s, err = g.e.Cancel(t.Context(), r.ID)
	if err != nil || s.State != backend.RunFailed || s.Failure.Code != backend.FailRunInterrupted {
		t.Errorf("cancel with room again = %+v, %v; want the run recorded Failed(run_interrupted)", s, err)
	}
	unsubscribe()
	g.close(t)
	// The next start: the database is sound and nothing is left open.
	st, err := store.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Integrity(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec, err := st.Run(t.Context(), r.ID)
	if err != nil || !rec.State.Terminal() {
		t.Errorf("stored run %+v, %v; want it terminal", rec, err)
	}
}
