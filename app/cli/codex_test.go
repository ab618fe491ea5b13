package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/runtime/codex"
	"agenthub/backend/runtime/codex/codextest"
)

// These tests run the pinned Codex CLI for real (`codex app-server`, and
// `codex exec --json` for advisory gating), against a scripted OpenAI
// Responses server on loopback, through the engine, SQLite and the CLI.
// scripts/deps.sh test installs the CLI; the Makefile points
// AGENTHUB_CODEX_BIN at it.

// codexCLI is the pinned Codex CLI.
var codexCLI = pinned{env: "AGENTHUB_CODEX_BIN", dir: "codex", bin: "codex", label: "Codex",
	pkg: "@openai/codex@" + codex.TestedVersion}

// writeCodexProfile puts a codex profile "cx" pointing at baseURL into the
// data dir; extra lines are appended before the [stop] table.
func writeCodexProfile(t *testing.T, env map[string]string, command, baseURL, extra string) {
	t.Helper()
	putProfile(t, env, "cx", fmt.Sprintf("name = \"cx\"\nruntime = \"codex\"\nbase_url = %q\nmodel = \"gpt-5.5\"\n"+
		"command = %q\nrun_timeout = \"2m\"\n%s\n[stop]\nmax_rounds = 12\n", baseURL+"/v1", command, extra))
}

// codexRun runs the profile through `agenthub run --json` and returns the
// workspace, the server and the events. The script is built with the
// workspace path, which only exists once the workspace does.
func codexRun(t *testing.T, onApproval, extra string, turns func(dir string) []codextest.Turn) (string, *codextest.Server, []backend.Event) {
	t.Helper()
	bin := codexCLI.path(t)
	env, dir := newGitWorkspace(t)
	srv := codextest.New(turns(dir)...)
	t.Cleanup(srv.Close)
	writeCodexProfile(t, env, bin, srv.URL, extra)
	return dir, srv, runTask(t, env, dir, "cx", onApproval)
}

const addHello = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"

// modelSaw is everything the model was sent in request i: tool outputs
// and messages.
func modelSaw(srv *codextest.Server, i int) string {
	reqs := srv.ModelRequests()
	if i >= len(reqs) {
		return ""
	}
	var b strings.Builder
	for id, out := range reqs[i].Outputs() {
		fmt.Fprintf(&b, "[%s] %s\n", id, out)
	}
	for _, t := range reqs[i].Texts() {
		b.WriteString(t + "\n")
	}
	return b.String()
}

func TestCodexPatchApproved(t *testing.T) {
	t.Parallel()
	dir, srv, evs := codexRun(t, "approve", "", func(string) []codextest.Turn {
		return []codextest.Turn{
			{Text: []string{"I'll create ", "the file."}, Calls: []codextest.Call{codextest.ApplyPatch("call_p1", addHello)}},
			{Text: []string{"Done."}},
		}
	})
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("hello.txt: %q %v", b, err)
	}
	asked := eventsOf(evs, backend.EvApprovalRequested)
	if len(asked) != 1 || asked[0]["kind"] != "patch" {
		t.Fatalf("approval: %v", asked)
	}
	preview := fmt.Sprint(asked[0]["preview"])
	if !strings.Contains(preview, "+hello") || !strings.Contains(preview, "partialApply:false") ||
		!strings.Contains(preview, "as a whole") {
		t.Fatalf("the preview must show the diff and say the patch applies whole: %s", preview)
	}
	applied := eventsOf(evs, backend.EvPatchApplied)
	if len(applied) != 1 || applied[0]["matchesApproval"] != true || applied[0]["checkpointId"] == "" {
		t.Fatalf("run.patch.applied: %v", applied)
	}
	started := eventsOf(evs, codex.EvRuntimeStarted)
	if len(started) != 1 || started[0]["version"] != codex.TestedVersion || started[0]["drift"] != false ||
		len(fmt.Sprint(started[0]["sha256"])) != 64 || started[0]["mode"] != "app-server" {
		t.Fatalf("runtime.started: %v", started)
	}
	if hasType(evs, backend.EvSchemaValidation) || hasType(evs, codex.EvUngated) {
		t.Fatalf("unexpected diagnostics: %v %v", eventsOf(evs, backend.EvSchemaValidation), eventsOf(evs, codex.EvUngated))
	}
	done := eventsOf(evs, backend.EvMessageCompleted)
	if !hasType(evs, backend.EvRunCompleted) || len(done) == 0 || done[len(done)-1]["text"] != "Done." {
		t.Fatalf("not completed with Codex's answer: %v", done)
	}
	if saw := modelSaw(srv, 1); !strings.Contains(saw, "Success. Updated the following files") {
		t.Fatalf("the model did not see the patch applied: %s", saw)
	}
}

