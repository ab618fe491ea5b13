package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
)

// newGitWorkspace makes a real git repository with a README and allowlists
// it in a fresh data directory.
func newGitWorkspace(t *testing.T) (env map[string]string, dir string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Widget\n\nA small project.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	env = map[string]string{"AGENTHUB_HOME": t.TempDir(), "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	if code, _, errOut := runCLI(t, env, "workspace", "add", dir); code != 0 {
		t.Fatalf("workspace add: %d %s", code, errOut)
	}
	return env, dir
}

// decodeNDJSON parses --json output and checks the envelope and sequence.
func decodeNDJSON(t *testing.T, out string, from int64) []backend.Event {
	t.Helper()
	var evs []backend.Event
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev backend.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not an NDJSON event line: %q: %v", sc.Text(), err)
		}
		if ev.SchemaVersion == 0 || ev.ID == "" || ev.RunID == "" || ev.Timestamp == "" {
			t.Fatalf("incomplete envelope: %s", sc.Text())
		}
		if want := from + int64(len(evs)) + 1; ev.Sequence != want {
			t.Fatalf("event %s has sequence %d, want %d (gap or duplicate)", ev.Type, ev.Sequence, want)
		}
		evs = append(evs, ev)
	}
	return evs
}

func hasType(evs []backend.Event, typ backend.EventType) bool {
	for _, ev := range evs {
		if ev.Type == typ {
			return true
		}
	}
	return false
}

// TestRunDemoWaitsThenApproveLater is the demo end to end through the CLI:
// without a TTY the patch stays pending (exit 3, nothing written); a later
// `approve` in a new process continues the same run to completion.
func TestRunDemoWaitsThenApproveLater(t *testing.T) {
	env, dir := newGitWorkspace(t)
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--json", "tour this repository")
	if code != ExitWaiting {
		t.Fatalf("run: exit %d, want 3\nstdout %s\nstderr %s", code, out, errOut)
	}
	evs := decodeNDJSON(t, out, 0)
	runID := evs[0].RunID
	if evs[0].Type != backend.EvRunCreated || !hasType(evs, backend.EvApprovalRequested) {
		t.Fatalf("unexpected events: %v", evs)
	}
	if !strings.Contains(errOut, "agenthub approve ") {
		t.Fatalf("no hint how to approve later: %s", errOut)
	}
	tour := filepath.Join(dir, "AGENTHUB_TOUR.md")
	if _, err := os.Stat(tour); !os.IsNotExist(err) {
		t.Fatalf("the patch was written before approval: %v", err)
	}

	code, out, _ = runCLI(t, env, "approvals", "list", "--json")
	var pending []backend.ApprovalRequest
	if err := json.Unmarshal([]byte(out), &pending); code != 0 || err != nil || len(pending) != 1 {
		t.Fatalf("approvals list: %d %v %s", code, err, out)
	}
	if pending[0].Kind != backend.ActionPatch || pending[0].RunID != runID {
		t.Fatalf("pending approval: %+v", pending[0])
	}

	// The shell step asks again; --on-approval approve answers it.
	code, out, errOut = runCLI(t, env, "approve", pending[0].ID, "--json", "--on-approval", "approve")
	if code != ExitOK {
		t.Fatalf("approve: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	rest := decodeNDJSON(t, out, evs[len(evs)-1].Sequence)
	if rest[0].RunID != runID || hasType(rest, backend.EvRunCreated) || !hasType(rest, backend.EvRunCompleted) {
		t.Fatalf("approve did not continue the same run to completion: %v", rest)
	}
	b, err := os.ReadFile(tour)
	if err != nil || !strings.Contains(string(b), "README.md") {
		t.Fatalf("the approved summary is missing or wrong: %v %q", err, b)
	}

	code, out, _ = runCLI(t, env, "runs", "show", runID, "--json")
	var r backend.RunSummary
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.State != backend.RunCompleted || !r.Scripted {
		t.Fatalf("runs show: %d %v %+v", code, err, r)
	}
	code, out, _ = runCLI(t, env, "runs", "events", runID, "--json", "--since", "3")
	if all := decodeNDJSON(t, out, 3); code != 0 || int64(len(all))+3 != r.LastSequence {
		t.Fatalf("runs events --since 3: %d events, last sequence %d", len(all), r.LastSequence)
	}
}

func TestRunRejectTellsTheAgentAndCompletes(t *testing.T) {
	env, dir := newGitWorkspace(t)
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--on-approval", "reject", "tour")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "AGENTHUB_TOUR.md")); !os.IsNotExist(err) {
		t.Fatal("a rejected patch was written")
	}
	if !strings.Contains(out, "✓ completed") || !strings.Contains(out, "agent: ") {
		t.Fatalf("human output lacks the transcript: %s", out)
	}
}

func TestRunPromptReadsTheUsersAnswers(t *testing.T) {
	env, dir := newGitWorkspace(t)
	var outBuf, errBuf strings.Builder
	code := mainWith(t, env, strings.NewReader("a\nr\nnot now\n"), &outBuf, &errBuf,
		"run", "--workspace", dir, "--on-approval", "prompt", "tour")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, outBuf.String(), errBuf.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "AGENTHUB_TOUR.md")); err != nil {
		t.Fatalf("the approved patch was not applied: %v", err)
	}
	if !strings.Contains(errBuf.String(), "git status --short") {
		t.Fatalf("the shell approval did not show the command: %s", errBuf.String())
	}
}

func TestRunPromptEndOfInputLeavesPending(t *testing.T) {
	env, dir := newGitWorkspace(t)
	var outBuf, errBuf strings.Builder
	code := mainWith(t, env, strings.NewReader(""), &outBuf, &errBuf,
		"run", "--workspace", dir, "--on-approval", "prompt", "tour")
	if code != ExitWaiting {
		t.Fatalf("exit %d, want 3: end of input must never approve\n%s", code, errBuf.String())
	}
}

func TestRunErrors(t *testing.T) {
	env, dir := newGitWorkspace(t)
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("version = 1\n[[step]]\n[[step.call]]\ntool='list_dir'\n[[step]]\nexpect=['NO SUCH TEXT']\nsay='x'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no workspace flag", []string{"run", "task"}, ExitUsage, "--workspace"},
		{"no task", []string{"run", "--workspace", dir}, ExitUsage, "needs a task"},
		{"bad mode", []string{"run", "--workspace", dir, "--on-approval", "yes", "t"}, ExitUsage, "--on-approval"},
		{"outside allowlist", []string{"run", "--workspace", t.TempDir(), "t"}, ExitFailed, "workspace_outside_allowlist"},
		{"unknown profile", []string{"run", "--workspace", dir, "--profile", "nope", "t"}, ExitFailed,
			"next: Choose one of the profiles: demo"},
		{"playbook expectation", []string{"run", "--workspace", dir, "--playbook", bad, "t"}, ExitFailed, "playbook step 2"},
		{"missing playbook", []string{"run", "--workspace", dir, "--playbook", bad + ".x", "t"}, ExitFailed, "invalid_input"},
		{"unknown run", []string{"runs", "show", "run_nope"}, ExitFailed, "no such run (not_found)"},
		{"unknown approval", []string{"approve", "apr_nope"}, ExitFailed, "approvals list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, env, tc.args...)
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("exit %d, want %d with %q\nstdout %s\nstderr %s", code, tc.code, tc.want, out, errOut)
			}
		})
	}
}
