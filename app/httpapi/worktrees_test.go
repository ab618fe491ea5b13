package httpapi

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
)

// TestWorktreeRoutes: a workspace whose default isolation is worktree
// starts its runs in a worktree; the run's worktree, merge plan, push plan
// and discard are served, and a discard of unsaved work without its token
// is refused with worktree_unsaved (409).
func TestWorktreeRoutes(t *testing.T) {
	home := t.TempDir()
	core, err := api.Open(t.Context(), api.Config{Home: home, Version: "test", Surface: backend.SurfaceBrowser})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	f := serve(t, New(core, fstest.MapFS{"index.html": {Data: []byte("<title>AgentHub</title>")}}, core, NewToken()))
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	body, _ := json.Marshal(map[string]string{"path": dir})
	code, out, _ := f.do(t, "POST", "/api/workspaces", string(body), f.auth())
	var ws backend.Workspace
	if code != 200 || json.Unmarshal([]byte(out), &ws) != nil {
		t.Fatalf("add workspace: %d %s", code, out)
	}
	if code, out, _ := f.do(t, "PUT", "/api/workspaces/"+ws.ID+"/isolation", `{"isolation":"sideways"}`, f.auth()); code != 400 {
		t.Fatalf("a bogus isolation: %d %s", code, out)
	}
	if code, out, _ := f.do(t, "PUT", "/api/workspaces/"+ws.ID+"/isolation", `{"isolation":"worktree"}`, f.auth()); code != 200 {
		t.Fatalf("set isolation: %d %s", code, out)
	}
	code, out, _ = f.do(t, "POST", "/api/runs", `{"workspaceId":"`+ws.ID+`","task":"tour"}`, f.auth())
	var run backend.RunSummary
	if code != 200 || json.Unmarshal([]byte(out), &run) != nil {
		t.Fatalf("start: %d %s", code, out)
	}
	code, out, _ = f.do(t, "GET", "/api/runs/"+run.ID+"/worktree", "", f.auth())
	if code != 200 || !strings.Contains(out, `"branch":"agenthub/`+run.ID+`"`) {
		t.Fatalf("worktree: %d %s", code, out)
	}
	// Merging a run that is still going is refused.
	if code, out, _ := f.do(t, "POST", "/api/runs/"+run.ID+"/worktree/keep", "", f.auth()); code != 409 && !strings.Contains(out, "already") {
		t.Fatalf("keep of a live run: %d %s", code, out)
	}
	f.do(t, "POST", "/api/runs/"+run.ID+"/cancel", "", f.auth())
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, out, _ := f.do(t, "GET", "/api/runs/"+run.ID, "", f.auth())
		if json.Unmarshal([]byte(out), &run) == nil && run.State.Terminal() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run never ended: %s", out)
		}
	}
	if code, out, _ := f.do(t, "GET", "/api/runs/"+run.ID+"/worktree/merge", "", f.auth()); code != 200 || !strings.Contains(out, `"token"`) {
		t.Fatalf("merge plan: %d %s", code, out)
	}
	if code, out, _ := f.do(t, "GET", "/api/runs/"+run.ID+"/worktree/push?remote=nosuch", "", f.auth()); code != 400 {
		t.Fatalf("push plan to an unknown remote: %d %s", code, out)
	}
	// Leave uncommitted work in the worktree: discard now needs its token.
	code, out, _ = f.do(t, "GET", "/api/runs/"+run.ID+"/worktree", "", f.auth())
	var v struct {
		Token string `json:"token"`
	}
	if code != 200 || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("worktree: %d %s", code, out)
	}
	wtDir := filepath.Join(home, "worktrees", run.ID)
	if err := os.WriteFile(filepath.Join(wtDir, "unsaved.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = f.do(t, "POST", "/api/runs/"+run.ID+"/worktree/discard", `{"confirm":"`+v.Token+`"}`, f.auth())
	if code != 409 || !strings.Contains(out, string(backend.CodeWorktreeUnsaved)) || !strings.Contains(out, "unsaved.txt") {
		t.Fatalf("discard with the token of an older listing: %d %s", code, out)
	}
	var refusal struct {
		Next string `json:"next"`
	}
	_ = json.Unmarshal([]byte(out), &refusal)
	_, token, _ := strings.Cut(refusal.Next, "token ")
	token = strings.TrimSuffix(token, ".")
	code, out, _ = f.do(t, "POST", "/api/runs/"+run.ID+"/worktree/discard", `{"confirm":"`+token+`"}`, f.auth())
	if code != 200 || !strings.Contains(out, `"state":"discarded"`) {
		t.Fatalf("confirmed discard: %d %s", code, out)
	}
	if _, err := os.Stat(wtDir); !os.IsNotExist(err) {
		t.Fatalf("the discarded worktree is still there: %v", err)
	}
}
