//go:build linux

package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWriteSwapDirForLink: wdir is atomically exchanged (renameat2
// RENAME_EXCHANGE) between a real directory and a symlink out, so it always
// exists and flips kind between any check and any use. Applies into it either
// land inside or are refused; nothing is ever created outside.
func TestWriteSwapDirForLink(t *testing.T) {
	f := newFixture(t)
	store := newStore(t)
	wdir := filepath.Join(f.root, "wdir")
	other := filepath.Join(f.root, "wdir_other")
	mustMkdir(t, wdir)
	if err := os.Symlink("../outside", other); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, wdir, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE); err != nil {
		t.Fatalf("this filesystem cannot exchange names: %v", err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = unix.Renameat2(unix.AT_FDCWD, wdir, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE)
			}
		}
	}()
	defer func() {
		if stop != nil {
			close(stop)
			wg.Wait()
		}
	}()
	var applied, refused int
	for i := 0; i < 5000 && applied < 5; i++ {
		name := fmt.Sprintf("new-%d.txt", i)
		_, err := Apply(f.fs, []Change{{Path: "wdir/" + name, PreimageSHA256: Absent, NewContent: []byte("x")}}, store)
		switch {
		case err == nil:
			applied++
		case errors.Is(err, ErrOutsideRoot):
			refused++
		}
	}
	close(stop)
	wg.Wait()
	stop = nil
	if names, _ := filepath.Glob(filepath.Join(f.outside, "*")); len(names) != 3 {
		t.Fatalf("outside directory holds %d entries, want the original 3: an apply escaped", len(names))
	}
	t.Logf("applied=%d refused=%d", applied, refused)
	if refused == 0 {
		t.Errorf("the symlink was never observed: the race did not happen")
	}
}
