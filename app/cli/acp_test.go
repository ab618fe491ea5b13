package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/runtime/acp"
	"agenthub/backend/runtime/acp/acptest"
)

// These tests run the ACP runtime (runtime = "acp") against a real ACP
// agent process written with acp-go-sdk: this test binary, re-executed as
// the scripted agent of acptest. They cover what Gemini CLI does not do:
// reads served by the client, writes without a permission request, errors
// that reach the agent intact, unreadable output, exits and auth failures.

func init() { acptest.MaybeServeAgent() }

// acceptAll is the profile setting an arbitrary ACP agent needs to run
// under the default policy: it may write, run commands and fetch without
// asking, so its gating of every kind is advisory (acp.Capabilities), and
// AgentHub refuses the run unless the profile accepts that.
const acceptAll = "\naccept_advisory = [\"write\", \"patch\", \"shell\", \"network\"]"

// acpRun runs one task on an acp profile whose agent plays script.
func acpRun(t *testing.T, onApproval string, setup func(dir string) acptest.Script) (string, []backend.Event, int, string) {
	t.Helper()
	env, dir := newGitWorkspace(t)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := acptest.WriteScript(t.TempDir(), bin, setup(dir))
	if err != nil {
		t.Fatal(err)
	}
	var quoted []string
	for _, c := range cmd {
		quoted = append(quoted, fmt.Sprintf("%q", c))
	}
	writeACPProfile(t, env, "runtime = \"acp\"\ncommand = ["+strings.Join(quoted, ", ")+"]\nrun_timeout = \"1m\""+acceptAll)
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "gm", "--json",
		"--on-approval", onApproval, "do the task")
	if strings.Contains(out, dir) {
		t.Errorf("an event holds the workspace's absolute path:\n%s", out)
	}
	if code != 0 {
		return dir, nil, code, out + errOut
	}
	return dir, decodeNDJSON(t, out, 0), code, out
}

// finalText is the agent's answer: the text of the last assistant message.
func finalText(evs []backend.Event) string {
	done := eventsOf(evs, backend.EvMessageCompleted)
	if len(done) == 0 {
		return ""
	}
	return fmt.Sprint(done[len(done)-1]["text"])
}

func TestACPReadsServedFromTheWorkspace(t *testing.T) {
	t.Parallel()
	_, evs, code, out := acpRun(t, "reject", func(dir string) acptest.Script {
		if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("TOKEN=x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return acptest.Script{Steps: []acptest.Step{{Read: "README.md"}, {Read: "../outside.txt"}, {Read: "/etc/passwd"},
			{Read: ".env"}, {Read: "missing.txt"}, {Say: "end"}}}
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	text := finalText(evs)
	for _, want := range []string{"read: # Widget\n\nA small project.\n", "read error: AgentHub: the path is outside the workspace", "read error: AgentHub: .env is a secret file",
		"read error: Resource not found: missing.txt"} {
		if strings.Count(text, want) != map[bool]int{true: 2, false: 1}[strings.Contains(want, "outside")] {
			t.Errorf("the agent did not see %q in:\n%s", want, text)
		}
	}
	if reads := eventsOf(evs, backend.EvFileRead); len(reads) != 1 || reads[0]["path"] != "README.md" {
		t.Fatalf("run.file.read: %v", reads)
	}
	if len(eventsOf(evs, backend.EvApprovalRequested)) != 0 || !hasType(evs, backend.EvRunCompleted) {
		t.Fatal("reads must not ask, and the run must complete")
	}
	started := eventsOf(evs, backend.EvRuntimeStarted)
	if len(started) != 1 || started[0]["agent"] != "agenthub-test-agent" || started[0]["testedVersion"] != "" ||
		started[0]["runtime"] != "acp" {
		t.Fatalf("runtime.started: %v", started)
	}
}

func TestACPWriteWithoutPermissionIsAStagedPatch(t *testing.T) {
	t.Parallel()
	script := func(string) acptest.Script {
		return acptest.Script{Steps: []acptest.Step{{Write: &acptest.File{Path: "new.txt", Content: "new\n"}}, {Say: "end"}}}
	}
	t.Run("approved", func(t *testing.T) {
		t.Parallel()
		dir, evs, code, out := acpRun(t, "approve", script)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "new\n" {
			t.Fatalf("new.txt: %q %v", b, err)
		}
		asked := eventsOf(evs, backend.EvApprovalRequested)
		if len(asked) != 1 || asked[0]["kind"] != "patch" || !strings.Contains(finalText(evs), "write ok") {
			t.Fatalf("approval %v, agent saw %q", asked, finalText(evs))
		}
		if applied := eventsOf(evs, backend.EvPatchApplied); len(applied) != 1 || applied[0]["tool"] != acp.ToolWrite {
			t.Fatalf("run.patch.applied: %v", applied)
		}
	})
	t.Run("rejected", func(t *testing.T) {
		t.Parallel()
		dir, evs, code, out := acpRun(t, "reject", script)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
			t.Fatal("a rejected write happened")
		}
		if !strings.Contains(finalText(evs), "write error: AgentHub: nothing was written") {
			t.Fatalf("the agent was not told: %q", finalText(evs))
		}
	})
}

