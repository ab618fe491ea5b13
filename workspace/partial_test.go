package workspace

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// crashAt applies changes and stops the applying goroutine dead at the
// replace of file index i, as a kill -9 would: no rollback, no cleanup, the
// staging files left as they are. It returns the recorded intent.
func crashAt(t *testing.T, f *fixture, store *CheckpointStore, changes []Change, i int) Intent {
	t.Helper()
	j := &recJournal{t: t, root: f.root}
	setHook(t, func(phase string, n int, _ string) error {
		if phase == "replace" && n == i {
			runtime.Goexit()
		}
		return nil
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = ApplyWith(f.fs, changes, store, Options{Journal: j})
	}()
	<-done
	testHook = nil
	if len(j.intents) != 1 {
		t.Fatalf("%d intents", len(j.intents))
	}
	return j.intents[0]
}

// TestReconcileCompletesAPartialApply (issue 15): a multi-file apply cut by
// a crash between two renames leaves some files new and the others old.
// Recovery must not leave that half state: every file then holds its
// after-image (the staging files hold the rest, all staged before the first
// rename), the verdict is applied, and no staging file is left. A crash
// before the first rename is not applied, with nothing changed; with a
// staging file gone the half state is a conflict, left for the user.
func TestReconcileCompletesAPartialApply(t *testing.T) {
	for _, git := range []bool{false, true} {
		for _, cut := range []int{0, 1, 2} {
			name := map[bool]string{false: "plain", true: "git"}[git] + "/cut before file " + string(rune('0'+cut))
			t.Run(name, func(t *testing.T) {
				f, store := applyFixture(t)
				if git {
					mustMkdir(t, filepath.Join(f.root, ".git"))
				}
				mustWrite(t, filepath.Join(f.root, "gone.txt"), "old\n")
				changes := []Change{
					{Path: "a.txt", PreimageSHA256: hashOf(t, filepath.Join(f.root, "a.txt")), NewContent: []byte("A2\n")},
					{Path: "c.txt", PreimageSHA256: hashOf(t, filepath.Join(f.root, "c.txt")), NewContent: []byte("C2\n")},
					{Path: "gone.txt", PreimageSHA256: hashOf(t, filepath.Join(f.root, "gone.txt")), Delete: true},
					{Path: "n/new.txt", PreimageSHA256: Absent, NewContent: []byte("N\n")},
					{Path: "n/twin.txt", PreimageSHA256: Absent, NewContent: []byte("N\n")}, // the same content twice
				}
				in := crashAt(t, f, store, changes, cut)
				v, states, err := Reconcile(f.fs, in)
				if err != nil {
					t.Fatal(err)
				}
				want := VerdictApplied
				if cut == 0 {
					want = VerdictNotApplied
				}
				if v != want {
					t.Fatalf("verdict %s, want %s: %+v", v, want, states)
				}
				for _, fl := range in.Files {
					got := Absent
					if b, err := os.ReadFile(filepath.Join(f.root, fl.Path)); err == nil {
						got = Hash(b)
					}
					if (want == VerdictApplied && got != fl.After) || (want == VerdictNotApplied && got != fl.Before) {
						t.Errorf("%s holds %s, want the %s image", fl.Path, got, want)
					}
				}
				if left := stagingFiles(t, f.root); len(left) > 0 {
					t.Errorf("staging files left: %v", left)
				}
				if b, _ := os.ReadFile(filepath.Join(f.root, "c.txt")); want == VerdictApplied && string(b) == "C2\n" {
					if fi, _ := os.Stat(filepath.Join(f.root, "c.txt")); fi.Mode().Perm() != 0o755 {
						t.Errorf("c.txt completed with mode %v, want its own 0755", fi.Mode().Perm())
					}
				}
			})
		}
	}
	t.Run("a staging file is gone", func(t *testing.T) {
		f, store := applyFixture(t)
		changes := []Change{
			{Path: "a.txt", PreimageSHA256: hashOf(t, filepath.Join(f.root, "a.txt")), NewContent: []byte("A2\n")},
			{Path: "c.txt", PreimageSHA256: hashOf(t, filepath.Join(f.root, "c.txt")), NewContent: []byte("C2\n")},
		}
		in := crashAt(t, f, store, changes, 1)
		for _, s := range stagingFiles(t, f.root) {
			if err := os.Remove(filepath.Join(f.root, s)); err != nil {
				t.Fatal(err)
			}
		}
		if v, _, _ := Reconcile(f.fs, in); v != VerdictConflict {
			t.Errorf("verdict %s, want conflict", v)
		}
	})
}
