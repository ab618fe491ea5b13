package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"

	"agenthub/backend"
)

func head(t *testing.T, root string) string {
	t.Helper()
	repo, err := gogit.PlainOpen(root)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	return ref.Hash().String()
}

func TestGitDiff(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.txt", "one\ntwo\n")
	f.write(t, "gone.txt", "bye\n")
	commitAll(t, f.root, "a.txt", "gone.txt")
	if res := f.execute(t, GitDiff, `{}`); res.IsError || res.Content != "no differences from HEAD" {
		t.Fatalf("clean diff: %+v", res)
	}
	f.write(t, "a.txt", "one\nTWO\n")
	f.write(t, "new.txt", "hello\n")
	f.write(t, ".env", "TOKEN=x\n")
	if err := os.Remove(filepath.Join(f.root, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if a := f.action(t, GitDiff, `{}`); a != nil {
		t.Fatalf("git_diff was gated: %+v", a)
	}
	res := f.execute(t, GitDiff, `{}`)
	for _, want := range []string{"-two\n+TWO\n", "+++ b/new.txt", "deleted file mode", "-bye", "diff of .env withheld"} {
		if !strings.Contains(res.Content, want) {
			t.Fatalf("diff lacks %q:\n%s", want, res.Content)
		}
	}
	if strings.Contains(res.Content, "TOKEN=x") {
		t.Fatal("a secret file's content was shown")
	}
	if one := f.execute(t, GitDiff, `{"path":"a.txt"}`); strings.Contains(one.Content, "new.txt") {
		t.Fatalf("path filter ignored:\n%s", one.Content)
	}
	noRepo := newFixture(t)
	if res := noRepo.execute(t, GitDiff, `{}`); !res.IsError {
		t.Fatal("git_diff outside a repository must be a tool error")
	}
}

func TestGitCommitIsGatedAndBound(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.txt", "one\n")
	base := commitAll(t, f.root, "a.txt")
	f.write(t, "a.txt", "two\n")
	f.write(t, "b.txt", "new\n")

	if a := f.action(t, GitCommit, `{"message":""}`); a != nil {
		t.Fatal("an empty message must not reach the gate")
	}
	a := f.action(t, GitCommit, `{"message":"agent work","paths":["a.txt"]}`)
	if a == nil || a.Kind != backend.ActionCommit {
		t.Fatalf("commit not gated as commit: %+v", a)
	}
	var subject map[string]any
	if err := json.Unmarshal(a.Subject, &subject); err != nil || subject["base"] != base || subject["message"] != "agent work" {
		t.Fatalf("subject does not bind message and base: %s", a.Subject)
	}
	if head(t, f.root) != base {
		t.Fatal("Action committed")
	}
	res := f.execute(t, GitCommit, `{"message":"agent work","paths":["a.txt"]}`)
	if res.IsError || !strings.Contains(res.Content, "committed") {
		t.Fatalf("execute: %+v", res)
	}
	if head(t, f.root) == base {
		t.Fatal("HEAD did not move")
	}
	// The second Action sees a different base: the first approval cannot
	// cover it (drift), and b.txt alone is what remains.
	again := f.action(t, GitCommit, `{"message":"agent work"}`)
	var s2 map[string]any
	_ = json.Unmarshal(again.Subject, &s2)
	if s2["base"] == base || len(s2["paths"].([]any)) != 1 {
		t.Fatalf("second proposal: %s", again.Subject)
	}
	if res := f.execute(t, GitCommit, `{"message":"m","paths":["nope.txt"]}`); !res.IsError {
		t.Fatal("committing an unchanged path must be a tool error")
	}
}
