package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/workspace/git"
)

// TestRunGitStatusMatchesGoGit: the runner the tools install drives
// workspace/git's CLI engine through backend/proc, and on a real repository
// with every kind of change it reports what go-git's engine reports.
func TestRunGitStatusMatchesGoGit(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"keep.txt", "mod.txt", "gone.txt", "staged.txt", "d/e.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte("v1 "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commitAll(t, root, "keep.txt", "mod.txt", "gone.txt", "staged.txt", "d/e.txt")
	for f, c := range map[string]string{"mod.txt": "v2\n", "staged.txt": "v2\n", "new file.txt": "n\n", "x.log": "l\n"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "add", "staged.txt")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	r, err := git.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	viaCLI, err := r.StatusCLI(t.Context(), runGit, git.DefaultMaxFiles)
	if err != nil {
		t.Fatal(err)
	}
	viaGoGit, err := r.StatusGoGit(git.DefaultMaxFiles)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(viaGoGit, viaCLI); diff != "" {
		t.Errorf("the engines disagree (-gogit +cli):\n%s", diff)
	}
	if len(viaCLI.Files) != 5 {
		t.Errorf("files = %+v, want .gitignore, gone, mod, new file and staged", viaCLI.Files)
	}
}

// TestRunGitFailureIsAnError: a failing git is an error carrying git's
// message (workspace/git then falls back to go-git), never empty output.
func TestRunGitFailureIsAnError(t *testing.T) {
	_, err := runGit(t.Context(), t.TempDir(), git.CLIEnv(os.Environ()), []string{"status", "--porcelain=v2", "-z"})
	if err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Fatalf("err = %v, want git's own message", err)
	}
}
