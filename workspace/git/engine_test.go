package git

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// execRunner is the tests' [Runner]: os/exec directly, which test files may
// use (the product's Runner goes through backend/proc).
func execRunner(ctx context.Context, dir string, env, args []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// engine is one way to compute a status; every status test runs with each.
type engine struct {
	name   string
	status func(r *Repo, maxFiles int) (Report, error)
}

var engines = []engine{
	{"gogit", func(r *Repo, n int) (Report, error) { return r.StatusGoGit(n) }},
	{"cli", func(r *Repo, n int) (Report, error) { return r.StatusCLI(context.Background(), execRunner, n) }},
}

// statusBoth computes the status of dir with both engines, fails the test
// when they disagree, and returns the report.
func statusBoth(t testing.TB, dir string, maxFiles int) Report {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var reps []Report
	for _, e := range engines {
		rep, err := e.status(r, maxFiles)
		if err != nil {
			t.Fatalf("%s status: %v", e.name, err)
		}
		reps = append(reps, rep)
	}
	if diff := cmp.Diff(reps[0], reps[1]); diff != "" {
		t.Errorf("the engines disagree (-gogit +cli):\n%s", diff)
	}
	return reps[1]
}

// TestMain keeps the user's git configuration out: HOME is an empty
// directory, so both engines see the same (absent) excludes file.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "agenthub-git-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	os.Unsetenv("XDG_CONFIG_HOME")
	code := m.Run()
	os.RemoveAll(home)
	if bigRepoDir != "" {
		os.RemoveAll(bigRepoDir)
	}
	os.Exit(code)
}
