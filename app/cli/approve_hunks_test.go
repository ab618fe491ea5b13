package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
)

// twentyLines is notes.txt as committed: "line 1" … "line 20".
func twentyLines(edit map[int]string) string {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		line := fmt.Sprintf("line %d", i)
		if s, ok := edit[i]; ok {
			line = s
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// twoHunkPlaybook writes notes.txt with lines 2 and 19 changed (far enough
// apart to be two hunks), then checks that the tool result it got back
// names the rejected hunk: that is what the agent is told.
func twoHunkPlaybook(t *testing.T) string {
	t.Helper()
	return notesPlaybook(t, "two hunks", map[int]string{2: "line 2, edited by the agent", 19: "line 19, edited by the agent"},
		`["approved 1 of 2 hunks", "rejected @@ -1,5 +1,5 @@", "only the footer"]`)
}

// notesPlaybook writes a playbook that writes notes.txt as twentyLines(edit)
// and then expects (a TOML array) in the tool result it got back.
func notesPlaybook(t *testing.T, name string, edit map[int]string, expect string) string {
	t.Helper()
	content, _ := json.Marshal(twentyLines(edit))
	text := `version = 1
name = "` + name + `"

[[step]]
say = "Editing notes.txt."
[[step.call]]
tool = "write_file"
args = { path = "notes.txt", content = ` + string(content) + ` }

[[step]]
expect = ` + expect + `
say = "The reviewer decided."
`
	p := filepath.Join(t.TempDir(), "playbook.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// commitFile adds and commits one file in the workspace repository.
func commitFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", name}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "add " + name}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// startPending runs the playbook without a terminal, so its approval stays
// pending (exit 3), and returns that approval.
func startPending(t *testing.T, env map[string]string, dir, playbook string) backend.ApprovalRequest {
	t.Helper()
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--playbook", playbook, "--json", "edit notes")
	if code != ExitWaiting {
		t.Fatalf("run: exit %d, want 3\nstdout %s\nstderr %s", code, out, errOut)
	}
	runID := decodeNDJSON(t, out, 0)[0].RunID
	code, out, _ = runCLI(t, env, "approvals", "list", "--run", runID, "--json")
	var pending []backend.ApprovalRequest
	if err := json.Unmarshal([]byte(out), &pending); code != 0 || err != nil || len(pending) != 1 {
		t.Fatalf("approvals list: %d %v %s", code, err, out)
	}
	return pending[0]
}

// TestApproveOneOfTwoHunks is the end to end of per-hunk approval from the
// headless CLI: a playbook's write produces a two-hunk patch on a committed
// file; `approvals show` numbers the hunks; `approve --hunks 2` writes
// exactly that hunk; the run completes; the agent's tool result and the
// run.patch.rejected event name the hunk that was turned down.
func TestApproveOneOfTwoHunks(t *testing.T) {
	env, dir := newGitWorkspace(t)
	original := twentyLines(nil)
	commitFile(t, dir, "notes.txt", original)
	a := startPending(t, env, dir, twoHunkPlaybook(t))

	code, out, errOut := runCLI(t, env, "approvals", "show", a.ID)
	if code != 0 {
		t.Fatalf("approvals show: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"modify notes.txt: 2 hunk(s)", "hunk 1 of 2  @@ -1,5 +1,5 @@", "   2 -line 2\n   3 +line 2, edited by the agent",
		"hunk 2 of 2  @@ -16,5 +16,5 @@", "   4 -line 19\n   5 +line 19, edited by the agent", "agenthub approve " + a.ID + " --hunks 1,2"} {
		if !strings.Contains(out, want) {
			t.Errorf("approvals show lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runCLI(t, env, "approve", a.ID, "--hunks", "2", "--reason", "only the footer", "--json")
	if code != ExitOK {
		t.Fatalf("approve --hunks 2: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	got, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
	if want := twentyLines(map[int]string{19: "line 19, edited by the agent"}); err != nil || string(got) != want {
		t.Fatalf("notes.txt holds\n%s\nwant only hunk 2 applied:\n%s (err %v)", got, want, err)
	}
	evs := decodeNDJSON(t, out, firstSequence(t, out))
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("the run did not complete: %v", eventTypesOf(evs))
	}
	rejected := firstPayloadOf(t, evs, backend.EvPatchRejected)
	hunks, _ := rejected["hunks"].([]any)
	if len(hunks) != 1 || rejected["path"] != "notes.txt" || rejected["comment"] != "only the footer" {
		t.Fatalf("run.patch.rejected = %v, want hunk 1 of notes.txt with the reason", rejected)
	}
	if h, _ := hunks[0].(map[string]any); h["oldStart"] != float64(1) {
		t.Fatalf("the rejected hunk starts at old line %v, want 1 (the hunk of line 2)", h["oldStart"])
	}
	result := firstPayloadOf(t, evs, backend.EvToolResult)
	if content, _ := result["content"].(string); !strings.Contains(content, "rejected @@ -1,5 +1,5 @@ (reason: only the footer)") {
		t.Fatalf("the agent was not told which hunk was rejected: %q", content)
	}
	applied := firstPayloadOf(t, evs, backend.EvPatchApplied)
	if h, _ := applied["hunks"].(map[string]any); fmt.Sprint(h["approved"]) != "[1]" || h["of"] != float64(2) {
		t.Fatalf("run.patch.applied hunks = %v, want index 1 of 2", applied["hunks"])
	}
}

// TestApproveHunksRefusesBadSelections: every mistake is refused with a
// stable code and the next step, and decides nothing: the approval stays
// pending and the file untouched.
func TestApproveHunksRefusesBadSelections(t *testing.T) {
	env, dir := newGitWorkspace(t)
	original := twentyLines(nil)
	commitFile(t, dir, "notes.txt", original)
	a := startPending(t, env, dir, twoHunkPlaybook(t))
	shell := filepath.Join(t.TempDir(), "shell.toml")
	if err := os.WriteFile(shell, []byte("version = 1\n[[step]]\n[[step.call]]\ntool = \"run_shell\"\n"+
		"args = { command = \"true\" }\n[[step]]\nsay = \"done\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := startPending(t, env, dir, shell)
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"hunk out of range", []string{"approve", a.ID, "--hunks", "3"}, ExitFailed,
			[]string{"invalid_input", "there is no hunk 3", "has 2 hunks", "next: See its hunks", "approvals show " + a.ID}},
		{"hunk zero", []string{"approve", a.ID, "--hunks", "0"}, ExitFailed, []string{"invalid_input", "they count from 1"}},
		{"not a number", []string{"approve", a.ID, "--hunks", "first"}, ExitFailed, []string{"invalid_input", `"first" is not a hunk number`, "e.g. --hunks 1,3"}},
		{"empty selection", []string{"approve", a.ID, "--hunks", ""}, ExitFailed, []string{"invalid_input", "reject the approval instead"}},
		{"given twice", []string{"approve", a.ID, "--hunks", "1,1-2"}, ExitFailed, []string{"invalid_input", "hunk 1 is given twice"}},
		{"backwards range", []string{"approve", a.ID, "--hunks", "2-1"}, ExitFailed, []string{"invalid_input", "runs backwards"}},
		{"not a patch", []string{"approve", cmd.ID, "--hunks", "1"}, ExitFailed, []string{"invalid_input", "not a patch", "next: Approve or reject it whole"}},
		{"with reject", []string{"reject", a.ID, "--hunks", "1"}, ExitUsage, []string{"--hunks chooses what to approve"}},
		{"with a wider scope", []string{"approve", a.ID, "--hunks", "1", "--scope", "run"}, ExitUsage, []string{"cannot be combined with --scope run"}},
		{"show: unknown approval", []string{"approvals", "show", "apr_nope"}, ExitFailed, []string{"not_found", "approvals list"}},
		{"show: no id", []string{"approvals", "show"}, ExitUsage, []string{"approvals show takes 1 argument"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, env, tc.args...)
			for _, want := range tc.want {
				if code != tc.code || !strings.Contains(out+errOut, want) {
					t.Fatalf("exit %d, want %d with %q\nstdout %s\nstderr %s", code, tc.code, want, out, errOut)
				}
			}
		})
	}
	code, out, _ := runCLI(t, env, "approvals", "list", "--json")
	var pending []backend.ApprovalRequest
	if err := json.Unmarshal([]byte(out), &pending); code != 0 || err != nil || len(pending) != 2 {
		t.Fatalf("after refused selections: %d pending (%v), want both still pending", len(pending), err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != original {
		t.Fatalf("a refused selection changed notes.txt:\n%s", got)
	}
}

// firstSequence is the sequence of the first event in --json output, so the
// events that follow a decision can be checked for gaps from there.
func firstSequence(t *testing.T, out string) int64 {
	t.Helper()
	var ev backend.Event
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &ev); err != nil {
		t.Fatalf("first line is not an event: %v\n%s", err, out)
	}
	return ev.Sequence - 1
}

func firstPayloadOf(t *testing.T, evs []backend.Event, typ backend.EventType) map[string]any {
	t.Helper()
	for _, ev := range evs {
		if ev.Type == typ {
			var m map[string]any
			if err := json.Unmarshal(ev.Payload, &m); err != nil {
				t.Fatalf("%s payload: %v", typ, err)
			}
			return m
		}
	}
	t.Fatalf("no %s event among %v", typ, eventTypesOf(evs))
	return nil
}

func eventTypesOf(evs []backend.Event) []backend.EventType {
	out := make([]backend.EventType, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// everyThirdPlaybook rewrites lines 3, 6, 9 and 12 of notes.txt: one hunk,
// which only a selection of lines can split. The next step checks that the
// agent was told exactly which lines were left out.
func everyThirdPlaybook(t *testing.T) string {
	t.Helper()
	return notesPlaybook(t, "every third line", map[int]string{3: "line 3, edited", 6: "line 6, edited", 9: "line 9, edited",
		12: "line 12, edited"},
		`['old line 3 "line 3" was kept', '"line 3, edited" was not added', '"line 12, edited" was not added', 'only line 6']`)
}

// TestApproveLinesOfOneHunk: `approvals show` numbers the lines of the one
// hunk; `approve --hunks 1:7-8` (the removal and the addition of line 6)
// writes exactly that rewrite; the agent is told each line left out; bad
// line choices are refused and decide nothing.
func TestApproveLinesOfOneHunk(t *testing.T) {
	env, dir := newGitWorkspace(t)
	original := twentyLines(nil)
	commitFile(t, dir, "notes.txt", original)
	a := startPending(t, env, dir, everyThirdPlaybook(t))

	code, out, errOut := runCLI(t, env, "approvals", "show", a.ID)
	if code != 0 {
		t.Fatalf("approvals show: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"1 hunk(s)", "   7 -line 6\n   8 +line 6, edited", "--hunks 1:3-4"} {
		if !strings.Contains(out, want) {
			t.Errorf("approvals show lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []struct{ spec, want string }{
		{"1:1", "line 1 of hunk 1 is unchanged context"},
		{"1:99", "hunk 1 has 19 lines"},
		{"1:7,1:7", "line 7 of hunk 1 is given twice"},
		{"1,1:7", "hunk 1 is given whole and by lines"},
		{"1:8-7", "runs backwards"},
		{"2:1", "there is no hunk 2"},
	} {
		code, out, errOut := runCLI(t, env, "approve", a.ID, "--hunks", bad.spec)
		if code != ExitFailed || !strings.Contains(out+errOut, bad.want) || !strings.Contains(out+errOut, "invalid_input") {
			t.Fatalf("--hunks %s: exit %d, want invalid_input with %q\n%s%s", bad.spec, code, bad.want, out, errOut)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != original {
		t.Fatalf("a refused selection changed notes.txt:\n%s", got)
	}

	code, out, errOut = runCLI(t, env, "approve", a.ID, "--hunks", "1:7-8", "--reason", "only line 6", "--json")
	if code != ExitOK {
		t.Fatalf("approve --hunks 1:7-8: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	got, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
	if want := twentyLines(map[int]string{6: "line 6, edited"}); err != nil || string(got) != want {
		t.Fatalf("notes.txt holds\n%s\nwant only line 6 rewritten (err %v)", got, err)
	}
	evs := decodeNDJSON(t, out, firstSequence(t, out))
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("the run did not complete (the agent's expectations failed?): %v", eventTypesOf(evs))
	}
	rejected := firstPayloadOf(t, evs, backend.EvPatchRejected)
	if lines, _ := rejected["lines"].([]any); len(lines) != 1 {
		t.Fatalf("run.patch.rejected = %v, want the lines left out of the one hunk", rejected)
	} else if left, _ := lines[0].(map[string]any)["leftOut"].([]any); len(left) != 6 {
		t.Fatalf("left out %d lines, want 6 (three rewrites)", len(left))
	}
}
