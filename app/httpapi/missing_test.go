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

// TestMissingWorkspaceOverHTTP: over HTTP, a workspace whose folder is gone
// is listed with missing: true and a run start in it is refused with 409
// workspace_missing and a next step; the profile problems route answers a
// list (empty here), never null.
func TestMissingWorkspaceOverHTTP(t *testing.T) {
	f := start(t)
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	status, body, _ := f.do(t, "POST", "/api/workspaces", fmt.Sprintf(`{"path":%q}`, dir), f.auth())
	if status != 200 {
		t.Fatalf("add: %d %s", status, body)
	}
	var ws backend.Workspace
	if err := json.Unmarshal([]byte(body), &ws); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, body, _ := f.do(t, "GET", "/api/workspaces", "", f.auth()); !strings.Contains(body, `"missing":true`) {
		t.Errorf("the list does not mark the workspace missing: %s", body)
	}
	status, body, _ = f.do(t, "POST", "/api/runs", fmt.Sprintf(`{"workspaceId":%q,"task":"look around"}`, ws.ID), f.auth())
	if status != 409 || !strings.Contains(body, `"code":"workspace_missing"`) || !strings.Contains(body, `"next":"Restore the folder`) {
		t.Errorf("start in a missing workspace: %d %s", status, body)
	}
	if strings.Contains(body, dir) {
		t.Errorf("the refusal shows the absolute path: %s", body)
	}
	if status, body, _ := f.do(t, "GET", "/api/profiles/problems", "", f.auth()); status != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("profile problems: %d %s, want 200 []", status, body)
	}
}