// TestACPPartialEditTellsTheAgent: the reviewer approves one hunk of a
// permission request's diff; the agent's write is applied with only that
// hunk, and the agent gets the reason back intact.
func TestACPPartialEditTellsTheAgent(t *testing.T) {
	t.Parallel()
	env, dir := newGitWorkspace(t)
	before, proposed := twoHunkFile(t, dir)
	bin, _ := os.Executable()
	f := &acptest.File{Path: "a.txt", Content: proposed}
	cmd, err := acptest.WriteScript(t.TempDir(), bin, acptest.Script{Steps: []acptest.Step{
		{Permission: &acptest.Permission{ID: "call_1", Kind: "edit", Title: "Edit a.txt", Diff: f, Write: f}}, {Say: "end"}}})
	if err != nil {
		t.Fatal(err)
	}
	writeACPProfile(t, env, fmt.Sprintf("runtime = \"acp\"\ncommand = [%q, %q, %q]", cmd[0], cmd[1], cmd[2])+acceptAll)
	core, run := startProfileRun(t, env, dir, "gm", "edit")
	tk := waitForApproval(t, core, run.ID)
	evs := approveFirstHunk(t, core, run.ID, tk)
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != strings.Replace(before, "alpha", "ALPHA", 1) {
		t.Fatalf("a.txt: %q", b)
	}
	text := finalText(evs)
	if !strings.Contains(text, "allowed opt_allow_once") || !strings.Contains(text,
		"write error: AgentHub: only part of this change was approved; the reviewer approved 1 of 2 hunks and rejected @@ -9,4 +9,4 @@ (reason: keep omega)") {
		t.Fatalf("the agent saw %q", text)
	}
}