func TestCodexPatchRejectedTellsCodex(t *testing.T) {
	t.Parallel()
	dir, srv, evs := codexRun(t, "reject", "", func(string) []codextest.Turn {
		return []codextest.Turn{
			{Calls: []codextest.Call{codextest.ApplyPatch("call_p1", addHello)}},
			{Text: []string{"Understood."}},
		}
	})
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); !os.IsNotExist(err) {
		t.Fatal("a rejected patch was applied")
	}
	if n := len(srv.ModelRequests()); n != 2 {
		t.Fatalf("%d model requests, want 2", n)
	}
	saw := modelSaw(srv, 1)
	if !strings.Contains(saw, "patch rejected by user") || !strings.Contains(saw, "rejected by the reviewer") {
		t.Fatalf("Codex was not told of the rejection and its reason:\n%s", saw)
	}
	if hasType(evs, backend.EvPatchApplied) || !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("events: %v", eventTypesOf(evs))
	}
}

func TestCodexCommandIsAShellApproval(t *testing.T) {
	t.Parallel()
	dir, srv, evs := codexRun(t, "approve", "", func(string) []codextest.Turn {
		return []codextest.Turn{
			{Calls: []codextest.Call{codextest.Exec("call_e1", "echo hi > out.txt && pwd", false)}},
			{Text: []string{"Ran it."}},
		}
	})
	asked := eventsOf(evs, backend.EvApprovalRequested)
	if len(asked) != 1 || asked[0]["kind"] != "shell" {
		t.Fatalf("approval: %v", asked)
	}
	preview, _ := asked[0]["preview"].(map[string]any)
	argv := fmt.Sprint(preview["argv"])
	if argv != "[/bin/bash -lc echo hi > out.txt && pwd]" || preview["cwd"] != "." ||
		!strings.Contains(fmt.Sprint(preview["sandbox"]), "only inside the workspace") {
		t.Fatalf("shell preview: %v", preview)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("out.txt: %q %v", b, err)
	}
	var results string
	for _, r := range eventsOf(evs, backend.EvToolResult) {
		results += fmt.Sprint(r["content"]) + "\n"
	}
	if !strings.Contains(results, "exit code 0") || !strings.Contains(results, "\n.\n") {
		t.Errorf("the command's output should show the workspace as '.': %q", results)
	}
	if saw := modelSaw(srv, 1); !strings.Contains(saw, "Process exited with code 0") {
		t.Fatalf("the model did not see the command run: %s", saw)
	}
}

func TestCodexCommandRejectedTellsCodex(t *testing.T) {
	t.Parallel()
	dir, srv, _ := codexRun(t, "reject", "", func(string) []codextest.Turn {
		return []codextest.Turn{
			{Calls: []codextest.Call{codextest.Exec("call_e1", "echo hi > out.txt", false)}},
			{Text: []string{"Understood."}},
		}
	})
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); !os.IsNotExist(err) {
		t.Fatal("a rejected command ran")
	}
	saw := modelSaw(srv, 1)
	if !strings.Contains(saw, "rejected by user") || !strings.Contains(saw, "rejected by the reviewer") {
		t.Fatalf("Codex was not told of the rejection:\n%s", saw)
	}
}

