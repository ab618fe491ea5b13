package httpapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
)

// tourPatch starts the demo tour in a fresh workspace and returns the
// workspace folder, the run and the first approval it asks for (the patch
// that creates the tour's file), with the events up to it.
func tourPatch(t *testing.T, f *fixture) (string, backend.RunSummary, backend.ApprovalRequest, []backend.Event) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, body, _ := f.do(t, "POST", "/api/workspaces", fmt.Sprintf(`{"path":%q}`, dir), f.auth())
	var ws backend.Workspace
	if err := json.Unmarshal([]byte(body), &ws); err != nil {
		t.Fatalf("add workspace: %s", body)
	}
	status, body, _ := f.do(t, "POST", "/api/runs", `{"workspaceId":"`+ws.ID+`","task":"tour"}`, f.auth())
	var run backend.RunSummary
	if err := json.Unmarshal([]byte(body), &run); status != 200 || err != nil {
		t.Fatalf("start: %d %s", status, body)
	}
	evs := f.sse(t, run.ID, "", func(ev backend.Event) bool { return ev.Type == backend.EvApprovalRequested })
	var ticket backend.ApprovalRequest
	if err := json.Unmarshal(evs[len(evs)-1].Payload, &ticket); err != nil || ticket.Kind != backend.ActionPatch {
		t.Fatalf("approval payload: %v %s", err, evs[len(evs)-1].Payload)
	}
	return dir, run, ticket, evs
}

// TestDecideRefusesHunksThatDoNotExist is the attack of issue 14 item 12:
// the decide endpoint accepted a selection of hunks that do not exist,
// consumed the approval and wrote nothing. A selection must name hunks of
// the patch shown, else invalid_input, and the approval stays pending.
func TestDecideRefusesHunksThatDoNotExist(t *testing.T) {
	f := startReal(t)
	_, run, ticket, evs := tourPatch(t, f)
	var pv struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(ticket.Preview, &pv); err != nil || pv.Path == "" {
		t.Fatalf("patch preview: %v %s", err, ticket.Preview)
	}
	for i, hunks := range []string{
		`[{"path":"../x","index":99}]`,
		`[{"path":"../x","index":0}]`,
		fmt.Sprintf(`[{"path":%q,"index":99}]`, pv.Path),
		fmt.Sprintf(`[{"path":%q,"index":-1}]`, pv.Path),
		fmt.Sprintf(`[{"path":%q,"index":0},{"path":%q,"index":0}]`, pv.Path, pv.Path),
		`[]`,
	} {
		d := fmt.Sprintf(`{"decisionId":"bad%d","decision":"approve_once","subjectHash":%q,"hunks":%s}`, i, ticket.SubjectHash, hunks)
		status, body, _ := f.do(t, "POST", "/api/approvals/"+ticket.ID+"/decide", d, f.auth())
		if status != 400 || !strings.Contains(body, "invalid_input") {
			t.Errorf("hunks %s: %d %s, want 400 invalid_input", hunks, status, body)
		}
	}
	// The approval was not consumed: it is still pending and a valid
	// selection of the patch's own first hunk is accepted.
	_, body, _ := f.do(t, "GET", "/api/approvals?runId="+run.ID, "", f.auth())
	if !strings.Contains(body, ticket.ID) {
		t.Fatalf("the approval is no longer pending after refused selections: %s", body)
	}
	good := fmt.Sprintf(`{"decisionId":"good","decision":"approve_once","subjectHash":%q,"hunks":[{"path":%q,"index":0}]}`,
		ticket.SubjectHash, pv.Path)
	if status, body, _ := f.do(t, "POST", "/api/approvals/"+ticket.ID+"/decide", good, f.auth()); status != 200 {
		t.Fatalf("a valid selection: %d %s", status, body)
	}
	// The next approval of the tour is a command: a selection of hunks is
	// refused for it.
	rest := f.sse(t, run.ID, fmt.Sprint(evs[len(evs)-1].Sequence), func(ev backend.Event) bool {
		return ev.Type == backend.EvApprovalRequested
	})
	var next backend.ApprovalRequest
	if err := json.Unmarshal(rest[len(rest)-1].Payload, &next); err != nil {
		t.Fatal(err)
	}
	if next.Kind != backend.ActionPatch {
		d := fmt.Sprintf(`{"decisionId":"bad-kind","decision":"approve_once","subjectHash":%q,"hunks":[{"path":"a","index":0}]}`, next.SubjectHash)
		if status, body, _ := f.do(t, "POST", "/api/approvals/"+next.ID+"/decide", d, f.auth()); status != 400 || !strings.Contains(body, "invalid_input") {
			t.Errorf("hunks for a %s: %d %s, want 400 invalid_input", next.Kind, status, body)
		}
	}
	reject := fmt.Sprintf(`{"decisionId":"end","decision":"reject_and_stop","subjectHash":%q}`, next.SubjectHash)
	if status, body, _ := f.do(t, "POST", "/api/approvals/"+next.ID+"/decide", reject, f.auth()); status != 200 {
		t.Fatalf("reject: %d %s", status, body)
	}
}
