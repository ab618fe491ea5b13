package api

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
)

// liveWait bounds how long a test waits for the watcher: the machine is
// shared and loaded, the watcher polls every second.
const liveWait = 60 * time.Second

// changes subscribes to the every-run stream and returns what each
// system.changed names, in order.
func changes(t *testing.T, core *Core) <-chan string {
	t.Helper()
	ch, err := core.Subscribe(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 64)
	go func() {
		for ev := range ch {
			if ev.Type != EvSystemChanged {
				continue
			}
			var p SystemChanged
			if json.Unmarshal(ev.Payload, &p) == nil {
				select {
				case out <- p.What:
				default:
				}
			}
		}
	}()
	return out
}

// expectChange waits for system.changed naming what.
func expectChange(t *testing.T, ch <-chan string, what string) {
	t.Helper()
	deadline := time.After(liveWait)
	for {
		select {
		case w := <-ch:
			if w == what {
				return
			}
		case <-deadline:
			t.Fatalf("no system.changed %q within %s", what, liveWait)
		}
	}
}

func ownerCore(t *testing.T) *Core {
	t.Helper()
	core, err := Open(t.Context(), Config{Home: t.TempDir(), Version: "test", Surface: backend.SurfaceBrowser})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	if !core.IsOwner() {
		t.Fatal("the test core should own its data directory")
	}
	return core
}

// TestProfileEditsAreLive: a profile file added to the data directory is
// usable without a restart and announced as system.changed "profiles"; a
// broken one is listed as a problem (file name and reason, no absolute
// path), not only logged; removing it clears the problem.
func TestProfileEditsAreLive(t *testing.T) {
	core := ownerCore(t)
	ch := changes(t, core)
	runs := NewRunsAPI(core)
	dir := filepath.Join(core.Config().Home, ProfilesDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.playbook"), []byte(sleeperPlaybook), 0o600); err != nil {
		t.Fatal(err)
	}
	good := "name = \"mine\"\nruntime = \"script\"\nplaybook = \"mine.playbook\"\n"
	if err := os.WriteFile(filepath.Join(dir, "mine.toml"), []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	expectChange(t, ch, "profiles")
	list, err := runs.Profiles()
	if err != nil {
		t.Fatal(err)
	}
	if !hasProfile(list, "mine") {
		t.Fatalf("the new profile is not listed: %+v", list)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.toml"), []byte("name = \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	expectChange(t, ch, "profiles")
	problems, err := runs.ProfileProblems()
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0].File != "broken.toml" || problems[0].Problem == "" {
		t.Fatalf("problems = %+v, want broken.toml with a reason", problems)
	}
	if strings.Contains(problems[0].Problem, core.Config().Home) {
		t.Fatalf("the problem shows an absolute path: %q", problems[0].Problem)
	}
	if err := os.Remove(filepath.Join(dir, "broken.toml")); err != nil {
		t.Fatal(err)
	}
	expectChange(t, ch, "profiles")
	if problems, _ := runs.ProfileProblems(); len(problems) != 0 {
		t.Fatalf("problems after the fix: %+v", problems)
	}
	if list, _ := runs.Profiles(); !hasProfile(list, "mine") {
		t.Fatalf("the good profile went away: %+v", list)
	}
}

func hasProfile(list []ProfileInfo, name string) bool {
	for _, p := range list {
		if p.Name == name {
			return true
		}
	}
	return false
}

// TestPolicyEditsAreAnnounced: a policy file written outside AgentHub, in
// the repository or in the data directory, is announced as system.changed
// "policy", so the settings view never shows a stale "No policy file".
func TestPolicyEditsAreAnnounced(t *testing.T) {
	core := ownerCore(t)
	ch := changes(t, core)
	root := t.TempDir()
	ws, err := NewWorkspacesAPI(core).Add(root)
	if err != nil {
		t.Fatal(err)
	}
	expectChange(t, ch, "workspaces")
	if err := os.MkdirAll(filepath.Join(root, ".agenthub"), 0o700); err != nil {
		t.Fatal(err)
	}
	rules := "version = 1\n"
	if err := os.WriteFile(filepath.Join(root, ".agenthub", "policy.toml"), []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	expectChange(t, ch, "policy")
	data := filepath.Join(core.Config().Home, "policy")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, ws.ID+".toml"), []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	expectChange(t, ch, "policy")
}

// TestMissingWorkspace: a workspace whose folder was deleted is listed as
// missing (and announced), and neither a new run nor a resumption may start
// in it: the refusal has the stable code workspace_missing and a next step.
// When the folder comes back, it is no longer missing.
func TestMissingWorkspace(t *testing.T) {
	core := ownerCore(t)
	ch := changes(t, core)
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	wsAPI := NewWorkspacesAPI(core)
	ws, err := wsAPI.Add(root)
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := wsAPI.List(); len(list) != 1 || list[0].Missing {
		t.Fatalf("a present folder listed as %+v", list)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	expectChange(t, ch, "workspaces")
	list, err := wsAPI.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || !list[0].Missing {
		t.Fatalf("a deleted folder listed as %+v, want missing", list)
	}
	_, err = NewRunsAPI(core).Start(StartRun{WorkspaceID: ws.ID, Task: "look around"})
	var e *backend.Error
	if !errors.As(err, &e) || e.Code != backend.CodeWorkspaceMissing {
		t.Fatalf("start in a missing workspace: %v, want %s", err, backend.CodeWorkspaceMissing)
	}
	if e.Next == "" || strings.Contains(e.Message, root) {
		t.Fatalf("the refusal needs a next step and no absolute path: %+v", e)
	}
	if runs, _ := NewRunsAPI(core).List(ws.ID); len(runs) != 0 {
		t.Fatalf("a refused start left runs: %+v", runs)
	}
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	expectChange(t, ch, "workspaces")
	if list, _ := wsAPI.List(); list[0].Missing {
		t.Fatal("the restored folder is still missing")
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveWait)
	defer cancel()
	if err := core.refuseMissing(ctx, ws.ID); err != nil {
		t.Fatalf("the restored folder is refused: %v", err)
	}
}
