package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// setHook installs testHook for one test.
func setHook(t *testing.T, h func(phase string, i int, path string) error) {
	t.Helper()
	testHook = h
	t.Cleanup(func() { testHook = nil })
}

func hashOf(t testing.TB, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return Hash(data)
}

// applyFixture is a small workspace with three files.
func applyFixture(t *testing.T) (*fixture, *CheckpointStore) {
	f := newFixture(t)
	mustWrite(t, filepath.Join(f.root, "a.txt"), "alpha\n")
	mustWrite(t, filepath.Join(f.root, "c.txt"), "gamma\n")
	if err := os.Chmod(filepath.Join(f.root, "c.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	return f, newStore(t)
}

func TestApply(t *testing.T) {
	f, store := applyFixture(t)
	aHash := hashOf(t, filepath.Join(f.root, "a.txt"))
	cHash := hashOf(t, filepath.Join(f.root, "c.txt"))
	res, err := Apply(f.fs, []Change{
		{Path: "a.txt", PreimageSHA256: aHash, NewContent: []byte("ALPHA\r\n")},
		{Path: "new/deep/b.txt", PreimageSHA256: Absent, NewContent: []byte("beta")},
		{Path: "c.txt", PreimageSHA256: cHash, Delete: true},
		{Path: "sub/a.txt", PreimageSHA256: Hash([]byte("a")), NewContent: []byte("a"), Mode: 0o700},
	}, store)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileResult{
		{Path: "a.txt", Action: ActionModified, Preimage: aHash, Postimage: Hash([]byte("ALPHA\r\n"))},
		{Path: "c.txt", Action: ActionDeleted, Preimage: cHash, Postimage: Absent},
		{Path: "new/deep/b.txt", Action: ActionCreated, Preimage: Absent, Postimage: Hash([]byte("beta"))},
		{Path: "sub/a.txt", Action: ActionModified, Preimage: Hash([]byte("a")), Postimage: Hash([]byte("a"))},
	}
	if diff := cmp.Diff(want, res.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	snap := snapshot(t, f.root)
	for path, content := range map[string]string{
		"a.txt":          "-rw-r--r--:ALPHA\r\n",
		"new/deep/b.txt": "-rw-r--r--:beta",
		"sub/a.txt":      "-rwx------:a",
	} {
		if snap[path] != content {
			t.Errorf("%s = %q, want %q", path, snap[path], content)
		}
	}
	if _, ok := snap["c.txt"]; ok {
		t.Errorf("c.txt was not deleted")
	}
	if hasTemp(t, f.root) {
		t.Errorf("temp files left behind: %v", keys(snap))
	}
	ck, err := store.Load(res.CheckpointID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ck.Files) != 4 || ck.Files[1].Mode != 0o755 {
		t.Errorf("checkpoint = %+v", ck)
	}
	if blob, err := store.Blob(cHash); err != nil || string(blob) != "gamma\n" {
		t.Errorf("pre-image of c.txt = %q, %v", blob, err)
	}
}

func TestApplyRefusesBadPlans(t *testing.T) {
	f, store := applyFixture(t)
	aHash := hashOf(t, filepath.Join(f.root, "a.txt"))
	tests := []struct {
		name    string
		changes []Change
	}{
		{"empty", nil},
		{"twice", []Change{{Path: "x", PreimageSHA256: Absent}, {Path: "./x", PreimageSHA256: Absent}}},
		{"file and dir", []Change{{Path: "x", PreimageSHA256: Absent}, {Path: "x/y", PreimageSHA256: Absent}}},
		{"bad hash", []Change{{Path: "a.txt", PreimageSHA256: "sha256:abc"}}},
		{"delete absent", []Change{{Path: "a.txt", PreimageSHA256: Absent, Delete: true}}},
		{"root", []Change{{Path: ".", PreimageSHA256: aHash}}},
		{"directory", []Change{{Path: "sub", PreimageSHA256: aHash, NewContent: []byte("x")}}},
		{"through a file", []Change{{Path: "a.txt/x", PreimageSHA256: Absent}}},
	}
	before := snapshot(t, f.root)
	for _, tt := range tests {
		if _, err := Apply(f.fs, tt.changes, store); err == nil {
			t.Errorf("%s: Apply succeeded", tt.name)
		}
	}
	if diff := cmp.Diff(before, snapshot(t, f.root)); diff != "" {
		t.Errorf("refused plans changed the workspace:\n%s", diff)
	}
}

// TestApplyTOCTOU: the pre-image is computed, the file changes on disk, the
// apply refuses with ErrConflict naming it, and nothing at all is written.
func TestApplyTOCTOU(t *testing.T) {
	f, store := applyFixture(t)
	aHash := hashOf(t, filepath.Join(f.root, "a.txt"))
	cHash := hashOf(t, filepath.Join(f.root, "c.txt"))
	changes := []Change{
		{Path: "a.txt", PreimageSHA256: aHash, NewContent: []byte("agent")},
		{Path: "c.txt", PreimageSHA256: cHash, NewContent: []byte("agent")},
		{Path: "fresh.txt", PreimageSHA256: Absent, NewContent: []byte("agent")},
	}
	mustWrite(t, filepath.Join(f.root, "c.txt"), "user edit\n")
	mustWrite(t, filepath.Join(f.root, "fresh.txt"), "user file\n")
	before := snapshot(t, f.root)
	_, err := Apply(f.fs, changes, store)
	var fe *FilesError
	if !errors.Is(err, ErrConflict) || !errors.As(err, &fe) {
		t.Fatalf("Apply = %v, want ErrConflict", err)
	}
	if diff := cmp.Diff([]string{"c.txt", "fresh.txt"}, fe.Paths); diff != "" {
		t.Errorf("conflicting paths (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, snapshot(t, f.root)); diff != "" {
		t.Errorf("a conflicting apply wrote (-before +after):\n%s", diff)
	}
	if cks, _ := store.List(); len(cks) != 0 {
		t.Errorf("a refused apply left %d checkpoints", len(cks))
	}
}

// TestApplyChangeDuringStaging: an edit that lands after the first check but
// before the renames is still caught, and the staged files are removed.
func TestApplyChangeDuringStaging(t *testing.T) {
	f, store := applyFixture(t)
	aHash := hashOf(t, filepath.Join(f.root, "a.txt"))
	setHook(t, func(phase string, _ int, _ string) error {
		if phase == "staged" {
			mustWrite(t, filepath.Join(f.root, "a.txt"), "late user edit\n")
		}
		return nil
	})
	_, err := Apply(f.fs, []Change{
		{Path: "a.txt", PreimageSHA256: aHash, NewContent: []byte("agent")},
		{Path: "n/new.txt", PreimageSHA256: Absent, NewContent: []byte("agent")},
	}, store)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("Apply = %v, want ErrConflict", err)
	}
	snap := snapshot(t, f.root)
	if snap["a.txt"] != "-rw-r--r--:late user edit\n" {
		t.Errorf("a.txt = %q", snap["a.txt"])
	}
	if _, ok := snap["n"]; ok || hasTemp(t, f.root) {
		t.Errorf("staging left files behind: %v", keys(snap))
	}
}

// TestApplyRollback: the second rename fails; the first file is restored, the
// created directory removed, and every temp file cleaned up.
func TestApplyRollback(t *testing.T) {
	for _, failAt := range []int{0, 1, 2, 3} {
		f, store := applyFixture(t)
		before := snapshot(t, f.root)
		setHook(t, func(phase string, i int, _ string) error {
			if phase == "replace" && i == failAt {
				return errors.New("injected rename failure")
			}
			return nil
		})
		_, err := Apply(f.fs, []Change{
			{Path: "a.txt", PreimageSHA256: hashOf(t, filepath.Join(f.root, "a.txt")), NewContent: []byte("agent")},
			{Path: "b/new.txt", PreimageSHA256: Absent, NewContent: []byte("agent")},
			{Path: "c.txt", PreimageSHA256: hashOf(t, filepath.Join(f.root, "c.txt")), Delete: true},
			{Path: "d.txt", PreimageSHA256: Absent, NewContent: []byte("agent")},
		}, store)
		if err == nil {
			t.Fatalf("failAt %d: Apply succeeded", failAt)
		}
		if diff := cmp.Diff(before, snapshot(t, f.root)); diff != "" {
			t.Errorf("failAt %d: rollback incomplete (-before +after):\n%s", failAt, diff)
		}
		testHook = nil
	}
}

func TestApplySerialisesPerWorkspace(t *testing.T) {
	f, store := applyFixture(t)
	aHash := hashOf(t, filepath.Join(f.root, "a.txt"))
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Apply(f.fs, []Change{{Path: "a.txt", PreimageSHA256: aHash, NewContent: []byte{byte('0' + i)}}}, store)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrConflict):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d applies against the same pre-image succeeded, want exactly 1", won)
	}
}
