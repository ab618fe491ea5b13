package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSymlinkCreatedMidRun: a link out created after the FS was opened is
// refused like any other.
func TestSymlinkCreatedMidRun(t *testing.T) {
	f := newFixture(t)
	if _, err := f.fs.ReadFile("inside.txt"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(f.root, "late")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(f.root, "sub/a.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../outside/secret.txt", filepath.Join(f.root, "sub/a.txt")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"late/secret.txt", "sub/a.txt"} {
		if data, err := f.fs.ReadFile(p); !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("ReadFile(%s) = %q, %v; want ErrOutsideRoot", p, data, err)
		}
	}
}

// swapper keeps root/swap a symlink and atomically re-points it (rename of
// a fresh link over it) between swap_real, a directory inside holding f.txt,
// and the outside directory, which holds its own f.txt, until stop closes.
func swapper(t *testing.T, f *fixture, stop <-chan struct{}, wg *sync.WaitGroup) {
	t.Helper()
	mustWrite(t, filepath.Join(f.root, "swap_real", "f.txt"), insideText)
	swap := filepath.Join(f.root, "swap")
	tmp := filepath.Join(f.root, "swap.tmp")
	if err := os.Symlink("swap_real", swap); err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		targets := []string{"../outside", "swap_real"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.Remove(tmp)
			if os.Symlink(targets[i%2], tmp) == nil {
				_ = os.Rename(tmp, swap)
			}
		}
	}()
}

// TestSwapBetweenCheckAndUse: while a directory is swapped for a symlink out
// in a tight loop, reads through it either see the inside file, fail with
// ErrOutsideRoot, or find nothing; they never see the outside file, and
// writes through it never land outside.
func TestSwapBetweenCheckAndUse(t *testing.T) {
	f := newFixture(t)
	store := newStore(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	swapper(t, f, stop, &wg)
	var inside, escaped, missing atomic.Int64
	for i := 0; i < 3000; i++ {
		data, err := f.fs.ReadFile("swap/f.txt")
		switch {
		case err == nil && string(data) == insideText:
			inside.Add(1)
		case err == nil:
			close(stop)
			wg.Wait()
			t.Fatalf("read %q through a swapped symlink", data)
		case errors.Is(err, ErrOutsideRoot):
			escaped.Add(1)
		case errors.Is(err, fs.ErrNotExist):
			missing.Add(1)
		default:
			close(stop)
			wg.Wait()
			t.Fatalf("unexpected error: %v", err)
		}
		if i%10 == 0 {
			_, _ = Apply(f.fs, []Change{{Path: "swap/new.txt", PreimageSHA256: Absent, NewContent: []byte("x")}}, store)
			_ = os.Remove(filepath.Join(f.root, "swap_real", "new.txt"))
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("inside=%d refused=%d missing=%d", inside.Load(), escaped.Load(), missing.Load())
	if escaped.Load() == 0 || inside.Load() == 0 {
		t.Errorf("both link targets must be observed for the race to count")
	}
	if _, err := os.Lstat(filepath.Join(f.outside, "new.txt")); err == nil {
		t.Errorf("a write through the swapped symlink landed outside the workspace")
	}
}
