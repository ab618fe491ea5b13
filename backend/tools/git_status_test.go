package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// commitAll makes a real repository at root with one commit of paths.
func commitAll(t *testing.T, root string, paths ...string) string {
	t.Helper()
	repo, err := gogit.PlainInit(root, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if _, err := wt.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	h, err := wt.Commit("initial", &gogit.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1e9, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func TestGitStatus(t *testing.T) {
	f := newFixture(t)
	f.write(t, "keep.txt", "same\n")
	f.write(t, "src/mod.go", "package src\n")
	f.write(t, "gone.txt", "bye\n")
	f.write(t, ".gitignore", "*.log\n")
	head := commitAll(t, f.root, "keep.txt", "src/mod.go", "gone.txt", ".gitignore")

	if res := f.execute(t, GitStatus, `{}`); res.IsError || res.Content != "on branch master at "+head[:12]+"; working tree clean\n" {
		t.Fatalf("clean status = %+v", res)
	}

	f.write(t, "src/mod.go", "package src\n\nvar x = 1\n")
	f.write(t, "new.txt", "hello\n")
	f.write(t, "debug.log", "ignored\n")
	if err := os.Remove(filepath.Join(f.root, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if a := f.action(t, GitStatus, `{}`); a != nil {
		t.Errorf("git_status was gated: %+v", a)
	}
	res := f.execute(t, GitStatus, `{}`)
	want := "on branch master at " + head[:12] + "; 3 changed paths\n" +
		"deleted\tgone.txt\n" +
		"untracked\tnew.txt\n" +
		"modified\tsrc/mod.go\n"
	if res.IsError || res.Content != want {
		t.Errorf("status:\n%s\nwant:\n%s", res.Content, want)
	}
	f.noMachinePaths(t, "result", res.Content)
}

func TestGitStatusWithoutCommits(t *testing.T) {
	f := newFixture(t)
	if _, err := gogit.PlainInit(f.root, false); err != nil {
		t.Fatal(err)
	}
	f.write(t, "a.txt", "a\n")
	res := f.execute(t, GitStatus, ``)
	if res.IsError || !strings.HasPrefix(res.Content, "on branch master, no commits yet; 1 changed paths\nuntracked\ta.txt\n") {
		t.Errorf("status = %+v", res)
	}
}

func TestGitStatusOutsideARepository(t *testing.T) {
	f := newFixture(t)
	res := f.execute(t, GitStatus, `{}`)
	if !res.IsError || !strings.Contains(res.Content, "the workspace is not a git repository") {
		t.Errorf("status = %+v", res)
	}
	f.noMachinePaths(t, "result", res.Content)
}
