package httpapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/app/api"
	"agenthub/backend"
)

func TestWorkspacePolicyRoute(t *testing.T) {
	f := start(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".agenthub"), 0o755); err != nil {
		t.Fatal(err)
	}
	policy := "version = 1\n[[shell]]\nid = \"tests\"\ncommand = \"go test ./...\"\nverdict = \"allow\"\n"
	if err := os.WriteFile(filepath.Join(dir, ".agenthub", "policy.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	_, body, _ := f.do(t, "POST", "/api/workspaces", fmt.Sprintf(`{"path":%q}`, dir), f.auth())
	var ws backend.Workspace
	if err := json.Unmarshal([]byte(body), &ws); err != nil {
		t.Fatal(err, body)
	}

	status, body, _ := f.do(t, "GET", "/api/workspaces/"+ws.ID+"/policy", "", f.auth())
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var v api.PolicyView
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if v.Source != api.PolicyFile || len(v.Rules) != 1 || v.Rules[0].ID != "tests" || len(v.Defaults) == 0 {
		t.Fatalf("view = %+v", v)
	}
	if strings.Contains(body, dir) {
		t.Fatalf("the policy view shows the absolute path: %s", body)
	}

	status, body, _ = f.do(t, "GET", "/api/workspaces/ws_nope/policy", "", f.auth())
	if status != 404 || !strings.Contains(body, `"not_found"`) {
		t.Fatalf("unknown workspace: %d %s", status, body)
	}
	if status, _, _ := f.do(t, "GET", "/api/workspaces/"+ws.ID+"/policy", "", nil); status != 401 {
		t.Fatalf("without a token: %d", status)
	}
}

func TestAuditExportRoute(t *testing.T) {
	f := start(t)
	_, body, _ := f.do(t, "POST", "/api/workspaces", fmt.Sprintf(`{"path":%q}`, t.TempDir()), f.auth())
	if !strings.Contains(body, `"id"`) {
		t.Fatal(body)
	}
	status, body, hdr := f.do(t, "GET", "/api/audit/export", "", f.auth())
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-ndjson") {
		t.Fatalf("content type %q", ct)
	}
	if cd := hdr.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, ".jsonl") {
		t.Fatalf("content disposition %q", cd)
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"workspace.added"`) || !strings.Contains(lines[1], `"verified":true`) {
		t.Fatalf("export = %q", body)
	}
	if status, _, _ := f.do(t, "GET", "/api/audit/export", "", nil); status != 401 {
		t.Fatalf("without a token: %d", status)
	}
}
