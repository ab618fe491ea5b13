package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/runtime/claude"
)

// These tests run the pinned Claude Code CLI for real, against a scripted
// Anthropic Messages server on loopback, through the engine, SQLite and
// the CLI. scripts/deps.sh test installs the CLI; the Makefile points
// AGENTHUB_CLAUDE_BIN at it.

// claudeBin returns the pinned CLI. Under CI a missing CLI fails the test;
// elsewhere the test is skipped with the install step.
func claudeBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("AGENTHUB_CLAUDE_BIN")
	if bin == "" {
		if root, err := filepath.Abs("../.."); err == nil {
			bin = filepath.Join(root, ".cache", "agent-clis", "node_modules", ".bin", "claude")
		}
	}
	if _, err := os.Stat(bin); err != nil {
		msg := "the pinned Claude Code CLI is not installed; install it with `scripts/deps.sh test` " +
			"(npm install --prefix .cache/agent-clis @anthropic-ai/claude-code@" + claude.TestedVersion + ")"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// writeClaudeProfile puts a claude profile pointing at baseURL into the
// data dir.
func writeClaudeProfile(t *testing.T, env map[string]string, command, baseURL string) {
	t.Helper()
	dir := filepath.Join(env["AGENTHUB_HOME"], "profiles")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("name = \"cc\"\nruntime = \"claude\"\nbase_url = %q\nmodel = \"claude-test\"\ncommand = %q\n"+
		"run_timeout = \"2m\"\n[stop]\nmax_rounds = 10\n", baseURL, command)
	if err := os.WriteFile(filepath.Join(dir, "cc.toml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ccCall is a scripted tool call of a Claude Code tool.
func ccCall(id, name string, input map[string]any) llmtest.Call {
	b, _ := json.Marshal(input)
	return llmtest.Call{ID: id, Name: name, Args: []string{string(b)}}
}

// lastToolResult is the last tool_result a recorded request sent the model.
func lastToolResult(req llmtest.Request) map[string]any {
	msgs, _ := req.Body["messages"].([]any)
	var last map[string]any
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		blocks, _ := mm["content"].([]any)
		for _, b := range blocks {
			if bb, _ := b.(map[string]any); bb["type"] == "tool_result" {
				last = bb
			}
		}
	}
	return last
}

func eventsOf(evs []backend.Event, typ backend.EventType) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		if ev.Type == typ {
			var p map[string]any
			_ = json.Unmarshal(ev.Payload, &p)
			out = append(out, p)
		}
	}
	return out
}

func TestClaudeWriteApproved(t *testing.T) {
	t.Parallel()
	turns := func(d string) []llmtest.Turn {
		return []llmtest.Turn{
			{Text: []string{"I'll create ", "the file."}, Calls: []llmtest.Call{ccCall("toolu_1", "Write",
				map[string]any{"file_path": d + "/hello.txt", "content": "hello\n"})}},
			{Text: []string{"Done."}},
		}
	}
	env, dir, srv, evs := claudeRunEnv(t, "approve", turns)
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("hello.txt: %q %v", b, err)
	}
	defer undoClaudeWrite(t, env, dir, evs)
	asked := eventsOf(evs, backend.EvApprovalRequested)
	if len(asked) != 1 || asked[0]["kind"] != "patch" || !strings.Contains(fmt.Sprint(asked[0]["preview"]), "+hello") {
		t.Fatalf("approval: %v", asked)
	}
	applied := eventsOf(evs, backend.EvPatchApplied)
	if len(applied) != 1 || applied[0]["matchesApproval"] != true {
		t.Fatalf("run.patch.applied: %v", applied)
	}
	started := eventsOf(evs, claude.EvRuntimeStarted)
	if len(started) != 1 || started[0]["version"] != claude.TestedVersion || started[0]["drift"] != false {
		t.Fatalf("runtime.started: %v", started)
	}
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("not completed: %v", evs[len(evs)-1].Type)
	}
	if r := lastToolResult(srv.Requests()[1]); r["is_error"] == true {
		t.Fatalf("the model saw an error: %v", r)
	}
}

