package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/runtime/acp"
	"agenthub/backend/runtime/acp/acptest"
)

// These tests run the pinned Gemini CLI for real over ACP, against a
// scripted Gemini API (v1beta) server on loopback, through the engine,
// SQLite and the CLI. scripts/deps.sh test installs the CLI; the Makefile
// points AGENTHUB_GEMINI_BIN at it.

// geminiBin returns the pinned CLI. Under CI a missing CLI fails the test;
// elsewhere the test is skipped with the install step.
func geminiBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("AGENTHUB_GEMINI_BIN")
	if bin == "" {
		if root, err := filepath.Abs("../.."); err == nil {
			bin = filepath.Join(root, ".cache", "agent-clis", "gemini", "node_modules", ".bin", "gemini")
		}
	}
	if _, err := os.Stat(bin); err != nil {
		msg := "the pinned Gemini CLI is not installed; install it with `scripts/deps.sh test` " +
			"(npm install --prefix .cache/agent-clis/gemini @google/gemini-cli@" + acp.GeminiTestedVersion + ")"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// writeACPProfile puts a profile named gm into the data dir.
func writeACPProfile(t *testing.T, env map[string]string, body string) {
	t.Helper()
	dir := filepath.Join(env["AGENTHUB_HOME"], "profiles")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	text := "name = \"gm\"\n" + body + "\n[stop]\nmax_rounds = 20\n"
	if err := os.WriteFile(filepath.Join(dir, "gm.toml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func geminiProfile(bin, baseURL string) string {
	return fmt.Sprintf("runtime = \"gemini\"\ncommand = [%q, \"--acp\"]\nbase_url = %q\nrun_timeout = \"2m\"", bin, baseURL)
}

// geminiRun runs one task through `agenthub run` and returns the
// workspace, the mock and the events.
func geminiRun(t *testing.T, onApproval string, turns func(dir string) []acptest.Turn) (string, *acptest.Gemini, []backend.Event) {
	t.Helper()
	bin := geminiBin(t)
	env, dir := newGitWorkspace(t)
	srv := acptest.NewGemini(turns(dir)...)
	t.Cleanup(srv.Close)
	writeACPProfile(t, env, geminiProfile(bin, srv.URL))
	start := time.Now()
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "gm", "--json",
		"--on-approval", onApproval, "do the task")
	t.Logf("gemini run took %s", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, dir) {
		t.Errorf("an event holds the workspace's absolute path:\n%s", out)
	}
	return dir, srv, decodeNDJSON(t, out, 0)
}

func write(dir, name, content string) acptest.Call {
	return acptest.Call{Name: "write_file", Args: map[string]any{"file_path": dir + "/" + name, "content": content}}
}

func TestGeminiWriteApproved(t *testing.T) {
	t.Parallel()
	dir, srv, evs := geminiRun(t, "approve", func(d string) []acptest.Turn {
		return []acptest.Turn{{Text: []string{"I'll create the file."}, Calls: []acptest.Call{write(d, "hello.txt", "hello\n")}},
			{Text: []string{"Done."}}}
	})
	if testing.Verbose() {
		dumpEvents(t, evs)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("hello.txt: %q %v", b, err)
	}
	asked := eventsOf(evs, backend.EvApprovalRequested)
	if len(asked) != 1 || asked[0]["kind"] != "patch" || !strings.Contains(fmt.Sprint(asked[0]["preview"]), "+hello") {
		t.Fatalf("approval: %v", asked)
	}
	applied := eventsOf(evs, backend.EvPatchApplied)
	if len(applied) != 1 || applied[0]["matchesApproval"] != true || applied[0]["checkpointId"] == nil {
		t.Fatalf("run.patch.applied: %v", applied)
	}
	started := eventsOf(evs, backend.EvRuntimeStarted)
	if len(started) != 1 || started[0]["version"] != acp.GeminiTestedVersion || started[0]["drift"] != false ||
		started[0]["agent"] != acp.GeminiAgentName || len(fmt.Sprint(started[0]["sha256"])) != 64 {
		t.Fatalf("runtime.started: %v", started)
	}
	if calls := eventsOf(evs, acp.EvToolCall); len(calls) == 0 {
		t.Fatal("no runtime.tool_call events")
	}
	done := eventsOf(evs, backend.EvMessageCompleted)
	if !hasType(evs, backend.EvRunCompleted) || len(done) == 0 || !strings.Contains(fmt.Sprint(done[len(done)-1]["text"]), "Done.") {
		t.Fatalf("not completed with the agent's answer: %v", done)
	}
	reqs := srv.Requests()
	if name, resp := acptest.LastFunctionResponse(reqs[len(reqs)-1]); name != "write_file" || resp["error"] != nil {
		t.Fatalf("the model saw %s %v", name, resp)
	}
}

func TestGeminiWriteRejectedTellsAgent(t *testing.T) {
	t.Parallel()
	dir, srv, evs := geminiRun(t, "reject", func(d string) []acptest.Turn {
		return []acptest.Turn{{Calls: []acptest.Call{write(d, "hello.txt", "hello\n")}}, {Text: []string{"Understood."}}}
	})
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); !os.IsNotExist(err) {
		t.Fatal("a rejected write happened")
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if _, resp := acptest.LastFunctionResponse(reqs[1]); !strings.Contains(fmt.Sprint(resp["error"]), "canceled by the user") {
		t.Fatalf("the agent was not told of the rejection: %v", resp)
	}
	if !hasType(evs, backend.EvRunCompleted) || hasType(evs, backend.EvPatchApplied) {
		t.Fatal("the run did not complete, or something was applied")
	}
}

// TestGeminiPartialApprovalWritesOnlyApprovedHunks: the reviewer approves
// one of two hunks; Gemini CLI's fs/write_text_file is applied with only
// that hunk, and the model is told to read the file again.
func TestGeminiPartialApprovalWritesOnlyApprovedHunks(t *testing.T) {
	t.Parallel()
	bin := geminiBin(t)
	env, dir := newGitWorkspace(t)
	before := "alpha\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nomega\n"
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	proposed := strings.Replace(strings.Replace(before, "alpha", "ALPHA", 1), "omega", "OMEGA", 1)
	srv := acptest.NewGemini(acptest.Turn{Calls: []acptest.Call{write(dir, "a.txt", proposed)}},
		acptest.Turn{Text: []string{"Partly written."}})
	defer srv.Close()
	writeACPProfile(t, env, geminiProfile(bin, srv.URL))
	core, run := startProfileRun(t, env, dir, "gm", "edit a.txt")
	tk := waitForApproval(t, core, run.ID)
	if _, err := api.NewApprovalsAPI(core).Decide(backend.Decision{ApprovalID: tk.ID, Kind: backend.ApproveOnce,
		SubjectHash: tk.SubjectHash, Hunks: []backend.HunkRef{{Path: "a.txt", Index: 0}}, Reason: "keep omega"}); err != nil {
		t.Fatal(err)
	}
	if sum := waitForEnd(t, core, run.ID); sum.State != backend.RunCompleted {
		t.Fatalf("run: %+v", sum)
	}
	want := strings.Replace(before, "alpha", "ALPHA", 1)
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != want {
		t.Fatalf("a.txt: %q, want only the approved hunk", b)
	}
	evs, _ := api.NewRunsAPI(core).Events(run.ID, 0, 1000)
	if rej := eventsOf(evs, backend.EvPatchRejected); len(rej) != 1 || rej[0]["comment"] != "keep omega" {
		t.Fatalf("run.patch.rejected: %v", rej)
	}
	if applied := eventsOf(evs, backend.EvPatchApplied); len(applied) != 1 || applied[0]["matchesApproval"] != true {
		t.Fatalf("run.patch.applied: %v", applied)
	}
	// AgentHub answers the write with an error saying which hunks were
	// rejected; Gemini CLI 0.61.0 loses the text of any error a client
	// returns for fs/* (the ACP connection rejects with a plain object, which
	// its write_file prints as "[object Object]"), so the model learns only
	// that the write failed, and reads the file again.
	reqs := srv.Requests()
	if _, resp := acptest.LastFunctionResponse(reqs[len(reqs)-1]); !strings.Contains(fmt.Sprint(resp["error"]), "Error writing to file") {
		t.Fatalf("the model was not told that its write was not written as asked: %v", resp)
	}
}

func TestGeminiShellIsAShellApproval(t *testing.T) {
	t.Parallel()
	shell := func(string) []acptest.Turn {
		return []acptest.Turn{{Calls: []acptest.Call{{Name: "run_shell_command",
			Args: map[string]any{"command": "echo hi > out.txt", "description": "write out.txt"}}}}, {Text: []string{"Ran it."}}}
	}
	t.Run("approved", func(t *testing.T) {
		t.Parallel()
		dir, _, evs := geminiRun(t, "approve", shell)
		asked := eventsOf(evs, backend.EvApprovalRequested)
		if len(asked) != 1 || asked[0]["kind"] != "shell" || !strings.Contains(fmt.Sprint(asked[0]["preview"]), "echo hi > out.txt") {
			t.Fatalf("approval: %v", asked)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "hi\n" {
			t.Fatalf("out.txt: %q %v", b, err)
		}
	})
	t.Run("rejected", func(t *testing.T) {
		t.Parallel()
		dir, srv, _ := geminiRun(t, "reject", shell)
		if _, err := os.Stat(filepath.Join(dir, "out.txt")); !os.IsNotExist(err) {
			t.Fatal("a rejected command ran")
		}
		reqs := srv.Requests()
		if _, resp := acptest.LastFunctionResponse(reqs[len(reqs)-1]); !strings.Contains(fmt.Sprint(resp["error"]), "canceled by the user") {
			t.Fatalf("the agent was not told of the rejection: %v", resp)
		}
	})
}

// TestGeminiReadOnlyCommandsRunUnasked pins why Gemini's shell gating is
// declared advisory: Gemini CLI 0.61.0 runs commands it deems read-only
// (here `ls`) without a permission request; AgentHub sees them only as
// runtime.tool_call events. When this test fails, the capability may be
// raised to enforced.
func TestGeminiReadOnlyCommandsRunUnasked(t *testing.T) {
	t.Parallel()
	_, _, evs := geminiRun(t, "reject", func(string) []acptest.Turn {
		return []acptest.Turn{{Calls: []acptest.Call{{Name: "run_shell_command", Args: map[string]any{"command": "ls"}}}},
			{Text: []string{"Listed."}}}
	})
	if asked := eventsOf(evs, backend.EvApprovalRequested); len(asked) != 0 {
		t.Fatalf("ls asked: %v", asked)
	}
	var ran bool
	for _, c := range eventsOf(evs, acp.EvToolCall) {
		ran = ran || c["title"] == "ls" && c["status"] == "completed"
	}
	if !ran {
		t.Fatalf("no runtime.tool_call for ls: %v", eventsOf(evs, acp.EvToolCall))
	}
	if caps := acp.Capabilities(true); caps.Gating[backend.ActionShell] != backend.Advisory {
		t.Fatal("Gemini's shell gating must be declared advisory")
	}
}

func TestGeminiMissingBinaryIsRuntimeUnavailable(t *testing.T) {
	t.Parallel()
	env, dir := newGitWorkspace(t)
	writeACPProfile(t, env, geminiProfile(filepath.Join(t.TempDir(), "no", "gemini"), "http://127.0.0.1:9"))
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "gm", "task")
	if code != ExitFailed || !strings.Contains(out, "runtime_unavailable") || !strings.Contains(out, acp.GeminiInstallHint) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestGeminiCancelLeavesNoProcess cancels a run while Gemini CLI waits for
// the model: session/cancel, then the process group is stopped; no process
// of the group, nor any child of the CLI, is left.
func TestGeminiCancelLeavesNoProcess(t *testing.T) {
	t.Parallel()
	bin := geminiBin(t)
	srv := acptest.NewGemini(acptest.Turn{Text: []string{"Thinking"}, Hang: true})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeACPProfile(t, env, geminiProfile(bin, srv.URL))
	core, run := startProfileRun(t, env, dir, "gm", "think")
	select {
	case <-srv.Hanging():
	case <-time.After(60 * time.Second):
		t.Fatal("Gemini CLI did not ask the model")
	}
	pids := processesIn(dir)
	if len(pids) == 0 {
		t.Fatal("no process runs in the workspace")
	}
	pgid, err := syscall.Getpgid(pids[0])
	if err != nil {
		t.Fatal(err)
	}
	kids := descendants(pids)
	sum, err := api.NewRunsAPI(core).Cancel(run.ID)
	if err != nil || sum.State != backend.RunCancelled {
		t.Fatalf("cancel: %+v %v", sum, err)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(-pgid, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d survived the cancel", pgid)
		}
	}
	for _, pid := range append(pids, kids...) {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("process %d survived the cancel", pid)
		}
	}
	if left := processesIn(dir); len(left) > 0 {
		t.Fatalf("processes left in the workspace: %v", left)
	}
}

// TestGeminiHangIsRunTimeout: a CLI that waits forever on the model hits
// the profile's run timeout; its process group is stopped.
func TestGeminiHangIsRunTimeout(t *testing.T) {
	t.Parallel()
	bin := geminiBin(t)
	srv := acptest.NewGemini(acptest.Turn{Text: []string{"Thinking"}, Hang: true})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeACPProfile(t, env, strings.Replace(geminiProfile(bin, srv.URL), `run_timeout = "2m"`, `run_timeout = "15s"`, 1))
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "gm", "think")
	if code != ExitFailed || !strings.Contains(out, "run_timeout") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for deadline := time.Now().Add(10 * time.Second); len(processesIn(dir)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left after the timeout: %v", processesIn(dir))
		}
	}
}

