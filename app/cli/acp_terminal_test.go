package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/runtime/acp"
	"agenthub/backend/runtime/acp/acptest"
)

// These tests cover the terminals AgentHub offers an ACP agent: each
// terminal/create is gated exactly as run_shell's command is, and runs
// only once approved.

func TestACPTerminalApprovedRunsAndTheAgentGetsItsOutput(t *testing.T) {
	t.Parallel()
	_, evs, code, out := acpRun(t, "approve", func(dir string) acptest.Script {
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sub", "inside.txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return acptest.Script{Steps: []acptest.Step{
			{Terminal: &acptest.Terminal{Command: "echo hello; exit 3"}},
			{Terminal: &acptest.Terminal{Command: "printf", Args: []string{"%s|", "a b", "it's"}}},
			{Terminal: &acptest.Terminal{Command: "printf 'abcdefgh'", Limit: 4}},
			{Terminal: &acptest.Terminal{Command: "ls; echo $LANG", Cwd: "sub", Env: []string{"LANG=C"}}},
			{Say: "end"}}}
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	text := agentText(evs)
	for _, want := range []string{"terminal: exit 3 truncated false output: hello\n",
		"terminal: exit 0 truncated false output: a b|it's|", "terminal: exit 0 truncated true output: efgh",
		"terminal: exit 0 truncated false output: inside.txt\nC\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the agent did not see %q in:\n%s", want, text)
		}
	}
	asked := eventsOf(evs, backend.EvApprovalRequested)
	if len(asked) != 4 {
		t.Fatalf("approvals: %v", asked)
	}
	for _, a := range asked {
		preview, _ := a["preview"].(map[string]any)
		// An agent's terminal runs as long as a command may: it kills it when done.
		if a["kind"] != "shell" || a["title"] == "" || preview["timeoutSeconds"] != float64(600) {
			t.Errorf("approval: %v", a)
		}
	}
	// The same subject as run_shell's for the same command line.
	want := map[string]any{"kind": "shell", "command": "echo hello; exit 3", "cwd": "."}
	if got := asked[0]["subject"]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("subject %v, want %v", got, want)
	}
	want = map[string]any{"kind": "shell", "command": "ls; echo $LANG", "cwd": "sub", "env": map[string]any{"LANG": "C"}}
	if got := asked[3]["subject"]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("subject %v, want %v", got, want)
	}
	results := eventsOf(evs, backend.EvToolResult)
	var found bool
	for _, r := range results {
		if c := fmt.Sprint(r["content"]); strings.Contains(c, "exit code: 3") && strings.Contains(c, "hello") {
			found = true
		}
	}
	if !found {
		t.Errorf("no tool result holds the command's output: %v", results)
	}
	// The output also streamed while the command ran, as deltas of its call.
	terminalCalls := map[any]bool{}
	for _, c := range eventsOf(evs, backend.EvToolCall) {
		terminalCalls[c["toolCallId"]] = c["name"] == acp.ToolTerminal
	}
	var streamed bool
	for _, d := range eventsOf(evs, backend.EvToolDelta) {
		streamed = streamed || (terminalCalls[d["toolCallId"]] && strings.Contains(fmt.Sprint(d["text"]), "hello\n"))
	}
	if !streamed {
		t.Errorf("no run.tool.delta of a terminal call streamed its output: %v", eventsOf(evs, backend.EvToolDelta))
	}
}

func TestACPTerminalRejectedNeverRuns(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "ran")
	_, evs, code, out := acpRun(t, "reject", func(string) acptest.Script {
		return acptest.Script{Steps: []acptest.Step{{Terminal: &acptest.Terminal{Command: "touch " + marker}},
			{Say: "end"}}}
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("a rejected command ran")
	}
	if !strings.Contains(agentText(evs), "terminal: AgentHub: the command was not run: ") {
		t.Fatalf("the agent was not told: %q", agentText(evs))
	}
	if asked := eventsOf(evs, backend.EvApprovalRequested); len(asked) != 1 || asked[0]["kind"] != "shell" {
		t.Fatalf("approvals: %v", asked)
	}
}

