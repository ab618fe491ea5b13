package git

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// gitCmd runs the git CLI in dir with a fixed identity and no user config.
func gitCmd(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	gitCmd(t, dir, "init", "-q", "-b", "main")
	return dir
}

// dotGit snapshots .git (every file's bytes and mtime) to prove reads write
// nothing.
func dotGit(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join(dir, ".git")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		rel, _ := filepath.Rel(root, p)
		out[rel] = info.ModTime().String() + ":" + string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStatusEmptyRepo(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, "a.txt", "a")
	write(t, dir, "d/b.txt", "b")
	gitCmd(t, dir, "add", "d/b.txt")
	got := statusBoth(t, dir, DefaultMaxFiles)
	want := Report{Branch: "main", Files: []File{
		{Path: "a.txt", State: Untracked},
		{Path: "d/b.txt", State: Added, Staged: true},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func TestStatus(t *testing.T) {
	dir := newRepo(t)
	for _, f := range []string{"keep.txt", "mod.txt", "del.txt", "staged.txt", "reverted.txt", "read.txt", "exec.sh", "logs/tracked.log"} {
		write(t, dir, f, "original "+f+"\n")
	}
	write(t, dir, ".gitignore", "*.log\nbuild/\n")
	gitCmd(t, dir, "add", "-A")
	gitCmd(t, dir, "add", "-f", "logs/tracked.log")
	gitCmd(t, dir, "commit", "-q", "-m", "base")
	base := gitCmd(t, dir, "rev-parse", "HEAD")

	write(t, dir, "mod.txt", "changed\n")
	if err := os.Remove(filepath.Join(dir, "del.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "staged.txt", "staged change\n")
	gitCmd(t, dir, "add", "staged.txt")
	write(t, dir, "reverted.txt", "temporary\n")
	gitCmd(t, dir, "add", "reverted.txt")
	write(t, dir, "reverted.txt", "original reverted.txt\n") // back to HEAD, index still differs
	if _, err := os.ReadFile(filepath.Join(dir, "read.txt")); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "read.txt"), future, future); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "exec.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "new/deep/file.go", "package x\n")
	write(t, dir, "ignored.log", "noise")
	write(t, dir, "build/out.bin", "noise")
	write(t, dir, "logs/tracked.log", "tracked and ignored, still reported\n")
	if err := os.Symlink("keep.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}

	before := dotGit(t, dir)
	got := statusBoth(t, dir, DefaultMaxFiles) // both engines, each of which must write nothing
	want := Report{Base: base, Branch: "main", Files: []File{
		{Path: "del.txt", State: Deleted},
		{Path: "exec.sh", State: Modified, ModeChanged: true},
		{Path: "link", State: Untracked},
		{Path: "logs/tracked.log", State: Modified},
		{Path: "mod.txt", State: Modified},
		{Path: "new/deep/file.go", State: Untracked},
		{Path: "staged.txt", State: Modified, Staged: true},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, dotGit(t, dir)); diff != "" {
		t.Errorf("status wrote into .git (-before +after):\n%s", diff)
	}
	if head := gitCmd(t, dir, "rev-parse", "HEAD"); head != base {
		t.Errorf("HEAD moved: %s → %s", base, head)
	}
}

func TestHeadBlob(t *testing.T) {
	dir := newRepo(t)
	if _, ok, err := HeadBlob(dir, "a.txt"); ok || err != nil {
		t.Errorf("empty repo: HeadBlob = %v, %v; want not found", ok, err)
	}
	write(t, dir, "a.txt", "committed\r\n")
	write(t, dir, "d/b.bin", "\x00\x01binary")
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, dir, "add", "-A")
	gitCmd(t, dir, "commit", "-q", "-m", "one")
	write(t, dir, "a.txt", "working copy")
	before := dotGit(t, dir)
	tests := []struct {
		path, want string
		ok         bool
		err        error
	}{
		{"a.txt", "committed\r\n", true, nil},
		{"d/b.bin", "\x00\x01binary", true, nil},
		{"link", "a.txt", true, nil},
		{"missing.txt", "", false, nil},
		{"d", "", false, nil},
		{"d/missing", "", false, nil},
		{"../a.txt", "", false, ErrBadPath},
		{"/a.txt", "", false, ErrBadPath},
		{"./a.txt", "", false, ErrBadPath},
		{"", "", false, ErrBadPath},
	}
	for _, tt := range tests {
		got, ok, err := HeadBlob(dir, tt.path)
		if !errors.Is(err, tt.err) || ok != tt.ok || string(got) != tt.want {
			t.Errorf("HeadBlob(%q) = %q, %v, %v; want %q, %v, %v", tt.path, got, ok, err, tt.want, tt.ok, tt.err)
		}
	}
	if diff := cmp.Diff(before, dotGit(t, dir)); diff != "" {
		t.Errorf("HeadBlob wrote into .git (-before +after):\n%s", diff)
	}
}

func TestNotRepository(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, "sub/x", "x")
	for _, d := range []string{t.TempDir(), filepath.Join(dir, "sub")} {
		if _, err := Status(d); !errors.Is(err, ErrNotRepository) {
			t.Errorf("Status(%s) = %v, want ErrNotRepository", d, err)
		}
	}
}