// outsideTempDirs is a writable directory that Codex's workspace-write
// sandbox does not keep writable: the repository's .cache, or the home's
// when the repository itself is under a temporary directory (a CI clone).
func outsideTempDirs(t *testing.T) string {
	t.Helper()
	temps := []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"}
	under := func(p string) bool {
		for _, d := range temps {
			if real, err := filepath.EvalSymlinks(d); err == nil {
				d = real
			}
			if p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	var candidates []string
	if repo, err := filepath.Abs(filepath.Join("..", "..", ".cache")); err == nil {
		candidates = append(candidates, repo)
	}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".cache"))
	}
	for _, c := range candidates {
		real := c
		if r, err := filepath.EvalSymlinks(filepath.Dir(c)); err == nil {
			real = filepath.Join(r, filepath.Base(c))
		}
		if !under(real) {
			return c
		}
	}
	t.Fatalf("no writable directory outside the temporary directories among %v", candidates)
	return ""
}

// TestCodexSandboxConfinesApprovedCommands: an approved command that did
// not ask to leave the sandbox cannot write outside the workspace (and the
// temporary directories, which workspace-write keeps writable), even with
// CODEX_HOME under the temporary directory, where 0.169.0 refuses to link
// its sandbox helper (agent-clis.md B2) and, without AgentHub's link, runs
// commands unconfined.
func TestCodexSandboxConfinesApprovedCommands(t *testing.T) {
	t.Parallel()
	cache := outsideTempDirs(t)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(cache, "codex-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	outside := filepath.Join(tmp, "outside.txt")
	_, srv, _ := codexRun(t, "approve", "", func(string) []codextest.Turn {
		return []codextest.Turn{
			{Calls: []codextest.Call{codextest.Exec("call_e1", "echo x > "+outside+"; echo rc=$?", false)}},
			{Text: []string{"Tried."}},
		}
	})
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatal("an approved, sandboxed command wrote outside the workspace")
	}
	// Codex's Landlock sandbox (inside AgentHub's) refuses with EACCES;
	// bubblewrap's read-only mounts said EROFS.
	if saw := modelSaw(srv, 1); !strings.Contains(saw, "Permission denied") && !strings.Contains(saw, "Read-only file system") {
		t.Fatalf("the sandbox did not refuse the write: %s", saw)
	}
}

// TestCodexEscalationIsShownAsUnsandboxed: a command Codex asks to run
// outside its sandbox says so in the approval, at high risk.
func TestCodexEscalationIsShownAsUnsandboxed(t *testing.T) {
	t.Parallel()
	_, _, evs := codexRun(t, "reject", "", func(string) []codextest.Turn {
		return []codextest.Turn{
			{Calls: []codextest.Call{codextest.Exec("call_e1", "touch ../x", true)}},
			{Text: []string{"Ok."}},
		}
	})
	asked := eventsOf(evs, backend.EvApprovalRequested)
	if len(asked) != 1 || asked[0]["risk"] != "high" ||
		!strings.Contains(fmt.Sprint(asked[0]["preview"]), "outside its sandbox") {
		t.Fatalf("approval: %v", asked)
	}
}

const twoHunks = "alpha\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nomega\n"

// editBoth updates a.txt in two hunks.
const editBoth = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n 1\n@@\n 10\n-omega\n+OMEGA\n*** End Patch\n"

// TestCodexPartialApprovalDeclinesTheWholePatch: Codex's patch approval is
// all or nothing, so approving one of two hunks writes nothing, records the
// rejected hunk, and tells the agent why.
func TestCodexPartialApprovalDeclinesTheWholePatch(t *testing.T) {
	t.Parallel()
	bin := codexCLI.path(t)
	env, dir := newGitWorkspace(t)
	commitFile(t, dir, "a.txt", twoHunks)
	srv := codextest.New(
		codextest.Turn{Calls: []codextest.Call{codextest.ApplyPatch("call_p1", editBoth)}},
		codextest.Turn{Text: []string{"Understood."}},
	)
	defer srv.Close()
	writeCodexProfile(t, env, bin, srv.URL, "")
	core, run := startProfileRun(t, env, dir, "cx", "edit a.txt")
	tk := waitForApproval(t, core, run.ID)
	if !strings.Contains(string(tk.Preview), `"partialApply":false`) {
		t.Fatalf("the preview must say the patch applies whole: %s", tk.Preview)
	}
	approveFirstHunk(t, core, run.ID, tk)
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != twoHunks {
		t.Fatalf("a.txt: %q, want it untouched", b)
	}
	saw := modelSaw(srv, 1)
	if !strings.Contains(saw, "patch rejected by user") || !strings.Contains(saw, "approved only part") ||
		!strings.Contains(saw, "as a whole") {
		t.Fatalf("Codex was not told why its patch was declined:\n%s", saw)
	}
}