// TestGeminiBadKeyIsRuntimeUnavailable: the Gemini API refuses the key;
// the run fails with runtime_unavailable and the auth step.
func TestGeminiBadKeyIsRuntimeUnavailable(t *testing.T) {
	t.Parallel()
	bin := geminiBin(t)
	body := `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`
	srv := acptest.NewGemini(acptest.Turn{Status: 400, Body: body}, acptest.Turn{Status: 400, Body: body},
		acptest.Turn{Status: 400, Body: body}, acptest.Turn{Status: 400, Body: body})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeACPProfile(t, env, geminiProfile(bin, srv.URL))
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "gm", "task")
	if code != ExitFailed || !strings.Contains(out, "runtime_unavailable") || !strings.Contains(out, "key_env") ||
		!strings.Contains(out, "API key not valid") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// startProfileRun opens the data dir and starts a run on a profile.
func startProfileRun(t *testing.T, env map[string]string, dir, profileName, task string) (*api.Core, backend.RunSummary) {
	t.Helper()
	core, err := api.Open(t.Context(), api.Config{Home: env["AGENTHUB_HOME"], Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = core.Close() })
	ws, err := findWorkspace(core, dir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := api.NewRunsAPI(core).Start(api.StartRun{WorkspaceID: ws.ID, Profile: profileName, Task: task})
	if err != nil {
		t.Fatal(err)
	}
	return core, run
}

// descendants lists every process whose parent chain leads to one of pids.
func descendants(pids []int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so read after ')'.
		s := string(b)
		var ppid int
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 1 {
				_, _ = fmt.Sscanf(f[1], "%d", &ppid)
			}
		}
		parent[pid] = ppid
	}
	in := map[int]bool{}
	for _, p := range pids {
		in[p] = true
	}
	var out []int
	for changed := true; changed; {
		changed = false
		for pid, pp := range parent {
			if in[pp] && !in[pid] {
				in[pid], changed = true, true
				out = append(out, pid)
			}
		}
	}
	return out
}

func dumpEvents(t *testing.T, evs []backend.Event) {
	for _, ev := range evs {
		t.Logf("%s %s", ev.Type, clipForLog(string(ev.Payload)))
	}
}

func clipForLog(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}