func TestACPTerminalOutsideTheWorkspaceIsRefused(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "ran")
	_, evs, code, out := acpRun(t, "approve", func(string) acptest.Script {
		return acptest.Script{Steps: []acptest.Step{
			{Terminal: &acptest.Terminal{Command: "touch " + marker, Cwd: filepath.Dir(marker)}},
			{Terminal: &acptest.Terminal{Command: "touch " + marker, Env: []string{"GEMINI_API_KEY=x"}}},
			{Say: "end"}}}
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("a refused command ran")
	}
	text := agentText(evs)
	for _, want := range []string{"terminal: AgentHub: the path is outside the workspace",
		"terminal: AgentHub: the environment variable GEMINI_API_KEY is not allowed"} {
		if !strings.Contains(text, want) {
			t.Errorf("the agent did not see %q in:\n%s", want, text)
		}
	}
	if asked := eventsOf(evs, backend.EvApprovalRequested); len(asked) != 0 {
		t.Fatalf("a refused command was put to the reviewer: %v", asked)
	}
}

func TestACPTerminalKillStopsTheCommand(t *testing.T) {
	t.Parallel()
	_, evs, code, out := acpRun(t, "approve", func(string) acptest.Script {
		return acptest.Script{Steps: []acptest.Step{{Terminal: &acptest.Terminal{Command: "echo started; sleep 300", Kill: true}},
			{Say: "end"}}}
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(agentText(evs), "terminal: signal SIGTERM truncated false output: ") {
		t.Fatalf("the agent saw %q", agentText(evs))
	}
}

// TestACPTerminalCancelLeavesNoProcess: a cancel while an approved
// command runs in a terminal stops the command and everything it started,
// and the agent.
func TestACPTerminalCancelLeavesNoProcess(t *testing.T) {
	t.Parallel()
	env, dir := newGitWorkspace(t)
	bin, _ := os.Executable()
	cmd, err := acptest.WriteScript(t.TempDir(), bin, acptest.Script{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "sleep 300 & sleep 301; wait"}}, {Say: "end"}}})
	if err != nil {
		t.Fatal(err)
	}
	writeACPProfile(t, env, fmt.Sprintf("runtime = \"acp\"\ncommand = [%q, %q, %q]", cmd[0], cmd[1], cmd[2])+acceptAll)
	core, run := startProfileRun(t, env, dir, "gm", "sleep")
	tk := waitForApproval(t, core, run.ID)
	if _, err := api.NewApprovalsAPI(core).Decide(backend.Decision{ApprovalID: tk.ID, Kind: backend.ApproveOnce,
		SubjectHash: tk.SubjectHash}); err != nil {
		t.Fatal(err)
	}
	var sleeps []int
	for deadline := time.Now().Add(30 * time.Second); len(sleeps) < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the command did not start: %v", processesIn(dir))
		}
		sleeps = sleeps[:0]
		for _, pid := range processesIn(dir) {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.HasPrefix(string(b), "sleep\x00") {
				sleeps = append(sleeps, pid)
			}
		}
	}
	cancel(t, core, run.ID)
	for deadline := time.Now().Add(15 * time.Second); len(alive(processesIn(dir))) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left: %v", describe(alive(processesIn(dir))))
		}
	}
	if left := alive(sleeps); len(left) > 0 {
		t.Fatalf("the terminal's processes survived the cancel: %v", left)
	}
}

// agentText is every assistant message of the run: each terminal/create
// ends a message, since it is a call.
func agentText(evs []backend.Event) string {
	var b strings.Builder
	for _, m := range eventsOf(evs, backend.EvMessageCompleted) {
		b.WriteString(fmt.Sprint(m["text"]))
	}
	return b.String()
}