// TestCodexMultiFilePatch: one Codex patch over three files (an update, a
// new file in a new directory and a deletion) is three staged patches;
// approved, Codex writes exactly them, and one checkpoint covers all.
func TestCodexMultiFilePatch(t *testing.T) {
	t.Parallel()
	patch := "*** Begin Patch\n*** Update File: README.md\n@@\n-A small project.\n+A tiny project.\n" +
		"*** Add File: docs/new.md\n+# New\n*** Delete File: old.txt\n*** End Patch\n"
	bin := codexCLI.path(t)
	env, dir := newGitWorkspace(t)
	commitFile(t, dir, "old.txt", "bye\n")
	srv := codextest.New(codextest.Turn{Calls: []codextest.Call{codextest.ApplyPatch("call_p1", patch)}},
		codextest.Turn{Text: []string{"Done."}})
	defer srv.Close()
	writeCodexProfile(t, env, bin, srv.URL, "")
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "cx", "--json", "--on-approval", "approve", "edit")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	evs := decodeNDJSON(t, out, 0)
	if asked := eventsOf(evs, backend.EvApprovalRequested); len(asked) != 3 {
		t.Fatalf("%d approvals, want one per file", len(asked))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) != "# Widget\n\nA tiny project.\n" {
		t.Fatalf("README.md: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "docs", "new.md")); string(b) != "# New\n" {
		t.Fatalf("docs/new.md: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "old.txt")); !os.IsNotExist(err) {
		t.Fatal("old.txt was not deleted")
	}
	applied := eventsOf(evs, backend.EvPatchApplied)
	if len(applied) != 1 || applied[0]["matchesApproval"] != true || len(applied[0]["files"].([]any)) != 3 {
		t.Fatalf("run.patch.applied: %v", applied)
	}
}

// TestCodexOneRejectedFileDeclinesThePatch: rejecting one file of a
// two-file patch writes neither.
func TestCodexOneRejectedFileDeclinesThePatch(t *testing.T) {
	t.Parallel()
	patch := "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Add File: b.txt\n+b\n*** End Patch\n"
	bin := codexCLI.path(t)
	env, dir := newGitWorkspace(t)
	srv := codextest.New(codextest.Turn{Calls: []codextest.Call{codextest.ApplyPatch("call_p1", patch)}},
		codextest.Turn{Text: []string{"Ok."}})
	defer srv.Close()
	writeCodexProfile(t, env, bin, srv.URL, "")
	core, run := startProfileRun(t, env, dir, "cx", "two files")
	decided := map[string]bool{}
	for len(decided) < 2 {
		tks, _ := api.NewApprovalsAPI(core).ForRun(run.ID)
		for _, tk := range tks {
			if decided[tk.ID] {
				continue
			}
			kind := backend.ApproveOnce
			if strings.Contains(tk.Title, "b.txt") {
				kind = backend.RejectAndTell
			}
			if _, err := api.NewApprovalsAPI(core).Decide(backend.Decision{ApprovalID: tk.ID, Kind: kind,
				SubjectHash: tk.SubjectHash, Reason: "not b"}); err != nil {
				t.Fatal(err)
			}
			decided[tk.ID] = true
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sum := waitForEnd(t, core, run.ID); sum.State != backend.RunCompleted {
		t.Fatalf("run: %+v", sum)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Fatalf("%s was written although the patch was declined", f)
		}
	}
	if saw := modelSaw(srv, 1); !strings.Contains(saw, "patch rejected by user") || !strings.Contains(saw, "not b") {
		t.Fatalf("Codex was not told:\n%s", saw)
	}
}

// codexProcesses waits until Codex runs in dir and has asked the model,
// and returns its pid and every process below it.
func codexProcesses(t *testing.T, dir string, srv *codextest.Server) (int, []int) {
	t.Helper()
	pids := waitForAgent(t, dir, "Codex", func() bool { return len(srv.ModelRequests()) > 0 })
	return pids[0], append(pids, descendants(pids)...)
}

// TestCodexCancelLeavesNoProcess cancels a run while Codex waits for the
// model: the turn is interrupted, Codex stops, and neither it nor any
// process it started is left.
func TestCodexCancelLeavesNoProcess(t *testing.T) {
	t.Parallel()
	bin := codexCLI.path(t)
	srv := codextest.New(codextest.Turn{Text: []string{"Thinking"}, Hang: true})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeCodexProfile(t, env, bin, srv.URL, "")
	core, run := startProfileRun(t, env, dir, "cx", "think")
	leader, pids := codexProcesses(t, dir, srv)
	pgid := groupOf(t, leader)
	t.Logf("codex pid %d, group %d, processes %v", leader, pgid, pids)
	start := time.Now()
	cancel(t, core, run.ID)
	waitGone(t, pgid, pids, 10*time.Second)
	t.Logf("every process gone %s after the cancel", time.Since(start).Round(time.Millisecond))
	if left := processesIn(dir); len(left) > 0 {
		t.Fatalf("processes left in the workspace: %v", left)
	}
}

// TestCodexHangIsRunTimeout: Codex waiting forever on the model hits the
// profile's run timeout; its process group is stopped.
func TestCodexHangIsRunTimeout(t *testing.T) {
	t.Parallel()
	bin := codexCLI.path(t)
	srv := codextest.New(codextest.Turn{Text: []string{"Thinking"}, Hang: true})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeCodexProfile(t, env, bin, srv.URL, "")
	setRunTimeout(t, env, "cx", "8s")
	timesOut(t, env, dir, "cx")
}

func TestCodexMissingBinaryIsRuntimeUnavailable(t *testing.T) {
	t.Parallel()
	env, dir := newGitWorkspace(t)
	writeCodexProfile(t, env, filepath.Join(t.TempDir(), "no", "codex"), "http://127.0.0.1:9", "")
	runFails(t, env, dir, "cx", "task", "runtime_unavailable", codex.InstallHint)
}

// TestCodexBadKeyIsRuntimeUnavailable: the model server refuses the key;
// the run fails with the auth step.
func TestCodexBadKeyIsRuntimeUnavailable(t *testing.T) {
	t.Parallel()
	bin := codexCLI.path(t)
	refused := codextest.Turn{Status: 401,
		Body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`}
	srv := codextest.New(refused, refused, refused, refused, refused, refused, refused, refused)
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeCodexProfile(t, env, bin, srv.URL, "")
	runFails(t, env, dir, "cx", "task", "runtime_unavailable", "key_env", "Incorrect API key")
	t.Logf("Codex sent %d requests with the refused key", len(srv.ModelRequests()))
}

// TestCodexExecRefusedWithoutAdvisoryGating: exec --json cannot ask, so a
// profile that wants it without accepting advisory gating is refused, with
// the reason, before anything runs.
func TestCodexExecRefusedWithoutAdvisoryGating(t *testing.T) {
	t.Parallel()
	bin := codexCLI.path(t)
	srv := codextest.New()
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeCodexProfile(t, env, bin, srv.URL, `mode = "exec"`)
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "cx", "task")
	if code != ExitFailed || !strings.Contains(out, "permission_denied") || !strings.Contains(out, "offers no gating") ||
		!strings.Contains(out, `gating = "advisory"`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("Codex ran: %d requests", n)
	}
}

// TestCodexExecAdvisory: with gating = "advisory" Codex runs exec --json in
// a read-only sandbox; nothing asks, what it did is recorded as advisory,
// and the sandbox kept it from writing.
func TestCodexExecAdvisory(t *testing.T) {
	t.Parallel()
	dir, _, evs := codexRun(t, "reject", `gating = "advisory"`, func(string) []codextest.Turn {
		return []codextest.Turn{
			{Calls: []codextest.Call{codextest.Exec("call_e1", "echo hi > out.txt", false)}},
			{Text: []string{"Could not write."}},
		}
	})
	if hasType(evs, backend.EvApprovalRequested) {
		t.Fatal("advisory gating asked for approval")
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); !os.IsNotExist(err) {
		t.Fatal("the read-only sandbox let the command write")
	}
	// Codex 0.169.0's exec --json does not always print the command item
	// (seen: the rollout in CODEX_HOME has the call, stdout only the final
	// message); the adapter then records it from the rollout (source
	// "rollout"). Either way the command is recorded exactly once, as an
	// advisory command, without the workspace's path.
	seen := eventsOf(evs, codex.EvUngated)
	if len(seen) != 1 || seen[0]["enforcement"] != "advisory" || seen[0]["type"] != "command" ||
		!strings.Contains(fmt.Sprint(seen[0]["command"]), "echo hi > out.txt") ||
		strings.Contains(fmt.Sprint(seen[0]), dir) {
		t.Fatalf("runtime.ungated_action: %v", seen)
	}
	t.Logf("recorded (source %v)", seen[0]["source"])
	started := eventsOf(evs, codex.EvRuntimeStarted)
	caps, _ := started[0]["capabilities"].(map[string]any)
	if started[0]["mode"] != "exec" || started[0]["sandbox"] != "read-only" ||
		fmt.Sprint(caps["gating"]) != "map[network:advisory patch:advisory read:advisory shell:advisory write:advisory]" {
		t.Fatalf("runtime.started: %v", started)
	}
	// gating = "advisory" is the profile's acceptance: the run is not
	// refused, and the acceptance is recorded before Codex starts.
	accepted := eventsOf(evs, backend.EvGatingAdvisory)
	if len(accepted) != 1 || accepted[0]["acceptedBy"] != `gating = "advisory"` ||
		fmt.Sprint(accepted[0]["kinds"]) != "[network patch shell write]" {
		t.Fatalf("runtime.gating_advisory: %v", accepted)
	}
	// The answer is recorded; when the command came from the rollout, its
	// record follows the answer (the rollout is read at the turn's end).
	var answered bool
	for _, m := range eventsOf(evs, backend.EvMessageCompleted) {
		answered = answered || m["text"] == "Could not write."
	}
	if !hasType(evs, backend.EvRunCompleted) || !answered {
		t.Fatalf("not completed: %v", eventsOf(evs, backend.EvMessageCompleted))
	}
}

// fakeCodex writes a shell script that stands in for the CLI: it reports
// version 0.150.0, answers the handshake as app-server does, then plays
// body.
func fakeCodex(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "codex")
	script := `#!/bin/sh
if [ "$1" = --version ]; then echo 'codex-cli 0.150.0'; exit 0; fi
read init; echo '{"id":1,"result":{"userAgent":"fake"}}'
read initialized
read thread; echo '{"id":2,"result":{"thread":{"id":"t1"},"approvalPolicy":"untrusted","approvalsReviewer":"user","sandbox":{"type":"workspaceWrite"}}}'
read turn; echo '{"id":3,"result":{"turn":{"id":"u1","status":"inProgress"}}}'
` + body + "\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCodexDriftAndUnreadableOutput: another CLI version warns and goes
// on; lines that cannot be read become schema.validation_failed events
// (scrubbed of the workspace path), the run is marked degraded, and it
// still completes.
func TestCodexDriftAndUnreadableOutput(t *testing.T) {
	t.Parallel()
	bin := fakeCodex(t, `echo "broken output from $PWD"
echo '{"method":"telepathy","params":{}}'
echo '{"method":"item/completed","params":{"item":{"type":"agentMessage","id":"m1","text":"All done."}}}'
echo '{"method":"turn/completed","params":{"threadId":"t1","turn":{"id":"u1","status":"completed"}}}'
cat >/dev/null`)
	env, dir := newGitWorkspace(t)
	writeCodexProfile(t, env, bin, "http://127.0.0.1:9", "")
	evs := runJSON(t, env, dir, "run", "--workspace", dir, "--profile", "cx", "--json", "task")
	if d := eventsOf(evs, codex.EvVersionDrift); len(d) != 1 || d[0]["version"] != "0.150.0" {
		t.Fatalf("drift: %v", d)
	}
	bad := eventsOf(evs, backend.EvSchemaValidation)
	if len(bad) != 2 || !strings.Contains(fmt.Sprint(bad[0]["excerpt"]), "broken output from .") ||
		!strings.Contains(fmt.Sprint(bad[1]["problem"]), "telepathy") {
		t.Fatalf("schema.validation_failed: %v", bad)
	}
	if deg := eventsOf(evs, codex.EvDegraded); len(deg) != 1 {
		t.Fatalf("runtime.degraded: %v", deg)
	}
	done := eventsOf(evs, backend.EvMessageCompleted)
	if !hasType(evs, backend.EvRunCompleted) || len(done) == 0 || done[len(done)-1]["text"] != "All done." {
		t.Fatalf("not completed with the CLI's answer: %v", done)
	}
}

// TestCodexExitFailsWithStderr: a CLI that exits mid-turn fails the run
// with its (scrubbed, redacted) stderr.
func TestCodexExitFailsWithStderr(t *testing.T) {
	t.Parallel()
	bin := fakeCodex(t, `echo "panic: lost my way in $PWD with key $AGENTHUB_CODEX_API_KEY" >&2; exit 3`)
	env, dir := newGitWorkspace(t)
	// Profiles read keys from AgentHub's process environment; the name is
	// this test's own, so parallel tests do not see it.
	const key = "sk-test-abcdefghijklmnopqrstuvwxyz123456"
	if err := os.Setenv("AGENTHUB_CODEX_EXIT_TEST_KEY", key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Unsetenv("AGENTHUB_CODEX_EXIT_TEST_KEY") })
	writeCodexProfile(t, env, bin, "http://127.0.0.1:9", `key_env = "AGENTHUB_CODEX_EXIT_TEST_KEY"`)
	out := runFails(t, env, dir, "cx", "task", "runtime_unavailable", "exited with code 3", "lost my way in .")
	if strings.Contains(out, dir) || strings.Contains(out, key) {
		t.Fatalf("the output holds the workspace's path or the key:\n%s", out)
	}
}

// TestCodexCancelDuringCommandLeavesNoProcess cancels a run while an
// approved command runs: Codex may start commands in a session of their
// own (and inside bubblewrap), so this checks every descendant, not only
// the process group.
func TestCodexCancelDuringCommandLeavesNoProcess(t *testing.T) {
	t.Parallel()
	bin := codexCLI.path(t)
	srv := codextest.New(codextest.Turn{Calls: []codextest.Call{codextest.Exec("call_e1", "sleep 300", false)}},
		codextest.Turn{Text: []string{"Slept."}})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeCodexProfile(t, env, bin, srv.URL, "")
	core, run := startProfileRun(t, env, dir, "cx", "sleep")
	tk := waitForApproval(t, core, run.ID)
	leader, _ := codexProcesses(t, dir, srv)
	if _, err := api.NewApprovalsAPI(core).Decide(backend.Decision{ApprovalID: tk.ID, Kind: backend.ApproveOnce,
		SubjectHash: tk.SubjectHash}); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		pids = append([]int{leader}, descendants([]int{leader})...)
		if slices.ContainsFunc(pids, func(p int) bool { return commOf(p) == "sleep" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the approved command did not start: %v", pids)
		}
	}
	t.Logf("processes while the command runs: %v", describe(pids))
	cancel(t, core, run.ID)
	for deadline := time.Now().Add(15 * time.Second); len(alive(pids)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes survived the cancel: %v", describe(alive(pids)))
		}
	}
}
