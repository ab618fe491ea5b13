package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/runtime/claude"
)

// These tests run the pinned Claude Code CLI for real, against a scripted
// Anthropic Messages server on loopback, through the engine, SQLite and
// the CLI. scripts/deps.sh test installs the CLI; the Makefile points
// AGENTHUB_CLAUDE_BIN at it.

// claudeCLI is the pinned Claude Code CLI.
var claudeCLI = pinned{env: "AGENTHUB_CLAUDE_BIN", bin: "claude", label: "Claude Code",
	pkg: "@anthropic-ai/claude-code@" + claude.TestedVersion}

// writeClaudeProfile puts a claude profile pointing at baseURL into the
// data dir.
func writeClaudeProfile(t *testing.T, env map[string]string, command, baseURL string) {
	t.Helper()
	putProfile(t, env, "cc", fmt.Sprintf("name = \"cc\"\nruntime = \"claude\"\nbase_url = %q\nmodel = \"claude-test\"\n"+
		"command = %q\nrun_timeout = \"2m\"\n[stop]\nmax_rounds = 10\n", baseURL, command))
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
	bin := claudeCLI.path(t)
	env, dir := newGitWorkspace(t)
	srv := llmtest.NewAnthropic(turns(dir)...)
	t.Cleanup(srv.Close)
	writeClaudeProfile(t, env, bin, srv.URL)
	return env, dir, srv, runTask(t, env, dir, "cc", onApproval)
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
	runFails(t, env, dir, "cc", "task", "runtime_unavailable", claude.InstallHint)
}

// TestClaudeCancelLeavesNoProcess cancels a run while Claude Code waits for
// the model; its whole process group is gone afterwards.
func TestClaudeCancelLeavesNoProcess(t *testing.T) {
	t.Parallel()
	bin := claudeCLI.path(t)
	srv := llmtest.NewAnthropic(llmtest.Turn{Text: []string{"Thinking"}, Hang: true})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeClaudeProfile(t, env, bin, srv.URL)
	core, run := startProfileRun(t, env, dir, "cc", "think")
	pgid := groupOf(t, waitForAgent(t, dir, "Claude Code", func() bool { return len(srv.Requests()) > 0 })[0])
	cancel(t, core, run.ID)
	waitGone(t, pgid, nil, 10*time.Second)
	if left := processesIn(dir); len(left) > 0 {
		t.Fatalf("processes left in the workspace: %v", left)
	}
}

// TestClaudePartialApprovalWritesOnlyApprovedHunks: the reviewer approves
// one of two hunks of a Write; Claude Code is allowed to write only that
// hunk, and is told which hunk was rejected.
func TestClaudePartialApprovalWritesOnlyApprovedHunks(t *testing.T) {
	t.Parallel()
	bin := claudeCLI.path(t)
	env, dir := newGitWorkspace(t)
	before, proposed := twoHunkFile(t, dir)
	srv := llmtest.NewAnthropic(
		llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_1", "Read", map[string]any{"file_path": dir + "/a.txt"})}},
		llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_2", "Write", map[string]any{"file_path": dir + "/a.txt", "content": proposed})}},
		llmtest.Turn{Text: []string{"Partly written."}},
	)
	defer srv.Close()
	writeClaudeProfile(t, env, bin, srv.URL)
	core, run := startProfileRun(t, env, dir, "cc", "edit a.txt")
	tk := waitForApproval(t, core, run.ID)
	evs := approveFirstHunk(t, core, run.ID, tk)
	want := strings.Replace(before, "alpha", "ALPHA", 1)
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != want {
		t.Fatalf("a.txt: %q, want only the approved hunk", b)
	}
	if applied := eventsOf(evs, backend.EvPatchApplied); len(applied) != 1 || applied[0]["matchesApproval"] != true {
		t.Fatalf("run.patch.applied: %v", applied)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[2].Raw), "the reviewer approved 1 of 2 hunks and rejected @@ -9,4 +9,4 @@ (reason: keep omega)") {
		t.Fatalf("Claude was not told which hunks were rejected (%d requests)", len(reqs))
	}
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
	evs := runJSON(t, env, dir, "run", "--workspace", dir, "--profile", "cc", "--json", "task")
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
	out := runFails(t, env, dir, "cc", "task", "runtime_unavailable", "exited with code 1", "Please run /login in .")
	if strings.Contains(out, dir) {
		t.Fatalf("the output holds the workspace's absolute path:\n%s", out)
	}
}

// TestClaudeHangIsRunTimeout: a CLI that waits forever on the model hits
// the profile's run timeout; its process group is stopped.
func TestClaudeHangIsRunTimeout(t *testing.T) {
	t.Parallel()
	bin := claudeCLI.path(t)
	srv := llmtest.NewAnthropic(llmtest.Turn{Text: []string{"Thinking"}, Hang: true})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeClaudeProfile(t, env, bin, srv.URL)
	setRunTimeout(t, env, "cc", "6s")
	timesOut(t, env, dir, "cc")
}

// TestClaudeSubAgentIsGated: a command of a sub-agent (the Task tool) comes
// to AgentHub's gate like the main agent's: asked as a shell approval, run
// only when approved.
func TestClaudeSubAgentIsGated(t *testing.T) {
	t.Parallel()
	turns := func(string) []llmtest.Turn {
		return []llmtest.Turn{
			{Calls: []llmtest.Call{ccCall("toolu_1", "Task", map[string]any{"description": "write a file",
				"prompt": "write sub.txt", "subagent_type": "general-purpose"})}},
			{Calls: []llmtest.Call{ccCall("toolu_2", "Bash", map[string]any{"command": "echo sub > sub.txt",
				"description": "write sub.txt"})}},
			{Text: []string{"Wrote it."}},
			{Text: []string{"Done."}},
		}
	}
	for _, decision := range []string{"approve", "reject"} {
		t.Run(decision, func(t *testing.T) {
			t.Parallel()
			dir, _, evs := claudeRun(t, decision, turns)
			asked := eventsOf(evs, backend.EvApprovalRequested)
			if len(asked) != 1 || asked[0]["kind"] != "shell" || asked[0]["title"] != "Run: echo sub > sub.txt" {
				t.Fatalf("the sub-agent's command was not asked for: %v", asked)
			}
			_, err := os.Stat(filepath.Join(dir, "sub.txt"))
			if ran := err == nil; ran != (decision == "approve") {
				t.Fatalf("sub.txt exists = %v after %s", ran, decision)
			}
		})
	}
}
