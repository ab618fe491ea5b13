//go:build linux

package git

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A repository may hold FIFOs (a cloned one ships them, a command creates
// them): a tracked file replaced by one, an untracked one and a FIFO
// .gitignore. Status, with either engine, must neither block on them nor
// list them as files to commit: git itself does not track FIFOs.
func TestStatusNeverBlocksOnFIFOs(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, "tracked.txt", "one\n")
	write(t, dir, "sub/kept.txt", "kept\n")
	gitCmd(t, dir, "add", ".")
	gitCmd(t, dir, "commit", "-q", "-m", "base")
	if err := os.Remove(filepath.Join(dir, "tracked.txt")); err != nil {
		t.Fatal(err)
	}
	fifos := []string{"tracked.txt", "untracked.pipe", "sub/.gitignore"}
	for _, p := range fifos {
		if err := syscall.Mkfifo(filepath.Join(dir, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	release := func() {
		for _, p := range fifos {
			if f, err := os.OpenFile(filepath.Join(dir, p), os.O_RDWR, 0); err == nil {
				f.Close()
			}
		}
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The git CLI itself blocks on the FIFO .gitignore; Status bounds it
	// and falls back to go-git.
	old := cliTimeout
	cliTimeout = 3 * time.Second
	t.Cleanup(func() { cliTimeout = old })
	SetRunner(execRunner)
	t.Cleanup(func() { SetRunner(nil) })
	statuses := []engine{
		{"gogit", func(r *Repo, n int) (Report, error) { return r.StatusGoGit(n) }},
		{"status", func(r *Repo, n int) (Report, error) { return r.Status(n) }},
	}
	for _, e := range statuses {
		t.Run(e.name, func(t *testing.T) {
			type out struct {
				rep Report
				err error
			}
			done := make(chan out, 1)
			go func() { rep, err := e.status(r, DefaultMaxFiles); done <- out{rep, err} }()
			var o out
			select {
			case o = <-done:
			case <-time.After(30 * time.Second):
				for ; ; release() { // every FIFO it opens next blocks too
					select {
					case <-done:
						t.Fatal("status blocked on a FIFO")
					case <-time.After(100 * time.Millisecond):
					}
				}
			}
			if o.err != nil {
				t.Fatal(o.err)
			}
			got := map[string]State{}
			for _, f := range o.rep.Files {
				got[f.Path] = f.State
			}
			if got["tracked.txt"] != Deleted || len(got) != 1 {
				t.Fatalf("want only tracked.txt deleted (a FIFO is no file), got %+v", o.rep.Files)
			}
		})
	}
	// The CLI alone ends with its context, whatever git does.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := r.StatusCLI(ctx, execRunner, DefaultMaxFiles); done <- err }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		for ; ; release() {
			select {
			case <-done:
				t.Fatal("the CLI status outlived its context")
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}