// undoClaudeWrite undoes the run's write from the checkpoint AgentHub took
// before Claude Code wrote: the file the CLI created is gone again.
func undoClaudeWrite(t *testing.T, env map[string]string, dir string, evs []backend.Event) {
	t.Helper()
	applied := eventsOf(evs, backend.EvPatchApplied)
	ck, _ := applied[0]["checkpointId"].(string)
	if ck == "" {
		t.Fatalf("run.patch.applied has no checkpoint: %v", applied[0])
	}
	if code, out, errOut := runCLI(t, env, "undo", "--workspace", dir, ck); code != 0 {
		t.Fatalf("undo: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); !os.IsNotExist(err) {
		t.Fatalf("hello.txt after undo: %v", err)
	}
}

// claudeRun builds the script with the workspace path, which only exists
// once the workspace does.
func claudeRun(t *testing.T, onApproval string, turns func(dir string) []llmtest.Turn) (string, *llmtest.Server, []backend.Event) {
	t.Helper()
	_, dir, srv, evs := claudeRunEnv(t, onApproval, turns)
	return dir, srv, evs
}

// claudeRunEnv is claudeRun that also returns the CLI's environment.
func claudeRunEnv(t *testing.T, onApproval string, turns func(dir string) []llmtest.Turn) (map[string]string, string,
	*llmtest.Server, []backend.Event) {
	t.Helper()
	bin := claudeBin(t)
	env, dir := newGitWorkspace(t)
	srv := llmtest.NewAnthropic(turns(dir)...)
	t.Cleanup(srv.Close)
	writeClaudeProfile(t, env, bin, srv.URL)
	start := time.Now()
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "cc", "--json",
		"--on-approval", onApproval, "do the task")
	t.Logf("claude run took %s", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, dir) {
		t.Errorf("an event holds the workspace's absolute path:\n%s", out)
	}
	return env, dir, srv, decodeNDJSON(t, out, 0)
}

func TestClaudeWriteRejectedTellsClaude(t *testing.T) {
	t.Parallel()
	dir, srv, evs := claudeRun(t, "reject", func(d string) []llmtest.Turn {
		return []llmtest.Turn{
			{Calls: []llmtest.Call{ccCall("toolu_1", "Write", map[string]any{"file_path": d + "/hello.txt", "content": "hello\n"})}},
			{Text: []string{"Understood."}},
		}
	})
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); !os.IsNotExist(err) {
		t.Fatal("a rejected write happened")
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	r := lastToolResult(reqs[1])
	if r["is_error"] != true || !strings.Contains(fmt.Sprint(r["content"]), "rejected by the reviewer") {
		t.Fatalf("Claude was not told of the rejection: %v", r)
	}
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatal("the run did not complete")
	}
}

func TestClaudeBashIsAShellApproval(t *testing.T) {
	t.Parallel()
	dir, srv, evs := claudeRun(t, "approve", func(string) []llmtest.Turn {
		return []llmtest.Turn{
			{Calls: []llmtest.Call{ccCall("toolu_1", "Bash", map[string]any{"command": "echo hi > out.txt && pwd",
				"description": "write out.txt"})}},
			{Text: []string{"Ran it."}},
		}
	})
	asked := eventsOf(evs, backend.EvApprovalRequested)
	if len(asked) != 1 || asked[0]["kind"] != "shell" || !strings.Contains(fmt.Sprint(asked[0]["preview"]), "echo hi > out.txt") {
		t.Fatalf("approval: %v", asked)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("out.txt: %q %v", b, err)
	}
	results := eventsOf(evs, backend.EvToolResult)
	var got string
	for _, r := range results {
		got += fmt.Sprint(r["content"]) + "\n"
	}
	if !strings.Contains(got, "\n.\n") && !strings.HasPrefix(got, ".\n") {
		t.Errorf("the command's output should show the workspace as '.': %q", got)
	}
	if r := lastToolResult(srv.Requests()[1]); r["is_error"] == true {
		t.Fatalf("the model saw an error: %v", r)
	}
}

// TestClaudeReadThenEdit: a read inside the workspace goes through the gate
// and is allowed by the default policy; the edit that follows is a staged
// patch; Claude Code writes exactly what was approved.
func TestClaudeReadThenEdit(t *testing.T) {
	t.Parallel()
	dir, _, evs := claudeRun(t, "approve", func(d string) []llmtest.Turn {
		return []llmtest.Turn{
			{Calls: []llmtest.Call{ccCall("toolu_1", "Read", map[string]any{"file_path": d + "/README.md"})}},
			{Calls: []llmtest.Call{ccCall("toolu_2", "Edit", map[string]any{"file_path": d + "/README.md",
				"old_string": "A small project.", "new_string": "A tiny project."})}},
			{Text: []string{"Edited."}},
		}
	})
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) != "# Widget\n\nA tiny project.\n" {
		t.Fatalf("README.md: %q", b)
	}
	if reads := eventsOf(evs, backend.EvFileRead); len(reads) != 1 || reads[0]["path"] != "README.md" {
		t.Fatalf("run.file.read: %v", reads)
	}
	asked := eventsOf(evs, backend.EvApprovalRequested)
	if len(asked) != 1 || asked[0]["kind"] != "patch" {
		t.Fatalf("only the edit asks: %v", asked)
	}
	if applied := eventsOf(evs, backend.EvPatchApplied); len(applied) != 1 || applied[0]["matchesApproval"] != true {
		t.Fatalf("run.patch.applied: %v", applied)
	}
}

