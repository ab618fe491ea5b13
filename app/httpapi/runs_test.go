package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
)

// startReal serves a real core (store, engine, demo profile) on loopback.
func startReal(t *testing.T) *fixture {
	t.Helper()
	core, err := api.Open(t.Context(), api.Config{Home: t.TempDir(), Version: "test", Surface: backend.SurfaceBrowser})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	return serve(t, New(core, fstest.MapFS{"index.html": {Data: []byte("<title>AgentHub</title>")}}, core, NewToken()))
}

// sse reads one run's stream until stop says so, returning the events.
func (f *fixture) sse(t *testing.T, runID, lastID string, stop func(backend.Event) bool) []backend.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.base+"/api/runs/"+runID+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []backend.Event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev backend.Event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("bad event %q: %v", data, err)
		}
		evs = append(evs, ev)
		if stop(ev) {
			return evs
		}
	}
	t.Fatalf("stream ended after %d events without the expected one", len(evs))
	return nil
}

func TestDemoRunOverHTTPWithSSEResume(t *testing.T) {
	f := startReal(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, body, _ := f.do(t, "POST", "/api/workspaces", fmt.Sprintf(`{"path":%q}`, dir), f.auth())
	var ws backend.Workspace
	if err := json.Unmarshal([]byte(body), &ws); err != nil {
		t.Fatalf("add workspace: %s", body)
	}
	if status, body, _ := f.do(t, "POST", "/api/runs", `{"workspaceId":"`+ws.ID+`","task":"  "}`, f.auth()); status != 400 {
		t.Fatalf("empty task: %d %s", status, body)
	}
	status, body, _ := f.do(t, "POST", "/api/runs", `{"workspaceId":"`+ws.ID+`","task":"tour"}`, f.auth())
	var run backend.RunSummary
	if err := json.Unmarshal([]byte(body), &run); status != 200 || err != nil || !run.Scripted {
		t.Fatalf("start: %d %s", status, body)
	}

	first := f.sse(t, run.ID, "", func(ev backend.Event) bool { return ev.Type == backend.EvApprovalRequested })
	for i, ev := range first {
		if ev.Sequence != int64(i+1) {
			t.Fatalf("event %d has sequence %d", i, ev.Sequence)
		}
	}
	var ticket backend.ApprovalRequest
	if err := json.Unmarshal(first[len(first)-1].Payload, &ticket); err != nil || ticket.Kind != backend.ActionPatch {
		t.Fatalf("approval payload: %v %s", err, first[len(first)-1].Payload)
	}
	stale := `{"decision":"approve_once","subjectHash":"sha256:0"}`
	if status, body, _ := f.do(t, "POST", "/api/approvals/"+ticket.ID+"/decide", stale, f.auth()); status != 409 || !strings.Contains(body, "approval_stale") {
		t.Fatalf("stale decision: %d %s", status, body)
	}
	decision := fmt.Sprintf(`{"decisionId":"d1","decision":"reject_and_tell","subjectHash":%q,"reason":"not now"}`, ticket.SubjectHash)
	if status, body, _ := f.do(t, "POST", "/api/approvals/"+ticket.ID+"/decide", decision, f.auth()); status != 200 {
		t.Fatalf("decide: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "POST", "/api/approvals/"+ticket.ID+"/decide", decision, f.auth()); status != 200 {
		t.Fatalf("the same decision again must return the first outcome: %d %s", status, body)
	}

	// Resume after the last event seen: the rest arrives with no gap or
	// duplicate, through the shell approval.
	last := first[len(first)-1].Sequence
	rest := f.sse(t, run.ID, fmt.Sprint(last), func(ev backend.Event) bool { return ev.Type == backend.EvApprovalRequested })
	for i, ev := range rest {
		if ev.Sequence != last+int64(i+1) {
			t.Fatalf("resumed event %d has sequence %d, want %d", i, ev.Sequence, last+int64(i+1))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "AGENTHUB_TOUR.md")); !os.IsNotExist(err) {
		t.Fatal("a rejected patch was written")
	}
	status, body, _ = f.do(t, "POST", "/api/runs/"+run.ID+"/cancel", "", f.auth())
	if err := json.Unmarshal([]byte(body), &run); status != 200 || err != nil || run.State != backend.RunCancelled {
		t.Fatalf("cancel: %d %s", status, body)
	}
	if _, body, _ := f.do(t, "GET", "/api/audit/verify", "", f.auth()); !strings.Contains(body, `"ok":true`) {
		t.Fatalf("audit verify: %s", body)
	}
}
