package diffview

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// pair is one test case: the two sides of a file change.
type pair struct {
	name     string
	old, new Side
}

// external names a real patch tool and how to run it in a directory.
type external struct {
	name string
	argv func(patchFile string) []string
}

var externals = []external{
	{"git-apply", func(p string) []string { return []string{"git", "apply", "--check", p} }},
	{"patch-p1", func(p string) []string {
		return []string{"patch", "-p1", "--batch", "--silent", "--dry-run", "-i", p}
	}},
}

// applyExternal writes the old side into a fresh directory, checks the patch
// with the tool's dry-run mode, applies it for real and returns the new
// file's content (nil when the patch deletes it) and mode.
func applyExternal(t *testing.T, tool external, p pair, patch []byte) ([]byte, os.FileMode) {
	t.Helper()
	dir := t.TempDir()
	if p.old.Path != "" {
		writeSide(t, dir, p.old)
	}
	patchFile := filepath.Join(t.TempDir(), "change.patch")
	if err := os.WriteFile(patchFile, patch, 0o644); err != nil {
		t.Fatal(err)
	}
	check := tool.argv(patchFile)
	run(t, dir, check...)
	apply := make([]string, 0, len(check))
	for _, a := range check {
		if a != "--check" && a != "--dry-run" {
			apply = append(apply, a)
		}
	}
	run(t, dir, apply...)
	if p.new.Path == "" {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p.old.Path))); !os.IsNotExist(err) {
			t.Fatalf("%s: deleted file still exists (err %v)", tool.name, err)
		}
		return nil, 0
	}
	full := filepath.Join(dir, filepath.FromSlash(p.new.Path))
	got, err := os.ReadFile(full)
	if err != nil {
		t.Fatalf("%s: read result: %v", tool.name, err)
	}
	info, err := os.Stat(full)
	if err != nil {
		t.Fatal(err)
	}
	return got, info.Mode().Perm()
}

func writeSide(t *testing.T, dir string, s Side) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(s.Path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	perm := os.FileMode(0o644)
	if s.Mode == ModeExecutable {
		perm = 0o755
	}
	if err := os.WriteFile(full, s.Content, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(full, perm); err != nil {
		t.Fatal(err)
	}
}

// run executes a tool with the directory's parent as git's ceiling, so git
// never discovers a repository above the temporary directory.
func run(t *testing.T, dir string, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir), "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out.String())
	}
}

func requireTools(t *testing.T) {
	t.Helper()
	for _, name := range []string{"git", "patch"} {
		if _, err := exec.LookPath(name); err != nil {
			t.Fatalf("%s is required by this test (apt-get install -y %s): %v", name, name, err)
		}
	}
}
