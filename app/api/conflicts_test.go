package api

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/store"
	"agenthub/workspace"
)

// conflictEnv is a data directory after a real crash window: a run applied
// old.txt's change ("old" → "new") through the checkpoint machinery, the
// process died before recording the outcome, someone wrote "edited" over
// the file, and the next start (recovery) recorded a workspace conflict.
type conflictEnv struct {
	core   *Core
	root   string
	runID  string
	intent string
}

func newConflictEnv(t *testing.T) *conflictEnv {
	t.Helper()
	home := t.TempDir()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	core, err := Open(t.Context(), Config{Home: home, Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspacesAPI(core).Add(root)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := workspace.NewCheckpointStore(core.checkpointDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := workspace.Apply(fsys, []workspace.Change{{Path: "f.txt",
		PreimageSHA256: workspace.Hash([]byte("old")), NewContent: []byte("new")}}, ck)
	fsys.Close()
	if err != nil {
		t.Fatal(err)
	}
	runID := backend.NewID(backend.PrefixRun)
	_, err = core.store.Do(t.Context(), func(tx *store.Tx) error {
		if err := tx.CreateSession("ses_conflict", ws.ID, "s"); err != nil {
			return err
		}
		if _, err := tx.CreateRun(store.RunRecord{ID: runID, SessionID: "ses_conflict", WorkspaceID: ws.ID,
			Profile: "p", AgentID: "p", Runtime: "native", Task: "t"}, nil); err != nil {
			return err
		}
		for _, to := range []backend.RunState{backend.RunPlanned, backend.RunAccepted, backend.RunPreparing,
			backend.RunRunning, backend.RunApplying} {
			if _, err := tx.Transition(runID, to, "", nil); err != nil {
				return err
			}
		}
		return tx.OpenIntent(store.Intent{ID: res.CheckpointID, RunID: runID, WorkspaceID: ws.ID, Op: "write",
			Files: []store.IntentFile{{Path: "f.txt", Before: workspace.Hash([]byte("old")),
				After: workspace.Hash([]byte("new"))}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := core.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := Open(t.Context(), Config{Home: home, Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Close() })
	e := &conflictEnv{core: again, root: root, runID: runID, intent: res.CheckpointID}
	if ins, err := again.store.Intents(t.Context(), runID); err != nil || len(ins) != 1 ||
		ins[0].State != store.IntentConflict {
		t.Fatalf("after recovery: intents %+v %v, want one conflict", ins, err)
	}
	return e
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
	evs, err := e.core.store.Events(t.Context(), e.runID, 0, 0)
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
			res, err := NewConflictsAPI(e.core).Resolve(e.runID, e.intent, c.choice)
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
			_, err = NewConflictsAPI(e.core).Resolve(e.runID, e.intent, backend.ConflictRestore)
			wantCode(t, err, backend.CodeConflict)
			if got := e.file(t); got != c.wantFile {
				t.Errorf("a refused second resolve changed f.txt to %q", got)
			}
			if n := len(e.resolutions(t)); n != 1 {
				t.Errorf("%d resolution events after a refused second resolve", n)
			}
			entries, err := e.core.store.RunAudit(t.Context(), e.runID)
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
			if broken, _, err := e.core.store.VerifyAudit(t.Context()); err != nil || broken != 0 {
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
	_, err := NewConflictsAPI(e.core).Resolve(e.runID, e.intent, backend.ConflictRestore)
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
	if _, err := NewConflictsAPI(e.core).Resolve(e.runID, e.intent, backend.ConflictKeep); err != nil {
		t.Fatalf("keep after a refused restore: %v", err)
	}
	wantCodeIs := func(choice string, code backend.FailureCode) {
		_, err := NewConflictsAPI(e.core).Resolve(e.runID, e.intent, choice)
		var be *backend.Error
		if !errors.As(err, &be) || be.Code != code {
			t.Errorf("Resolve(%q) = %v, want %s", choice, err, code)
		}
	}
	wantCodeIs("sideways", backend.CodeInvalidInput)
	_, err = NewConflictsAPI(e.core).Resolve(e.runID, "ck_none", backend.ConflictKeep)
	wantCode(t, err, backend.CodeNotFound)
}
