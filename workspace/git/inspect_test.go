package git

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Inspect refuses what the workspace's file tools refuse and gives the blob
// a commit records for the rest.
func TestInspect(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("OUTSIDE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(dir, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"out": outside, "in": "a.txt", "dangling": "nope"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path, blob string
		refused    bool
	}{
		{"a.txt", gitCmd(t, dir, "hash-object", "a.txt"), false},
		{"in", "8d14cbf983b3fad683171c9418998d9f68340823", false}, // the blob of the link text "a.txt"
		{"dangling", "", false},
		{"hard.txt", "", true},
		{"out", "", true},
	}
	for _, tc := range cases {
		blob, reason, err := r.Inspect(tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if (reason != "") != tc.refused || (tc.blob != "" && blob != tc.blob) {
			t.Errorf("%s: blob %s, refusal %q", tc.path, blob, reason)
		}
	}
	if _, _, err := r.Inspect("missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// A commit with approved blobs records exactly them: a file edited after
// the approval fails it with ErrChanged and leaves the index as it was.
func TestCommitRefusesChangedContent(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	gitCmd(t, dir, "add", ".")
	gitCmd(t, dir, "commit", "-qm", "init")
	base := gitCmd(t, dir, "rev-parse", "HEAD")
	write(t, dir, "a.txt", "approved\n")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	approved, _, err := r.Inspect("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "edited after the approval\n")
	_, err = r.Commit(CommitRequest{Message: "m", Paths: []string{"a.txt"}, Base: base,
		Blobs: map[string]string{"a.txt": approved}, When: time.Now()})
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("want ErrChanged, got %v", err)
	}
	if head := gitCmd(t, dir, "rev-parse", "HEAD"); head != base {
		t.Fatal("a commit was made")
	}
	if st := gitCmd(t, dir, "status", "--porcelain"); st != "M a.txt" {
		t.Fatalf("the index was left changed: %q", st)
	}
	write(t, dir, "a.txt", "approved\n")
	if _, err := r.Commit(CommitRequest{Message: "m", Paths: []string{"a.txt"}, Base: base,
		Blobs: map[string]string{"a.txt": approved}, When: time.Now()}); err != nil {
		t.Fatal(err)
	}
}