func TestClaudeMissingBinaryIsRuntimeUnavailable(t *testing.T) {
	t.Parallel()
	env, dir := newGitWorkspace(t)
	writeClaudeProfile(t, env, filepath.Join(t.TempDir(), "no", "claude"), "http://127.0.0.1:9")
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "cc", "task")
	if code != ExitFailed || !strings.Contains(out, "runtime_unavailable") || !strings.Contains(out, claude.InstallHint) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestClaudeCancelLeavesNoProcess cancels a run while Claude Code waits for
// the model; its whole process group is gone afterwards.
func TestClaudeCancelLeavesNoProcess(t *testing.T) {
	t.Parallel()
	bin := claudeBin(t)
	srv := llmtest.NewAnthropic(llmtest.Turn{Text: []string{"Thinking"}, Hang: true})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeClaudeProfile(t, env, bin, srv.URL)
	core, run := startAPIRun(t, env, dir, "think")
	pgid := waitForProcessIn(t, dir, srv)
	sum, err := api.NewRunsAPI(core).Cancel(run.ID)
	if err != nil || sum.State != backend.RunCancelled {
		t.Fatalf("cancel: %+v %v", sum, err)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(-pgid, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d survived the cancel", pgid)
		}
	}
	if left := processesIn(dir); len(left) > 0 {
		t.Fatalf("processes left in the workspace: %v", left)
	}
}

// TestClaudePartialApprovalWritesOnlyApprovedHunks: the reviewer approves
// one of two hunks of a Write; Claude Code is allowed to write only that
// hunk, and is told which hunk was rejected.
func TestClaudePartialApprovalWritesOnlyApprovedHunks(t *testing.T) {
	t.Parallel()
	bin := claudeBin(t)
	env, dir := newGitWorkspace(t)
	before := "alpha\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nomega\n"
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	proposed := strings.Replace(strings.Replace(before, "alpha", "ALPHA", 1), "omega", "OMEGA", 1)
	srv := llmtest.NewAnthropic(
		llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_1", "Read", map[string]any{"file_path": dir + "/a.txt"})}},
		llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_2", "Write", map[string]any{"file_path": dir + "/a.txt", "content": proposed})}},
		llmtest.Turn{Text: []string{"Partly written."}},
	)
	defer srv.Close()
	writeClaudeProfile(t, env, bin, srv.URL)
	core, run := startAPIRun(t, env, dir, "edit a.txt")
	tk := waitForApproval(t, core, run.ID)
	if _, err := api.NewApprovalsAPI(core).Decide(backend.Decision{ApprovalID: tk.ID, Kind: backend.ApproveOnce,
		SubjectHash: tk.SubjectHash, Hunks: []backend.HunkRef{{Path: "a.txt", Index: 0}}, Reason: "keep omega"}); err != nil {
		t.Fatal(err)
	}
	sum := waitForEnd(t, core, run.ID)
	if sum.State != backend.RunCompleted {
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
	reqs := srv.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[2].Raw), "the reviewer approved 1 of 2 hunks and rejected @@ -9,4 +9,4 @@ (reason: keep omega)") {
		t.Fatalf("Claude was not told which hunks were rejected (%d requests)", len(reqs))
	}
}

// startAPIRun opens the data dir and starts a run on the claude profile.
func startAPIRun(t *testing.T, env map[string]string, dir, task string) (*api.Core, backend.RunSummary) {
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
	run, err := api.NewRunsAPI(core).Start(api.StartRun{WorkspaceID: ws.ID, Profile: "cc", Task: task})
	if err != nil {
		t.Fatal(err)
	}
	return core, run
}

func waitForApproval(t *testing.T, core *api.Core, runID string) backend.ApprovalRequest {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if tks, _ := api.NewApprovalsAPI(core).ForRun(runID); len(tks) > 0 {
			return tks[0]
		}
	}
	t.Fatal("no approval was requested")
	return backend.ApprovalRequest{}
}

