package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/runtime/acp"
	"agenthub/backend/runtime/acp/acptest"
)

// These tests run the pinned Gemini CLI for real over ACP, against a
// scripted Gemini API (v1beta) server on loopback, through the engine,
// SQLite and the CLI. scripts/deps.sh test installs the CLI; the Makefile
// points AGENTHUB_GEMINI_BIN at it.

// geminiCLI is the pinned Gemini CLI.
var geminiCLI = pinned{env: "AGENTHUB_GEMINI_BIN", dir: "gemini", bin: "gemini", label: "Gemini",
	pkg: "@google/gemini-cli@" + acp.GeminiTestedVersion}

// writeACPProfile puts a profile named gm into the data dir.
func writeACPProfile(t *testing.T, env map[string]string, body string) {
	t.Helper()
	putProfile(t, env, "gm", "name = \"gm\"\n"+body+"\n[stop]\nmax_rounds = 20\n")
}

func geminiProfile(bin, baseURL string) string {
	return fmt.Sprintf("runtime = \"gemini\"\ncommand = [%q, \"--acp\"]\nbase_url = %q\nrun_timeout = \"2m\"", bin, baseURL)
}

// geminiRun runs one task through `agenthub run` and returns the
// workspace, the mock and the events.
func geminiRun(t *testing.T, onApproval string, turns func(dir string) []acptest.Turn) (string, *acptest.Gemini, []backend.Event) {
	t.Helper()
	bin := geminiCLI.path(t)
	env, dir := newGitWorkspace(t)
	srv := acptest.NewGemini(turns(dir)...)
	t.Cleanup(srv.Close)
	writeACPProfile(t, env, geminiProfile(bin, srv.URL))
	return dir, srv, runTask(t, env, dir, "gm", onApproval)
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
	bin := geminiCLI.path(t)
	env, dir := newGitWorkspace(t)
	before, proposed := twoHunkFile(t, dir)
	srv := acptest.NewGemini(acptest.Turn{Calls: []acptest.Call{write(dir, "a.txt", proposed)}},
		acptest.Turn{Text: []string{"Partly written."}})
	defer srv.Close()
	writeACPProfile(t, env, geminiProfile(bin, srv.URL))
	core, run := startProfileRun(t, env, dir, "gm", "edit a.txt")
	tk := waitForApproval(t, core, run.ID)
	evs := approveFirstHunk(t, core, run.ID, tk)
	want := strings.Replace(before, "alpha", "ALPHA", 1)
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != want {
		t.Fatalf("a.txt: %q, want only the approved hunk", b)
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

// TestGeminiReadOnlyCommandsAsk pins why Gemini's shell gating is declared
// enforced: Gemini CLI 0.61.0 on its own runs commands it deems read-only
// (ls, cat, grep, echo… in the workspace) without a permission request;
// the policy AgentHub writes into its isolated HOME (acp/geminipolicy.go)
// makes every command ask, so `ls` is a shell approval, and rejected it
// never runs.
func TestGeminiReadOnlyCommandsAsk(t *testing.T) {
	t.Parallel()
	ls := func(string) []acptest.Turn {
		return []acptest.Turn{{Calls: []acptest.Call{{Name: "run_shell_command", Args: map[string]any{"command": "ls"}}}},
			{Text: []string{"Listed."}}}
	}
	for _, decision := range []string{"approve", "reject"} {
		t.Run(decision, func(t *testing.T) {
			t.Parallel()
			_, srv, evs := geminiRun(t, decision, ls)
			asked := eventsOf(evs, backend.EvApprovalRequested)
			if len(asked) != 1 || asked[0]["kind"] != "shell" || asked[0]["enforcement"] != "enforced" ||
				!strings.Contains(fmt.Sprint(asked[0]["preview"]), "command:ls") {
				t.Fatalf("approval: %v", asked)
			}
			var ran bool
			for _, c := range eventsOf(evs, acp.EvToolCall) {
				ran = ran || c["title"] == "ls" && c["status"] == "completed"
			}
			if ran != (decision == "approve") {
				t.Fatalf("ls ran = %v after %s: %v", ran, decision, eventsOf(evs, acp.EvToolCall))
			}
			reqs := srv.Requests()
			_, resp := acptest.LastFunctionResponse(reqs[len(reqs)-1])
			if rejected := strings.Contains(fmt.Sprint(resp["error"]), "canceled by the user"); rejected != (decision == "reject") {
				t.Fatalf("the agent's function response after %s: %v", decision, resp)
			}
			for _, d := range declaredFunctions(reqs[0]) {
				if d == "google_web_search" {
					t.Fatal("google_web_search, which AgentHub cannot gate, is offered to the model")
				}
			}
			if hasType(evs, backend.EvGatingAdvisory) {
				t.Fatal("a gemini run recorded accepted advisory gating")
			}
		})
	}
	caps := acp.Capabilities(true)
	if caps.Gating[backend.ActionShell] != backend.Enforced || caps.Gating[backend.ActionNetwork] != backend.Enforced {
		t.Fatalf("Gemini's shell and network gating must be declared enforced: %v", caps.Gating)
	}
}

// declaredFunctions names the tools a request to the Gemini API offers the
// model.
func declaredFunctions(req acptest.Request) []string {
	var names []string
	tools, _ := req.Body["tools"].([]any)
	for _, tl := range tools {
		decls, _ := tl.(map[string]any)["functionDeclarations"].([]any)
		for _, d := range decls {
			if name, ok := d.(map[string]any)["name"].(string); ok {
				names = append(names, name)
			}
		}
	}
	return names
}

func TestGeminiMissingBinaryIsRuntimeUnavailable(t *testing.T) {
	t.Parallel()
	env, dir := newGitWorkspace(t)
	writeACPProfile(t, env, geminiProfile(filepath.Join(t.TempDir(), "no", "gemini"), "http://127.0.0.1:9"))
	runFails(t, env, dir, "gm", "task", "runtime_unavailable", acp.GeminiInstallHint)
}

// TestGeminiCancelLeavesNoProcess cancels a run while Gemini CLI waits for
// the model: session/cancel, then the process group is stopped; no process
// of the group, nor any child of the CLI, is left.
func TestGeminiCancelLeavesNoProcess(t *testing.T) {
	t.Parallel()
	bin := geminiCLI.path(t)
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
	pgid := groupOf(t, pids[0])
	kids := descendants(pids)
	cancel(t, core, run.ID)
	waitGone(t, pgid, nil, 10*time.Second)
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
	bin := geminiCLI.path(t)
	srv := acptest.NewGemini(acptest.Turn{Text: []string{"Thinking"}, Hang: true})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeACPProfile(t, env, geminiProfile(bin, srv.URL))
	setRunTimeout(t, env, "gm", "15s")
	timesOut(t, env, dir, "gm")
}

// TestGeminiBadKeyIsRuntimeUnavailable: the Gemini API refuses the key;
// the run fails with runtime_unavailable and the auth step.
func TestGeminiBadKeyIsRuntimeUnavailable(t *testing.T) {
	t.Parallel()
	bin := geminiCLI.path(t)
	body := `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`
	srv := acptest.NewGemini(acptest.Turn{Status: 400, Body: body}, acptest.Turn{Status: 400, Body: body},
		acptest.Turn{Status: 400, Body: body}, acptest.Turn{Status: 400, Body: body})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeACPProfile(t, env, geminiProfile(bin, srv.URL))
	runFails(t, env, dir, "gm", "task", "runtime_unavailable", "key_env", "API key not valid")
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

// TestGeminiNeverReadsSecretFiles: Gemini CLI reads the workspace itself,
// so AgentHub hands it an ignore file of secret patterns (its read_file
// refuses them) and denies grep_search, which would search them. The mock
// model asks for a private key, a .env file and an ordinary file, and tries
// to grep, itself and through a sub-agent: the ordinary file's text
// reaches the model (the check can see a read), the secrets' never do, in
// any request.
func TestGeminiNeverReadsSecretFiles(t *testing.T) {
	t.Parallel()
	const plain, key, dotenv = "plain-text-0000", "PRIVATE-KEY-4343", "API_TOKEN=token-4242"
	_, srv, evs := geminiRun(t, "approve", func(dir string) []acptest.Turn {
		for name, text := range map[string]string{"notes.txt": plain, "keys/id_rsa": key, ".env": dotenv,
			"config/credentials.json": dotenv, "certs/server.pem": key} {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		read := func(p string) acptest.Turn {
			return acptest.Turn{Calls: []acptest.Call{{Name: "read_file", Args: map[string]any{"file_path": p}}}}
		}
		grep := acptest.Turn{Calls: []acptest.Call{{Name: "grep_search",
			Args: map[string]any{"pattern": "4242|4343", "no_ignore": true}}}}
		return []acptest.Turn{read(dir + "/keys/id_rsa"), read("config/credentials.json"), read("certs/server.pem"),
			read(".env"), read("notes.txt"), grep,
			// A sub-agent has its own tools: the same rules hold there.
			{Calls: []acptest.Call{{Name: "invoke_agent", Args: map[string]any{"agent_name": "codebase_investigator",
				"objective": "find the tokens", "prompt": "find the tokens"}}}},
			read("keys/id_rsa"), grep,
			{Text: []string{"Read what I could."}}}
	})
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("the run did not complete: %v", evs[len(evs)-1])
	}
	reqs := srv.Requests()
	var sawPlain bool
	for _, r := range reqs {
		body := string(r.Raw)
		sawPlain = sawPlain || strings.Contains(body, plain)
		for _, secret := range []string{key, "token-4242"} {
			if strings.Contains(body, secret) {
				t.Fatalf("a secret file's content reached the model: %s", body[:min(len(body), 2000)])
			}
		}
	}
	if !sawPlain {
		t.Fatal("the ordinary file's text never reached the model: the test cannot see a read")
	}
	var subAgent bool
	for _, r := range reqs {
		declared := declaredFunctions(r)
		subAgent = subAgent || slices.Contains(declared, "complete_task")
		if slices.Contains(declared, "grep_search") {
			t.Fatalf("grep_search, which searches secret files, is offered to the model: %v", declared)
		}
	}
	if !subAgent {
		t.Fatal("the sub-agent never ran: the test does not cover it")
	}
}
