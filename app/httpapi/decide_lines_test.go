package httpapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/patch"
	"agenthub/diffview"
)

// TestDecideLines is the attack on per-line selection (issue 18): a
// selection naming a line outside its hunk, a line twice, a context line,
// no line, one sent with a stale subject hash, or one with a scope wider
// than once is refused, the approval
// stays pending and nothing is written; a valid selection of one added line
// writes exactly that line.
func TestDecideLines(t *testing.T) {
	f := startReal(t)
	dir, run, ticket, evs := tourPatch(t, f)
	var pv patch.Preview
	if err := json.Unmarshal(ticket.Preview, &pv); err != nil || len(pv.Diff.Hunks) == 0 || len(pv.Diff.Hunks[0].Lines) < 3 {
		t.Fatalf("patch preview with a hunk of several lines: %v %s", err, ticket.Preview)
	}
	h := pv.Diff.Hunks[0]
	ctx := -1
	for i, l := range h.Lines {
		if l.Op == diffview.OpContext {
			ctx = i
		}
	}
	bad := []string{
		fmt.Sprintf(`[{"path":%q,"index":0,"lines":[%d]}]`, pv.Path, len(h.Lines)),
		fmt.Sprintf(`[{"path":%q,"index":0,"lines":[-1]}]`, pv.Path),
		fmt.Sprintf(`[{"path":%q,"index":0,"lines":[1,1]}]`, pv.Path),
		fmt.Sprintf(`[{"path":%q,"index":0,"lines":[]}]`, pv.Path),
		fmt.Sprintf(`[{"path":%q,"index":0,"lines":[0]},{"path":%q,"index":0,"lines":[1]}]`, pv.Path, pv.Path),
	}
	if ctx >= 0 {
		bad = append(bad, fmt.Sprintf(`[{"path":%q,"index":0,"lines":[%d]}]`, pv.Path, ctx))
	}
	for i, hunks := range bad {
		d := fmt.Sprintf(`{"decisionId":"bad%d","decision":"approve_once","subjectHash":%q,"hunks":%s}`, i, ticket.SubjectHash, hunks)
		status, body, _ := f.do(t, "POST", "/api/approvals/"+ticket.ID+"/decide", d, f.auth())
		if status != 400 || !strings.Contains(body, "invalid_input") {
			t.Errorf("hunks %s: %d %s, want 400 invalid_input", hunks, status, body)
		}
	}
	first := fmt.Sprintf(`[{"path":%q,"index":0,"lines":[0]}]`, pv.Path)
	// A partial approval applies once: it is never remembered for the run or
	// the workspace, where it would approve the whole request next time.
	for _, kind := range []backend.DecisionKind{backend.ApproveForRun, backend.AlwaysAllowWorkspace} {
		d := fmt.Sprintf(`{"decisionId":"wide-%s","decision":%q,"subjectHash":%q,"hunks":%s}`, kind, kind, ticket.SubjectHash, first)
		status, body, _ := f.do(t, "POST", "/api/approvals/"+ticket.ID+"/decide", d, f.auth())
		if status != 400 || !strings.Contains(body, "invalid_input") || !strings.Contains(body, "approve_once") {
			t.Errorf("a selection with %s: %d %s, want 400 invalid_input naming approve_once", kind, status, body)
		}
	}
	stale := fmt.Sprintf(`{"decisionId":"stale","decision":"approve_once","subjectHash":"%s","hunks":%s}`,
		strings.Repeat("0", 64), first)
	if status, body, _ := f.do(t, "POST", "/api/approvals/"+ticket.ID+"/decide", stale, f.auth()); status < 400 ||
		!strings.Contains(body, string(backend.CodeApprovalStale)) {
		t.Errorf("a selection on a stale hash: %d %s, want %s", status, body, backend.CodeApprovalStale)
	}
	_, body, _ := f.do(t, "GET", "/api/approvals?runId="+run.ID, "", f.auth())
	if !strings.Contains(body, ticket.ID) {
		t.Fatalf("the approval is no longer pending after refused selections: %s", body)
	}
	if _, err := os.Stat(filepath.Join(dir, pv.Path)); !os.IsNotExist(err) && pv.Operation == "create" {
		t.Fatalf("a refused selection wrote %s: %v", pv.Path, err)
	}

	// Only the first added line of the created file: exactly it is written.
	good := fmt.Sprintf(`{"decisionId":"good","decision":"approve_once","subjectHash":%q,"hunks":%s}`, ticket.SubjectHash, first)
	if status, body, _ := f.do(t, "POST", "/api/approvals/"+ticket.ID+"/decide", good, f.auth()); status != 200 {
		t.Fatalf("a valid selection: %d %s", status, body)
	}
	f.sse(t, run.ID, fmt.Sprint(evs[len(evs)-1].Sequence), func(ev backend.Event) bool {
		return ev.Type == backend.EvPatchApplied || ev.Type == backend.EvToolResult
	})
	var want strings.Builder
	for _, l := range h.Lines {
		if l.Op == diffview.OpAdd {
			want.WriteString(l.Text + "\n")
			break
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, pv.Path))
	if err != nil || string(got) != want.String() {
		t.Fatalf("%s holds %q, want only the chosen line %q (%v)", pv.Path, got, want.String(), err)
	}
}