func waitForEnd(t *testing.T, core *api.Core, runID string) backend.RunSummary {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if sum, _ := api.NewRunsAPI(core).Get(runID); sum.State.Terminal() {
			return sum
		}
	}
	t.Fatal("the run did not end")
	return backend.RunSummary{}
}

// waitForProcessIn waits until Claude Code runs in dir and has asked the
// model, and returns its process group.
func waitForProcessIn(t *testing.T, dir string, srv *llmtest.Server) int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if pids := processesIn(dir); len(pids) > 0 && len(srv.Requests()) > 0 {
			pgid, err := syscall.Getpgid(pids[0])
			if err == nil {
				return pgid
			}
		}
	}
	t.Fatal("Claude Code did not start in the workspace")
	return 0
}

// processesIn lists the processes whose working directory is dir.
func processesIn(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			pids = append(pids, pid)
		}
	}
	return pids
}

// fakeClaude writes a shell script that stands in for the CLI: it reports
// version 2.0.1 and plays body after reading the initialize request and the
// task.
func fakeClaude(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.0.1 (Claude Code)'; exit 0; fi\nread init\nread task\n" + body + "\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestClaudeDriftAndUnreadableOutput: another CLI version warns and goes
// on; lines that cannot be read become schema.validation_failed events
// (scrubbed of the workspace path) and the run still completes.
func TestClaudeDriftAndUnreadableOutput(t *testing.T) {
	t.Parallel()
	bin := fakeClaude(t, `echo "broken output from $PWD"
echo '{"type":"telepathy"}'
echo '{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"All done."}]},"parent_tool_use_id":null}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"All done.","usage":{"input_tokens":3,"output_tokens":4}}'
cat >/dev/null`)
	env, dir := newGitWorkspace(t)
	writeClaudeProfile(t, env, bin, "http://127.0.0.1:9")
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "cc", "--json", "task")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, dir) {
		t.Errorf("an event holds the workspace's absolute path:\n%s", out)
	}
	evs := decodeNDJSON(t, out, 0)
	if d := eventsOf(evs, claude.EvVersionDrift); len(d) != 1 || d[0]["version"] != "2.0.1" {
		t.Fatalf("drift: %v", d)
	}
	bad := eventsOf(evs, backend.EvSchemaValidation)
	if len(bad) != 2 || !strings.Contains(fmt.Sprint(bad[0]["excerpt"]), "broken output from .") ||
		!strings.Contains(fmt.Sprint(bad[1]["problem"]), "telepathy") {
		t.Fatalf("schema.validation_failed: %v", bad)
	}
	done := eventsOf(evs, backend.EvMessageCompleted)
	if !hasType(evs, backend.EvRunCompleted) || len(done) == 0 || done[len(done)-1]["text"] != "All done." {
		t.Fatalf("not completed with the CLI's answer: %v", done)
	}
}

// TestClaudeExitFailsWithStderr: a CLI that exits mid-turn fails the run
// with its (scrubbed) stderr.
func TestClaudeExitFailsWithStderr(t *testing.T) {
	t.Parallel()
	bin := fakeClaude(t, `echo "Invalid API key · Please run /login in $PWD" >&2; exit 1`)
	env, dir := newGitWorkspace(t)
	writeClaudeProfile(t, env, bin, "http://127.0.0.1:9")
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "cc", "task")
	if code != ExitFailed || !strings.Contains(out, "runtime_unavailable") || !strings.Contains(out, "exited with code 1") ||
		!strings.Contains(out, "Please run /login in .") || strings.Contains(out, dir) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestClaudeHangIsRunTimeout: a CLI that waits forever on the model hits
// the profile's run timeout; its process group is stopped.
func TestClaudeHangIsRunTimeout(t *testing.T) {
	t.Parallel()
	bin := claudeBin(t)
	srv := llmtest.NewAnthropic(llmtest.Turn{Text: []string{"Thinking"}, Hang: true})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeClaudeProfile(t, env, bin, srv.URL)
	p := filepath.Join(env["AGENTHUB_HOME"], "profiles", "cc.toml")
	text, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(text), `run_timeout = "2m"`, `run_timeout = "6s"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "cc", "think")
	if code != ExitFailed || !strings.Contains(out, "run_timeout") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for deadline := time.Now().Add(10 * time.Second); len(processesIn(dir)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left after the timeout: %v", processesIn(dir))
		}
	}
}
