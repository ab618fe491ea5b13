package git

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCommitNamedPathsOnly(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	write(t, dir, "gone.txt", "x\n")
	gitCmd(t, dir, "add", ".")
	gitCmd(t, dir, "commit", "-qm", "init")
	base := gitCmd(t, dir, "rev-parse", "HEAD")
	write(t, dir, "a.txt", "a changed\n")
	write(t, dir, "new.txt", "new\n")
	write(t, dir, "left-alone.txt", "not in this commit\n")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	hash, err := r.Commit(CommitRequest{Message: "agent change", Paths: []string{"a.txt", "new.txt", "gone.txt"}, Base: base, When: when})
	if err != nil {
		t.Fatal(err)
	}
	if head := gitCmd(t, dir, "rev-parse", "HEAD"); head != hash {
		t.Fatalf("HEAD %s, commit %s", head, hash)
	}
	files := gitCmd(t, dir, "show", "--name-status", "--format=%s", "HEAD")
	for _, want := range []string{"agent change", "M\ta.txt", "A\tnew.txt", "D\tgone.txt"} {
		if !strings.Contains(files, want) {
			t.Fatalf("commit lacks %q:\n%s", want, files)
		}
	}
	if strings.Contains(files, "left-alone.txt") {
		t.Fatalf("an unnamed file was committed:\n%s", files)
	}
	if st := gitCmd(t, dir, "status", "--porcelain"); st != "?? left-alone.txt" {
		t.Fatalf("status after commit: %q", st)
	}
}

func TestCommitRefusals(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	gitCmd(t, dir, "add", ".")
	gitCmd(t, dir, "commit", "-qm", "init")
	base := gitCmd(t, dir, "rev-parse", "HEAD")
	write(t, dir, "a.txt", "changed\n")
	write(t, dir, "user.txt", "the user's own staged work\n")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		setup func()
		req   CommitRequest
		want  error
	}{
		{"stale base", nil, CommitRequest{Message: "m", Paths: []string{"a.txt"}, Base: "0000"}, ErrStale},
		{"no paths", nil, CommitRequest{Message: "m", Base: base}, ErrNothingToCommit},
		{"unchanged path", nil, CommitRequest{Message: "m", Paths: []string{"nope.txt"}, Base: base}, ErrNothingToCommit},
		{"bad path", nil, CommitRequest{Message: "m", Paths: []string{"../x"}, Base: base}, ErrBadPath},
		{"other staged work", func() { gitCmd(t, dir, "add", "user.txt") },
			CommitRequest{Message: "m", Paths: []string{"a.txt"}, Base: base}, ErrOtherStaged},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup()
			}
			if _, err := r.Commit(tc.req); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if head := gitCmd(t, dir, "rev-parse", "HEAD"); head != base {
				t.Fatal("a refused commit moved HEAD")
			}
		})
	}
}
