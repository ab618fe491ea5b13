package api

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
)

// changesPlaybook proposes three writes in one step, put to the reviewer
// together (parallel_batch_approval), and then expects the reviewer's
// comment on shared.txt among the results it is sent.
const changesPlaybook = `version = 1
name = "three files"
executor = "parallel_batch_approval"
[[step]]
say = "editing"
[[step.call]]
tool = "write_file"
args = { path = "shared.txt", content = "line 1\nline TWO\nline 3\n" }
[[step.call]]
tool = "write_file"
args = { path = "b.txt", content = "bee\n" }
[[step.call]]
tool = "write_file"
args = { path = "c.txt", content = "sea\n" }
[[step]]
expect = ["Reviewer comments on this change:", "shared.txt line 2: say two in words"]
say = "done"
`

func byPath(t *testing.T, cs ChangeSet) map[string]Change {
	t.Helper()
	out := map[string]Change{}
	for _, c := range cs.Changes {
		if len(c.Files) != 1 {
			t.Fatalf("change %+v: want one file", c)
		}
		out[c.Files[0].Path] = c
	}
	return out
}

// TestChangeSetReviewAndRevert (issue 18): a three-file run is reviewed in
// its change set (three pending proposals with their diffs), a line comment
// on one proposal reaches the agent with the decision (the playbook expects
// it), the three are decided together, each on its own approval; the run's
// revert refuses, naming the file, while a file changed since and restores
// nothing; one change is reverted alone, then the rest; each revert marks
// its change reverted and is audited with the run.
func TestChangeSetReviewAndRevert(t *testing.T) {
	e := newWTEnv(t)
	changes := NewChangesAPI(e.core)
	r := e.start(t, changesPlaybook, "")

	var cs ChangeSet
	for deadline := time.Now().Add(runWait); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if cs, err = changes.Get(r.ID); err != nil {
			t.Fatal(err)
		}
		pending := 0
		for _, c := range cs.Changes {
			if c.Pending {
				pending++
			}
		}
		if pending == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 proposals pending: %+v", pending, cs.Changes)
		}
	}
	got := byPath(t, cs)
	for _, p := range []string{"shared.txt", "b.txt", "c.txt"} {
		c := got[p]
		if c.State != ChangeProposed || c.ApprovalID == "" || c.Turn != 1 || c.Files[0].Diff == nil {
			t.Errorf("%s: %+v, want a pending proposal of turn 1 with its diff", p, c)
		}
	}
	if d := got["shared.txt"].Files[0].Diff; d.Stats.Added != 1 || d.Stats.Deleted != 18 {
		t.Errorf("shared.txt diff stats %+v", d.Stats)
	}

	// Comments are checked before they are kept.
	bad := []CommentInput{
		{RunID: r.ID, ApprovalID: got["b.txt"].ApprovalID, Path: "b.txt", StartLine: 0, Body: "x"},
		{RunID: r.ID, ApprovalID: got["b.txt"].ApprovalID, Path: "b.txt", StartLine: 1, Body: "  "},
		{RunID: r.ID, ApprovalID: got["b.txt"].ApprovalID, Path: "other.txt", StartLine: 1, Body: "x"},
		{RunID: r.ID, Path: "b.txt", StartLine: 1, Body: "x"},
	}
	for _, in := range bad {
		if _, err := changes.Comment(in); err == nil {
			t.Errorf("comment %+v was kept", in)
		}
	}
	c, err := changes.Comment(CommentInput{RunID: r.ID, ApprovalID: got["shared.txt"].ApprovalID,
		Path: "shared.txt", StartLine: 2, Body: "say two in words"})
	if err != nil {
		t.Fatal(err)
	}

	// One action, three decisions, each bound to its own approval and hash.
	for _, p := range []string{"shared.txt", "b.txt", "c.txt"} {
		kind := backend.ApproveOnce
		if p == "c.txt" {
			kind = backend.RejectAndTell
		}
		if _, err := e.approvals.Decide(backend.Decision{ApprovalID: got[p].ApprovalID, ToolCallID: got[p].ToolCallID,
			Kind: kind, SubjectHash: got[p].SubjectHash}); err != nil {
			t.Fatal(err)
		}
	}
	end := e.approveUntilDone(t, r.ID)
	if end.State != backend.RunCompleted {
		t.Fatalf("run ended %s (the playbook expects the comment among the results): %+v", end.State, end)
	}
	if cs, err = changes.Get(r.ID); err != nil {
		t.Fatal(err)
	}
	got = byPath(t, cs)
	if got["shared.txt"].State != ChangeApplied || got["b.txt"].State != ChangeApplied ||
		got["c.txt"].State != ChangeRejected || got["c.txt"].Reason != "reviewer" {
		t.Fatalf("states after the decisions: %+v", cs.Changes)
	}
	if len(cs.Comments) != 1 || cs.Comments[0].ID != c.ID || cs.Comments[0].DeliveredIn == "" {
		t.Errorf("comments %+v, want %s delivered", cs.Comments, c.ID)
	}
	// An applied change takes comments (for the session's next message); a
	// decided proposal no longer does.
	if _, err := changes.Comment(CommentInput{RunID: r.ID, CheckpointID: got["b.txt"].CheckpointID, Path: "b.txt",
		StartLine: 1, Body: "call it bee.md"}); err != nil {
		t.Errorf("comment on an applied change: %v", err)
	}
	if _, err := changes.Comment(CommentInput{RunID: r.ID, ApprovalID: got["c.txt"].ApprovalID, Path: "c.txt",
		StartLine: 1, Body: "too late"}); backend.CodeOf(err) != backend.CodeNotFound {
		t.Errorf("comment on a decided proposal: %v, want not_found", err)
	}

	// Drift: the run's revert names the changed file and restores nothing.
	if err := os.WriteFile(filepath.Join(e.checkout, "b.txt"), []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = changes.Revert(r.ID, "")
	if backend.CodeOf(err) != backend.CodeConflict || !strings.Contains(err.Error(), "b.txt") ||
		strings.Contains(err.Error(), "shared.txt") {
		t.Fatalf("revert with b.txt changed: %v, want a conflict naming b.txt only", err)
	}
	if s := readFile(t, e.checkout, "shared.txt"); s != "line 1\nline TWO\nline 3\n" {
		t.Fatalf("a refused revert restored shared.txt: %q", s)
	}

	// One change alone, then the rest.
	res, err := changes.Revert(r.ID, got["shared.txt"].CheckpointID)
	if err != nil || len(res.Reverted) != 1 {
		t.Fatalf("revert shared.txt: %+v, %v", res, err)
	}
	if s := readFile(t, e.checkout, "shared.txt"); s != twenty(nil) {
		t.Errorf("shared.txt after its revert: %q", s)
	}
	if _, err := changes.Revert(r.ID, got["shared.txt"].CheckpointID); backend.CodeOf(err) != backend.CodeNotFound {
		t.Errorf("second revert of the same change: %v, want not_found", err)
	}
	if err := os.WriteFile(filepath.Join(e.checkout, "b.txt"), []byte("bee\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err = changes.Revert(r.ID, ""); err != nil || len(res.Reverted) != 1 {
		t.Fatalf("revert the run: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(e.checkout, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt after the run's revert: %v, want it gone (the run created it)", err)
	}
	if cs, err = changes.Get(r.ID); err != nil {
		t.Fatal(err)
	}
	got = byPath(t, cs)
	if got["shared.txt"].State != ChangeReverted || got["b.txt"].State != ChangeReverted {
		t.Errorf("states after the reverts: %+v", cs.Changes)
	}
	entries, err := NewAuditAPI(e.core).List(AuditFilter{RunID: r.ID})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, a := range entries {
		kinds[a.Kind]++
	}
	if kinds["patch.undone"] != 2 || kinds["review.comment"] != 2 || kinds["review.comments"] != 1 {
		t.Errorf("audit kinds of the run %v: want 2 patch.undone, the 2 comments and the delivery of the first", kinds)
	}
	if v, err := NewAuditAPI(e.core).Verify(); err != nil || !v.OK {
		t.Errorf("audit verify: %+v, %v", v, err)
	}
}

// TestChangeSetOfAWorktreeRun: a worktree run ends with run.diff.ready for
// the turn, the run and its branch against the base commit, and its change
// set carries the branch's files.
func TestChangeSetOfAWorktreeRun(t *testing.T) {
	e := newWTEnv(t)
	r := e.start(t, playbook("wt", map[string]string{"owned.txt": "mine\n", "shared.txt": twenty(map[int]string{3: "three"})}),
		"worktree")
	if end := e.approveUntilDone(t, r.ID); end.State != backend.RunCompleted {
		t.Fatalf("run ended %s", end.State)
	}
	evs, err := e.runs.Events(r.ID, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	scopes := map[backend.DiffScope]backend.DiffReady{}
	for _, ev := range evs {
		if ev.Type == backend.EvDiffReady {
			var d backend.DiffReady
			if err := json.Unmarshal(ev.Payload, &d); err != nil {
				t.Fatal(err)
			}
			scopes[d.Scope] = d
		}
	}
	base := gitIn(t, e.checkout, "rev-parse", "HEAD")
	b, ok := scopes[backend.DiffBranch]
	if !ok || b.Base != base || b.Target != "worktree" || b.Summary.Files != 2 || b.Summary.Added != 2 || b.Summary.Removed != 1 {
		t.Errorf("branch diff %+v, want 2 files (+2 -1) against %s", b, base)
	}
	for _, s := range []backend.DiffScope{backend.DiffTurn, backend.DiffRun} {
		if d := scopes[s]; d.Summary.Files != 2 || d.Target != "workspace" {
			t.Errorf("%s diff %+v, want the 2 files", s, d)
		}
	}
	cs, err := NewChangesAPI(e.core).Get(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Branch == nil || cs.Branch.Base != base || len(cs.Branch.Files) != 2 {
		t.Errorf("change set branch %+v", cs.Branch)
	}
	if readFile(t, e.checkout, "shared.txt") != twenty(nil) {
		t.Error("the worktree run wrote to the checkout")
	}
}

// TestChangesOf folds events into changes: a proposal approved by policy
// carries its own diff; a partial rejection (it names a path) leaves the
// change applied; drift and a cancelled call reject; turns follow the step
// checkpoints.
func TestChangesOf(t *testing.T) {
	ev := func(seq int64, typ backend.EventType, payload string) backend.Event {
		return backend.Event{Sequence: seq, Type: typ, Payload: json.RawMessage(payload)}
	}
	preview := `{"path":"p.txt","operation":"create","diff":{"status":"added","old":{"exists":false,"size":0,"lines":0},` +
		`"new":{"path":"p.txt","exists":true,"size":2,"lines":1},"hunks":[],"stats":{"added":1,"deleted":0}}}`
	evs := []backend.Event{
		ev(1, backend.EvPatchProposed, `{"toolCallId":"c1","tool":"write_file","resolver":"policy","files":[{"path":"p.txt","preimage":"absent"}],"preview":`+preview+`}`),
		ev(2, backend.EvPatchApplied, `{"toolCallId":"c1","checkpointId":"ck_1"}`),
		ev(3, backend.EvCheckpointCreated, `{"kind":"step","step":1}`),
		ev(4, backend.EvPatchProposed, `{"toolCallId":"c2","approvalId":"apr_2","tool":"edit_file","files":[{"path":"q.txt","preimage":"h"}]}`),
		ev(5, backend.EvPatchRejected, `{"toolCallId":"c2","path":"q.txt","reason":"reviewer","hunks":[1]}`),
		ev(6, backend.EvPatchApplied, `{"toolCallId":"c2","checkpointId":"ck_2"}`),
		ev(7, backend.EvPatchProposed, `{"toolCallId":"c3","approvalId":"apr_3","tool":"write_file","files":[{"path":"r.txt","preimage":"h"}]}`),
		ev(8, backend.EvPatchRejected, `{"toolCallId":"c3","approvalId":"apr_3","reason":"drift"}`),
		ev(9, backend.EvPatchProposed, `{"toolCallId":"c4","approvalId":"apr_4","tool":"write_file","files":[{"path":"s.txt","preimage":"h"}]}`),
		ev(10, backend.EvToolResult, `{"toolCallId":"c4","status":"Cancelled","content":"cancelled","isError":true}`),
	}
	got, last := changesOf(evs)
	type row struct {
		call, state, reason, ck string
		turn                    int
		diff                    bool
	}
	var rows []row
	for _, c := range got {
		rows = append(rows, row{c.ToolCallID, c.State, c.Reason, c.CheckpointID, c.Turn, c.Files[0].Diff != nil})
	}
	want := []row{
		{"c1", ChangeApplied, "", "ck_1", 1, true},
		{"c2", ChangeApplied, "", "ck_2", 2, false},
		{"c3", ChangeRejected, "drift", "", 2, false},
		{"c4", ChangeRejected, "Cancelled", "", 2, false},
	}
	if !slices.Equal(rows, want) || last != 2 {
		t.Errorf("changes %+v (last turn %d), want %+v (2)", rows, last, want)
	}
}
