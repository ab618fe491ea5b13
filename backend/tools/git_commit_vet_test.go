package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
)

// committedFiles lists the files of HEAD's tree.
func committedFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	repo, err := gogit.PlainOpen(root)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range []string{"a.txt", "new.txt", ".env", "hard.txt", "out-link", "in-link", "config/credentials.json"} {
		if f, err := tree.File(name); err == nil {
			body, _ := f.Contents()
			out[name] = body
		}
	}
	return out
}

// git_commit committed what the file tools refuse: with default paths an
// untracked .env, and a hard link to a file outside the workspace (its
// content then sat in the repository). It now leaves out secret files, hard
// links, links leading out and anything not a regular file, says so in the
// approval and the result, and refuses them when they are named.
func TestGitCommitLeavesOutWhatFileToolsRefuse(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.txt", "one\n")
	commitAll(t, f.root, "a.txt")
	outside := filepath.Join(t.TempDir(), "outside-secret.txt")
	if err := os.WriteFile(outside, []byte("OUTSIDE-SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write(t, "a.txt", "two\n")
	f.write(t, "new.txt", "new\n")
	f.write(t, ".env", "TOKEN=sk-live-123\n")
	f.write(t, "config/credentials.json", `{"key":"x"}`)
	if err := os.Link(outside, filepath.Join(f.root, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.root, "out-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("new.txt", filepath.Join(f.root, "in-link")); err != nil {
		t.Fatal(err)
	}

	a := f.action(t, GitCommit, `{"message":"agent work"}`)
	if a == nil {
		t.Fatal("no approval proposed")
	}
	var pv struct {
		Files []struct {
			Path string `json:"path"`
			Blob string `json:"blob"`
		} `json:"files"`
		Excluded []struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
		} `json:"excluded"`
	}
	mustJSON(t, a.Preview, &pv)
	var shown, left []string
	for _, f := range pv.Files {
		shown = append(shown, f.Path)
	}
	for _, x := range pv.Excluded {
		left = append(left, x.Path)
		if x.Reason == "" {
			t.Errorf("%s left out without a reason", x.Path)
		}
	}
	wantShown := []string{"a.txt", "in-link", "new.txt"}
	wantLeft := []string{".env", "config/credentials.json", "hard.txt", "out-link"}
	if !slices.Equal(shown, wantShown) || !slices.Equal(left, wantLeft) {
		t.Fatalf("approval shows %v, leaves out %v; want %v and %v", shown, left, wantShown, wantLeft)
	}
	var subj struct {
		Paths []string `json:"paths"`
		Files []struct {
			Path string `json:"path"`
			Blob string `json:"blob"`
		} `json:"files"`
	}
	mustJSON(t, a.Subject, &subj)
	if !slices.Equal(subj.Paths, wantShown) || len(subj.Files) != len(wantShown) || subj.Files[0].Blob == "" {
		t.Fatalf("subject does not bind the files and their content: %s", a.Subject)
	}

	res := f.execute(t, GitCommit, `{"message":"agent work"}`)
	if res.IsError {
		t.Fatalf("commit failed: %s", res.Content)
	}
	for _, p := range wantLeft {
		if !strings.Contains(res.Content, p) {
			t.Errorf("the result does not say %s was left out:\n%s", p, res.Content)
		}
	}
	got := committedFiles(t, f.root)
	for _, p := range wantLeft {
		if _, ok := got[p]; ok {
			t.Errorf("%s was committed", p)
		}
	}
	for _, body := range got {
		if strings.Contains(body, "OUTSIDE-SECRET") || strings.Contains(body, "sk-live") {
			t.Fatalf("a refused file's content is in the repository: %v", got)
		}
	}
	if got["a.txt"] != "two\n" || got["new.txt"] != "new\n" || got["in-link"] != "new.txt" {
		t.Fatalf("committed %v", got)
	}

	// Named, each is refused, and nothing is committed.
	for _, p := range wantLeft {
		args, _ := json.Marshal(map[string]any{"message": "m", "paths": []string{p}})
		if a := f.action(t, GitCommit, string(args)); a != nil {
			t.Errorf("%s: a refused commit was proposed for approval", p)
		}
		if res := f.execute(t, GitCommit, string(args)); !res.IsError || !strings.Contains(res.Content, "refused") {
			t.Errorf("%s: want a refusal, got %+v", p, res)
		}
	}
}

// The approval binds the content of the files: a file edited after the
// approval changes the subject (drift), and the commit holds exactly what
// was shown.
func TestGitCommitBindsContent(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.txt", "one\n")
	commitAll(t, f.root, "a.txt")
	f.write(t, "a.txt", "two\n")
	a := f.action(t, GitCommit, `{"message":"m"}`)
	f.write(t, "a.txt", "three\n")
	if b := f.action(t, GitCommit, `{"message":"m"}`); string(b.Subject) == string(a.Subject) {
		t.Fatal("an edit after the approval kept the subject")
	}
}
