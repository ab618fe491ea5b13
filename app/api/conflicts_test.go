package api_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/app/api"
	"agenthub/app/api/conflicttest"
	"agenthub/backend"
	"agenthub/workspace"
)

// conflictEnv is a data directory after a real crash window
// (conflicttest.Make), opened again.
type conflictEnv struct {
	core   *api.Core
	root   string
	runID  string
	intent string
}

func newConflictEnv(t *testing.T) *conflictEnv {
	t.Helper()
	home := t.TempDir()
	c, err := conflicttest.Make(t.Context(), home, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	core, err := api.Open(t.Context(), api.Config{Home: home, Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	return &conflictEnv{core: core, root: c.Root, runID: c.RunID, intent: c.IntentID}
}

func (e *conflictEnv) file(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, "f.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func (e *conflictEnv) resolutions(t *testing.T) []backend.WorkspaceConflictResolved {
	t.Helper()
	evs, err := e.core.Store().Events(t.Context(), e.runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []backend.WorkspaceConflictResolved
	for _, ev := range evs {
		if ev.Type == backend.EvWorkspaceConflictResolved {
			var r backend.WorkspaceConflictResolved
			if err := json.Unmarshal(ev.Payload, &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
	}
	return out
}

func wantCode(t *testing.T, err error, code backend.FailureCode) {
	t.Helper()
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != code || be.Next == "" {
		t.Fatalf("err = %v, want %s with a next step", err, code)
	}
}

// TestResolveConflict: a recovered conflict is settled once, either way;
// restore puts the before-bytes back, keep leaves the disk; each leaves an
// event and an audit entry, and the chain verifies.
func TestResolveConflict(t *testing.T) {
	cases := []struct {
		choice   string
		wantFile string
	}{
		{backend.ConflictRestore, "old"},
		{backend.ConflictKeep, "edited"},
	}
	for _, c := range cases {
		t.Run(c.choice, func(t *testing.T) {
			e := newConflictEnv(t)
			res, err := api.NewConflictsAPI(e.core).Resolve(e.runID, e.intent, c.choice)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.file(t); got != c.wantFile {
				t.Errorf("f.txt = %q, want %q", got, c.wantFile)
			}
			if res.Choice != c.choice || res.IntentID != e.intent || len(res.Files) != 1 ||
				res.Files[0].Found != workspace.Hash([]byte(c.wantFile)) {
				t.Errorf("result %+v", res)
			}
			if rs := e.resolutions(t); len(rs) != 1 || rs[0].Choice != c.choice || rs[0].Surface != backend.SurfaceCLI {
				t.Errorf("resolution events %+v, want one %s", rs, c.choice)
			}
			_, err = api.NewConflictsAPI(e.core).Resolve(e.runID, e.intent, backend.ConflictRestore)
			wantCode(t, err, backend.CodeConflict)
			if got := e.file(t); got != c.wantFile {
				t.Errorf("a refused second resolve changed f.txt to %q", got)
			}
			if n := len(e.resolutions(t)); n != 1 {
				t.Errorf("%d resolution events after a refused second resolve", n)
			}
			entries, err := e.core.Store().RunAudit(t.Context(), e.runID)
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, a := range entries {
				if a.Kind == "patch.conflict_resolved" && a.Data["choice"] == c.choice {
					found++
				}
			}
			if found != 1 {
				t.Errorf("%d patch.conflict_resolved audit entries, want 1", found)
			}
			if broken, _, err := e.core.Store().VerifyAudit(t.Context()); err != nil || broken != 0 {
				t.Errorf("audit verify: broken at %d, %v", broken, err)
			}
		})
	}
}

// TestResolveConflictRefusesChangedFile: restore fails closed when a file
// no longer holds what recovery found: nothing written, the conflict stays
// open (keep still settles it).
func TestResolveConflictRefusesChangedFile(t *testing.T) {
	e := newConflictEnv(t)
	if err := os.WriteFile(filepath.Join(e.root, "f.txt"), []byte("edited again"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := api.NewConflictsAPI(e.core).Resolve(e.runID, e.intent, backend.ConflictRestore)
	wantCode(t, err, backend.CodeConflict)
	var be *backend.Error
	if errors.As(err, &be); be == nil || !strings.Contains(be.Message, "f.txt") {
		t.Errorf("the refusal does not name the file: %v", err)
	}
	if got := e.file(t); got != "edited again" {
		t.Errorf("a refused restore changed f.txt to %q", got)
	}
	if n := len(e.resolutions(t)); n != 0 {
		t.Errorf("%d resolution events after a refused restore", n)
	}
	if _, err := api.NewConflictsAPI(e.core).Resolve(e.runID, e.intent, backend.ConflictKeep); err != nil {
		t.Fatalf("keep after a refused restore: %v", err)
	}
	wantCodeIs := func(choice string, code backend.FailureCode) {
		_, err := api.NewConflictsAPI(e.core).Resolve(e.runID, e.intent, choice)
		var be *backend.Error
		if !errors.As(err, &be) || be.Code != code {
			t.Errorf("Resolve(%q) = %v, want %s", choice, err, code)
		}
	}
	wantCodeIs("sideways", backend.CodeInvalidInput)
	_, err = api.NewConflictsAPI(e.core).Resolve(e.runID, "ck_none", backend.ConflictKeep)
	wantCode(t, err, backend.CodeNotFound)
}
