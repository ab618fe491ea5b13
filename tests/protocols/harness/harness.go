// Package harness holds what the protocol conformance tests share: a
// temporary git repository to allowlist, an environment without the
// caller's AgentHub settings, and the check that node and a test's pinned
// clients are installed. It does not import testing (non-test code never
// does): TB is the part of testing.TB it uses.
package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Skip(args ...any)
	TempDir() string
}

// GitWorkspace is a git repository holding name, n numbered lines
// ("line 1" to "line n"), committed.
func GitWorkspace(t TB, name string, n int) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// WithoutAgentHubVars drops the caller's AGENTHUB_* settings, so a test's
// data directory and engine are its own.
func WithoutAgentHubVars(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "AGENTHUB_") {
			out = append(out, kv)
		}
	}
	return out
}

// RequireNode returns node when it and every package of pkgs is installed
// in dir/node_modules; under CI a missing one fails the test instead of
// skipping it, so a CI without the clients cannot pass by running nothing.
func RequireNode(t TB, dir string, pkgs ...string) string {
	t.Helper()
	missing := ""
	node, err := exec.LookPath("node")
	if err != nil {
		missing = "node is not on the PATH (Node.js 20.19+)"
	} else {
		for _, p := range pkgs {
			if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
				missing = "the pinned clients are not installed in tests/protocols/" + filepath.Base(dir) + "/node_modules (" + p +
					"): run scripts/deps.sh test"
				break
			}
		}
	}
	if missing == "" {
		return node
	}
	if os.Getenv("CI") != "" {
		t.Fatal(missing)
	}
	t.Skip(missing)
	return ""
}
