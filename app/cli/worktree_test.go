package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitCLI(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// TestWorktreeCLI: a run started with --isolation worktree writes in its
// worktree only; `worktree merge` shows the plan and its token, and applies
// only with that token; `worktree push` pushes the run's branch to a local
// bare remote only with the token of the push shown.
func TestWorktreeCLI(t *testing.T) {
	env := map[string]string{"AGENTHUB_HOME": t.TempDir()}
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitCLI(t, repo, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, repo, "add", "-A")
	gitCLI(t, repo, "commit", "-qm", "base")
	bare := filepath.Join(t.TempDir(), "remote.git")
	gitCLI(t, repo, "init", "-q", "--bare", bare)
	gitCLI(t, repo, "remote", "add", "origin", bare)
	pb := filepath.Join(t.TempDir(), "pb.toml")
	if err := os.WriteFile(pb, []byte(`version = 1
name = "wt"
[[step]]
say = "writing"
[[step.call]]
tool = "write_file"
args = { path = "a.txt", content = "from the run\n" }
[[step]]
say = "done"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, env, "workspace", "add", repo); code != 0 {
		t.Fatalf("workspace add: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, env, "run", "--workspace", repo, "--playbook", pb, "--isolation", "bogus", "task"); code == 0 ||
		!strings.Contains(stderr, "isolation") {
		t.Fatalf("a bogus isolation: %d %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, env, "run", "--workspace", repo, "--playbook", pb, "--isolation", "worktree",
		"--on-approval", "approve", "--json", "write")
	if code != 0 {
		t.Fatalf("run: %d\n%s\n%s", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(got) != "a\n" {
		t.Fatalf("the worktree run wrote into the checkout: %q", got)
	}
	code, stdout, stderr = runCLI(t, env, "worktree", "list", "--json")
	var list []struct {
		RunID       string   `json:"runId"`
		Uncommitted []string `json:"uncommitted"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &list) != nil || len(list) != 1 || len(list[0].Uncommitted) != 1 {
		t.Fatalf("list: %d %s %s", code, stdout, stderr)
	}
	run := list[0].RunID
	// doctor lists the worktree and what it holds.
	_, stdout, _ = runCLI(t, env, "doctor")
	if !strings.Contains(stdout, "worktree "+run) || !strings.Contains(stdout, "1 uncommitted") {
		t.Fatalf("doctor does not list the worktree:\n%s", stdout)
	}
	code, stdout, stderr = runCLI(t, env, "worktree", "merge", run)
	if code != 0 || !strings.Contains(stdout, "apply") || !strings.Contains(stdout, "+from the run") {
		t.Fatalf("merge plan: %d\n%s\n%s", code, stdout, stderr)
	}
	token := stdout[strings.LastIndex(stdout, "--approve ")+len("--approve "):]
	token = strings.Fields(token)[0]
	if code, _, stderr := runCLI(t, env, "worktree", "merge", run, "--approve", "0000000000000000"); code == 0 ||
		!strings.Contains(stderr, "conflict") {
		t.Fatalf("merge with a wrong token: %d %s", code, stderr)
	}
	// Push before merging (the merge removes the branch): the run's branch
	// holds no commit of its own, so the push creates it at the base.
	code, stdout, stderr = runCLI(t, env, "worktree", "push", run, "--json")
	var plan struct {
		Token string `json:"token"`
		To    string `json:"to"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &plan) != nil || plan.Token == "" {
		t.Fatalf("push plan: %d %s %s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, env, "worktree", "push", run, "--approve", "nottheshownone"); code == 0 {
		t.Fatalf("push with a wrong token: %s", stderr)
	}
	if gitCLI(t, bare, "for-each-ref") != "" {
		t.Fatal("a refused push reached the remote")
	}
	if code, stdout, stderr := runCLI(t, env, "worktree", "push", run, "--approve", plan.Token); code != 0 {
		t.Fatalf("push: %d %s %s", code, stdout, stderr)
	}
	if got := gitCLI(t, bare, "rev-parse", "agenthub/"+run); got != plan.To {
		t.Fatalf("remote at %s, want %s", got, plan.To)
	}
	if code, stdout, stderr := runCLI(t, env, "worktree", "merge", run, "--approve", token); code != 0 ||
		!strings.Contains(stdout, "worktree and its branch were removed") {
		t.Fatalf("merge: %d %s %s", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(got) != "from the run\n" {
		t.Fatalf("the merge did not reach the checkout: %q", got)
	}
	code, stdout, _ = runCLI(t, env, "audit", "export")
	for _, kind := range []string{`"worktree.created"`, `"worktree.merged"`, `"git.pushed"`} {
		if code != 0 || !strings.Contains(stdout, kind) {
			t.Errorf("audit lacks %s", kind)
		}
	}
}
