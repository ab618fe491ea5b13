package httpapi

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"agenthub/app/api"
	"agenthub/backend"
)

func TestSearchAndExportRoutes(t *testing.T) {
	f := start(t)
	_, body, _ := f.do(t, "POST", "/api/workspaces", fmt.Sprintf(`{"path":%q}`, t.TempDir()), f.auth())
	var ws backend.Workspace
	if err := json.Unmarshal([]byte(body), &ws); err != nil {
		t.Fatal(err, body)
	}
	status, body, _ := f.do(t, "POST", "/api/runs", fmt.Sprintf(`{"workspaceId":%q,"task":"find the capybara"}`,
		ws.ID), f.auth())
	var run backend.RunSummary
	if err := json.Unmarshal([]byte(body), &run); status != 200 || err != nil {
		t.Fatalf("start: %d %v %s", status, err, body)
	}

	status, body, _ = f.do(t, "GET", "/api/search?q=capyb&workspace="+ws.ID, "", f.auth())
	var hits []api.SearchResult
	if err := json.Unmarshal([]byte(body), &hits); status != 200 || err != nil || len(hits) != 1 {
		t.Fatalf("search: %d %v %s", status, err, body)
	}
	if h := hits[0]; h.RunID != run.ID || h.Sequence != 1 || h.Type != backend.EvRunCreated {
		t.Fatalf("hit %+v", h)
	}
	status, body, _ = f.do(t, "GET", "/api/search?q=capybara&status=Failed", "", f.auth())
	if status != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("search with a status no run has: %d %s", status, body)
	}
	status, body, _ = f.do(t, "GET", "/api/search?q=", "", f.auth())
	if status != 400 || !strings.Contains(body, `"invalid_input"`) {
		t.Fatalf("empty search: %d %s", status, body)
	}
	if status, _, _ := f.do(t, "GET", "/api/search?q=capybara", "", nil); status != 401 {
		t.Fatalf("search without a token: %d", status)
	}

	status, body, hdr := f.do(t, "GET", "/api/runs/"+run.ID+"/export", "", f.auth())
	if status != 200 || hdr.Get("Content-Type") != "application/zip" ||
		!strings.Contains(hdr.Get("Content-Disposition"), run.ID+".zip") {
		t.Fatalf("export: %d %v", status, hdr)
	}
	r, err := api.VerifyBundle(bytes.NewReader([]byte(body)), int64(len(body)))
	if err != nil || !r.OK || r.Run.ID != run.ID {
		t.Fatalf("the exported bundle: %+v %v", r, err)
	}
	if _, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body))); err != nil {
		t.Fatal(err)
	}
	status, body, _ = f.do(t, "GET", "/api/runs/page?limit=10&workspace="+ws.ID, "", f.auth())
	var page api.RunsPage
	if err := json.Unmarshal([]byte(body), &page); status != 200 || err != nil || len(page.Runs) != 1 ||
		page.Runs[0].ID != run.ID || page.More || page.Runs[0].WorkspaceName == "" {
		t.Fatalf("runs page: %d %v %s", status, err, body)
	}
	status, body, _ = f.do(t, "GET", "/api/runs/page?status=Bogus", "", f.auth())
	if status != 400 || !strings.Contains(body, `"invalid_input"`) {
		t.Fatalf("runs page with an unknown status: %d %s", status, body)
	}
	status, body, _ = f.do(t, "GET", "/api/runs/run_nope/export", "", f.auth())
	if status != 404 || !strings.Contains(body, `"not_found"`) {
		t.Fatalf("export of an unknown run: %d %s", status, body)
	}
}