// TestACPNoOnceOptionIsRefused: an agent that offers only "always" is
// answered no, since the reviewer approved this call once.
func TestACPNoOnceOptionIsRefused(t *testing.T) {
	t.Parallel()
	_, evs, code, out := acpRun(t, "approve", func(string) acptest.Script {
		return acptest.Script{Steps: []acptest.Step{{Permission: &acptest.Permission{ID: "c1", Kind: "execute",
			Title: "make test", Options: []string{"allow_always", "reject_once"}}}, {Say: "end"}}}
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(finalText(evs), "rejected opt_reject_once") {
		t.Fatalf("the agent saw %q", finalText(evs))
	}
	asked := eventsOf(evs, backend.EvApprovalRequested)
	if len(asked) != 1 || asked[0]["kind"] != "shell" {
		t.Fatalf("approval: %v", asked)
	}
}

// TestACPDriftAndUnreadableOutput: an agent reporting another version of
// a tested agent warns; lines that are not ACP become
// schema.validation_failed events (scrubbed) and the run completes.
func TestACPDriftAndUnreadableOutput(t *testing.T) {
	t.Parallel()
	_, evs, code, out := acpRun(t, "reject", func(dir string) acptest.Script {
		return acptest.Script{Name: acp.GeminiAgentName, Version: "0.60.0", Steps: []acptest.Step{
			{Raw: "broken output from " + dir}, {Raw: `{"jsonrpc":"2.0","method":"session/teleport","params":{}}`},
			{Raw: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"telepathy"}}}`},
			{Say: "All done."}}}
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if d := eventsOf(evs, backend.EvVersionDrift); len(d) != 1 || d[0]["version"] != "0.60.0" {
		t.Fatalf("drift: %v", d)
	}
	bad := eventsOf(evs, backend.EvSchemaValidation)
	if len(bad) != 3 || !strings.Contains(fmt.Sprint(bad[0]["excerpt"]), "broken output from .") ||
		!strings.Contains(fmt.Sprint(bad[1]["problem"]), "unknown method session/teleport") ||
		!strings.Contains(fmt.Sprint(bad[2]["problem"]), "telepathy") {
		t.Fatalf("schema.validation_failed: %v", bad)
	}
	if !hasType(evs, backend.EvRunCompleted) || finalText(evs) != "All done." {
		t.Fatalf("not completed with the agent's answer: %q", finalText(evs))
	}
}

// TestACPCancelSendsSessionCancelThenStops: a cancel reaches the agent as
// session/cancel before its process group is stopped, and nothing of it is
// left; the raw output of the session is kept.
func TestACPCancelSendsSessionCancelThenStops(t *testing.T) {
	t.Parallel()
	env, dir := newGitWorkspace(t)
	bin, _ := os.Executable()
	// The agent runs confined: it may write its marker only in the
	// workspace (or its state dir), not in a temp dir of the test.
	marker := filepath.Join(dir, "cancelled")
	cmd, err := acptest.WriteScript(t.TempDir(), bin, acptest.Script{CancelMarker: marker,
		Steps: []acptest.Step{{Say: "thinking"}, {Hang: true}}})
	if err != nil {
		t.Fatal(err)
	}
	writeACPProfile(t, env, fmt.Sprintf("runtime = \"acp\"\ncommand = [%q, %q, %q]", cmd[0], cmd[1], cmd[2])+acceptAll)
	core, run := startProfileRun(t, env, dir, "gm", "think")
	var pids []int
	for deadline := time.Now().Add(30 * time.Second); len(pids) == 0 || !hasType(runEvents(t, core, run.ID), backend.EvRuntimeStarted); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the agent did not start")
		}
		pids = processesIn(dir)
	}
	time.Sleep(300 * time.Millisecond) // the prompt reaches its hang
	if sum, err := api.NewRunsAPI(core).Cancel(run.ID); err != nil || sum.State != backend.RunCancelled {
		t.Fatalf("cancel: %+v %v", sum, err)
	}
	// The run is Cancelled at once; stopping its agent goes on in the background.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent did not receive session/cancel")
		}
	}
	for deadline := time.Now().Add(10 * time.Second); len(processesIn(dir)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left: %v", processesIn(dir))
		}
	}
	started := eventsOf(runEvents(t, core, run.ID), backend.EvRuntimeStarted)
	if len(started) != 1 {
		t.Fatalf("runtime.started: %v", started)
	}
	raw, err := os.ReadFile(filepath.Join(env["AGENTHUB_HOME"], "runtimes", "acp", "gm", fmt.Sprint(started[0]["rawOutput"])))
	if err != nil || !strings.Contains(string(raw), `"text":"thinking"`) {
		t.Fatalf("raw output: %v\n%s", err, raw)
	}
}

func TestACPExitFailsWithStderr(t *testing.T) {
	t.Parallel()
	three := 3
	_, _, code, out := acpRun(t, "reject", func(dir string) acptest.Script {
		return acptest.Script{Steps: []acptest.Step{{Say: "working"},
			{Stderr: "fatal: cannot reach the server from " + dir}, {Exit: &three}}}
	})
	if code != ExitFailed || !strings.Contains(out, "runtime_unavailable") || !strings.Contains(out, "exited with code 3") ||
		!strings.Contains(out, "cannot reach the server from .") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestACPAuthRequiredIsRuntimeUnavailable(t *testing.T) {
	t.Parallel()
	_, _, code, out := acpRun(t, "reject", func(string) acptest.Script {
		return acptest.Script{NewSessionError: &sdk.RequestError{Code: -32000, Message: "Authentication required"}}
	})
	if code != ExitFailed || !strings.Contains(out, "runtime_unavailable") || !strings.Contains(out, "not logged in") ||
		!strings.Contains(out, "key_env") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}
