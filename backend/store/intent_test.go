package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIntentLifecycle: an intent is open until exactly one close; a second
// close (the effect's own commit racing recovery) changes nothing; only a
// conflict can be resolved; the lists filter by run and state.
func TestIntentLifecycle(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	do := func(fn Job) error { _, err := s.Do(ctx, fn); return err }
	files := []IntentFile{{Path: "a.txt", Before: "absent", After: "ab"}}
	for _, id := range []string{"ck_1", "ck_2", "ck_3"} {
		if err := do(func(tx *Tx) error {
			return tx.OpenIntent(Intent{ID: id, RunID: "run_x", WorkspaceID: "ws_1", Op: "write", Files: files,
				Staging: []string{".git/agenthub-staging/.agenthub-00.tmp"}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := do(func(tx *Tx) error { return tx.OpenIntent(Intent{ID: "ck_4", WorkspaceID: "ws_1", Op: "write"}) }); err == nil {
		t.Error("an intent without files was recorded")
	}
	closes := []struct {
		id, state string
		closed    bool
		err       bool
	}{
		{"ck_1", IntentApplied, true, false},
		{"ck_1", IntentNotApplied, false, false}, // already closed: the second close loses
		{"ck_2", IntentConflict, true, false},
		{"ck_3", IntentOpen, false, true}, // open is not an outcome
		{"ck_9", IntentApplied, false, false},
	}
	for _, c := range closes {
		var closed bool
		err := do(func(tx *Tx) error {
			var err error
			closed, err = tx.CloseIntent(c.id, c.state, "test")
			return err
		})
		if (err != nil) != c.err || closed != c.closed {
			t.Errorf("close %s as %s: closed %v, err %v; want closed %v, err %v", c.id, c.state, closed, err,
				c.closed, c.err)
		}
	}
	if err := do(func(tx *Tx) error { return tx.ResolveIntent("ck_1", "user") }); err == nil {
		t.Error("an applied intent was resolved")
	}
	if err := do(func(tx *Tx) error { return tx.ResolveIntent("ck_2", "kept the disk") }); err != nil {
		t.Errorf("resolve the conflict: %v", err)
	}
	ids := func(runID string, states ...string) []string {
		ins, err := s.Intents(ctx, runID, states...)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, in := range ins {
			out = append(out, in.ID+"="+in.State)
		}
		return out
	}
	if diff := cmp.Diff([]string{"ck_1=applied", "ck_2=resolved", "ck_3=open"}, ids("run_x")); diff != "" {
		t.Errorf("run's intents (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ck_3=open"}, ids("", IntentOpen, IntentConflict)); diff != "" {
		t.Errorf("open intents (-want +got):\n%s", diff)
	}
	all, _ := s.Intents(ctx, "", IntentOpen)
	if len(all) != 1 || len(all[0].Files) != 1 || all[0].Files[0] != files[0] || len(all[0].Staging) != 1 {
		t.Errorf("intent read back: %+v", all)
	}
}
