// Package protocoltest holds what the protocol tests share: finding node
// and a test's pinned npm clients, a small git workspace, and an
// environment free of the caller's AgentHub settings. It starts processes
// through backend/proc (the only package that does) and takes its test as
// an interface (non-test code never imports testing).
package protocoltest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"agenthub/backend/proc"
)

// T is the part of *testing.T the helpers use.
type T interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Skip(args ...any)
	TempDir() string
}

// RequireNode returns node's path when it and each of packages are
// installed in dir/node_modules. Under CI (CI set) a missing one fails the
// test, so a CI without them cannot pass by running nothing; elsewhere the
// test is skipped, naming the install step.
func RequireNode(t T, dir string, packages ...string) string {
	t.Helper()
	missing := ""
	node, err := proc.Look("node", os.Getenv("PATH"))
	if err != nil {
		missing = "node is not on the PATH (Node.js 20.19+)"
	}
	for _, p := range packages {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil && missing == "" {
			missing = "the pinned client " + p + " is not installed in " + filepath.Base(dir) + "/node_modules: run scripts/deps.sh test"
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

// GitWorkspace is a git repository with one commit holding file, n
// numbered lines ("line 1" …).
func GitWorkspace(t T, file string, n int) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	git, err := proc.Look("git", os.Getenv("PATH"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init"}} {
		res, err := proc.Output(context.Background(), proc.Spec{Path: git, Args: args, Dir: dir, Env: os.Environ(), Timeout: time.Minute})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("git %v: %v (exit %d)\n%s", args, err, res.ExitCode, res.Stderr)
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
