package workspace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func applyThree(t *testing.T, f *fixture, store *CheckpointStore) ApplyResult {
	t.Helper()
	res, err := Apply(f.fs, []Change{
		{Path: "a.txt", PreimageSHA256: hashOf(t, filepath.Join(f.root, "a.txt")), NewContent: []byte("agent a")},
		{Path: "b/new.txt", PreimageSHA256: Absent, NewContent: []byte("agent b")},
		{Path: "c.txt", PreimageSHA256: hashOf(t, filepath.Join(f.root, "c.txt")), Delete: true},
	}, store)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestUndo(t *testing.T) {
	f, store := applyFixture(t)
	before := snapshot(t, f.root)
	res := applyThree(t, f, store)
	after := snapshot(t, f.root)
	undo, err := Undo(f.fs, store, res.CheckpointID)
	if err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, f.root)
	delete(got, "b") // Undo removes files, not the directories the apply made
	if diff := cmp.Diff(before, got); diff != "" {
		t.Errorf("undo did not restore (-before +after):\n%s", diff)
	}
	if _, err := Undo(f.fs, store, res.CheckpointID); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("second Undo = %v, want ErrCheckpoint (already undone)", err)
	}
	// The undo is an apply of its own: undoing it redoes the change.
	if _, err := Undo(f.fs, store, undo.CheckpointID); err != nil {
		t.Fatalf("redo: %v", err)
	}
	if diff := cmp.Diff(after, snapshot(t, f.root)); diff != "" {
		t.Errorf("redo differs from the apply (-apply +redo):\n%s", diff)
	}
}

// TestUndoRefusesChanged: a file edited after the apply blocks the undo,
// naming the file, and nothing is restored.
func TestUndoRefusesChanged(t *testing.T) {
	f, store := applyFixture(t)
	res := applyThree(t, f, store)
	mustWrite(t, filepath.Join(f.root, "b/new.txt"), "user kept working")
	mustWrite(t, filepath.Join(f.root, "c.txt"), "user recreated")
	before := snapshot(t, f.root)
	_, err := Undo(f.fs, store, res.CheckpointID)
	var fe *FilesError
	if !errors.Is(err, ErrChanged) || !errors.As(err, &fe) {
		t.Fatalf("Undo = %v, want ErrChanged", err)
	}
	if diff := cmp.Diff([]string{"b/new.txt", "c.txt"}, fe.Paths); diff != "" {
		t.Errorf("changed paths (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, snapshot(t, f.root)); diff != "" {
		t.Errorf("a refused undo wrote (-before +after):\n%s", diff)
	}
}

func TestUndoRefusesForeignAndBogusCheckpoints(t *testing.T) {
	f, store := applyFixture(t)
	res := applyThree(t, f, store)
	other := newFixture(t)
	for _, tt := range []struct {
		name string
		w    *FS
		id   string
	}{
		{"other workspace", other.fs, res.CheckpointID},
		{"malformed id", f.fs, "../../etc/passwd"},
		{"unknown id", f.fs, "ck_000000000000000000000000"},
	} {
		if _, err := Undo(tt.w, store, tt.id); !errors.Is(err, ErrCheckpoint) {
			t.Errorf("%s: Undo = %v, want ErrCheckpoint", tt.name, err)
		}
	}
	// A tampered blob is detected, not restored.
	ck, _ := store.Load(res.CheckpointID)
	if err := os.WriteFile(store.blobPath(ck.Files[0].Preimage), []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Undo(f.fs, store, res.CheckpointID); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("tampered blob: Undo = %v, want ErrCheckpoint", err)
	}
}

// TestCheckpointStoreOutsideRepo: pre-images live only in the store directory.
func TestCheckpointStoreOutsideRepo(t *testing.T) {
	f, store := applyFixture(t)
	applyThree(t, f, store)
	for _, k := range keys(snapshot(t, f.root)) {
		if bytes.Contains([]byte(k), []byte("ck_")) {
			t.Errorf("checkpoint data inside the workspace: %s", k)
		}
	}
}

func TestGC(t *testing.T) {
	f := newFixture(t)
	store, err := NewCheckpointStore(t.TempDir(), 3000)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	content := []byte{}
	for i := range 6 {
		next := bytes.Repeat([]byte{byte('a' + i)}, 1000)
		pre := Absent
		if i > 0 {
			pre = Hash(content)
		}
		res, err := Apply(f.fs, []Change{{Path: "big.txt", PreimageSHA256: pre, NewContent: next}}, store)
		if err != nil {
			t.Fatalf("apply %d: %v", i, err)
		}
		ids = append(ids, res.CheckpointID)
		content = next
	}
	cks, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, ck := range cks {
		kept = append(kept, ck.ID)
	}
	// 1000-byte pre-images, 3000-byte bound: the newest three checkpoints
	// with blobs survive (the first one's pre-image is "absent" and costs
	// nothing, but it is the oldest and goes first).
	if diff := cmp.Diff(ids[3:], kept); diff != "" {
		t.Errorf("kept checkpoints (-want +got):\n%s", diff)
	}
	sizes, err := store.blobSizes()
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 3 {
		t.Errorf("store holds %d blobs, want 3", len(sizes))
	}
	if _, err := Undo(f.fs, store, ids[0]); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("Undo of a collected checkpoint = %v, want ErrCheckpoint", err)
	}
	if _, err := Undo(f.fs, store, ids[5]); err != nil {
		t.Errorf("Undo of the newest checkpoint: %v", err)
	}
}

// TestRecordThenExternalWrite: a checkpoint recorded before someone else
// writes the approved content makes that write undoable; a write of other
// content is not, and Record itself writes nothing and checks pre-images.
func TestRecordThenExternalWrite(t *testing.T) {
	f, store := applyFixture(t)
	before := snapshot(t, f.root)
	pre := hashOf(t, filepath.Join(f.root, "a.txt"))
	if _, err := Record(f.fs, []Change{{Path: "a.txt", PreimageSHA256: Absent, NewContent: []byte("x")}}, store); !errors.Is(err, ErrConflict) {
		t.Fatalf("a stale pre-image: %v, want ErrConflict", err)
	}
	id, err := Record(f.fs, []Change{{Path: "a.txt", PreimageSHA256: pre, NewContent: []byte("cli a")},
		{Path: "n/new.txt", PreimageSHA256: Absent, NewContent: []byte("cli n")}}, store)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, snapshot(t, f.root)); diff != "" {
		t.Fatalf("Record wrote to the workspace:\n%s", diff)
	}
	mustWrite(t, filepath.Join(f.root, "a.txt"), "cli a") // the CLI writes what was approved
	mustWrite(t, filepath.Join(f.root, "n/new.txt"), "cli n")
	if _, err := Undo(f.fs, store, id); err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, f.root)
	delete(got, "n")
	if diff := cmp.Diff(before, got); diff != "" {
		t.Errorf("undo did not restore (-before +after):\n%s", diff)
	}
	id, err = Record(f.fs, []Change{{Path: "a.txt", PreimageSHA256: pre, NewContent: []byte("approved")}}, store)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(f.root, "a.txt"), "something else")
	if _, err := Undo(f.fs, store, id); !errors.Is(err, ErrChanged) {
		t.Fatalf("undo over content that was never approved: %v, want ErrChanged", err)
	}
}
