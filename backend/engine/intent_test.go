package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/store"
	"agenthub/workspace"
)

// TestRecoverReconcilesIntents (issue 15.1): a process died between an
// intent's commit and the commit of its outcome. At the next start the disk
// decides: after-image → applied, with the patch.applied event and audit
// entry the dead process never committed; before-image → not applied; a
// third content → a run.workspace.conflict with its stable code, nothing
// touched. Staging files go in every case, and the interrupted call's result
// says what happened to its files.
func TestRecoverReconcilesIntents(t *testing.T) {
	h := func(s string) string { return workspace.Hash([]byte(s)) }
	cases := []struct {
		name    string
		disk    string
		state   string
		event   backend.EventType
		audit   string
		callSay string
	}{
		{"after image", "new", store.IntentApplied, backend.EvPatchApplied, "patch.applied", "was applied"},
		{"before image", "old", store.IntentNotApplied, "", "patch.not_applied", "nothing was written"},
		{"third content", "edited", store.IntentConflict, backend.EvWorkspaceConflict, "patch.conflict",
			backend.CodeWorkspaceConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, db := newWorkspace(t)
			if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte(c.disk), 0o644); err != nil {
				t.Fatal(err)
			}
			stage := ".agenthub-0123456789abcdef.tmp"
			if err := os.WriteFile(filepath.Join(root, stage), []byte("new"), 0o600); err != nil {
				t.Fatal(err)
			}
			g := newGated(t, root, db)
			runID := deadCall(t, g, "write_file", store.Intent{ID: "ck_0123456789abcdef01234567",
				WorkspaceID: "ws_1", Op: "write", Files: []store.IntentFile{{Path: "f.txt", Before: h("old"),
					After: h("new")}}, Staging: []string{stage}})
			if err := g.e.Recover(t.Context()); err != nil {
				t.Fatal(err)
			}
			defer g.close(t)
			ins, err := g.st.Intents(t.Context(), runID)
			if err != nil || len(ins) != 1 || ins[0].State != c.state {
				t.Fatalf("intents = %+v, %v; want one %s", ins, err, c.state)
			}
			if data, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(data) != c.disk {
				t.Errorf("recovery changed the file to %q", data)
			}
			if _, err := os.Stat(filepath.Join(root, stage)); !os.IsNotExist(err) {
				t.Errorf("the staging file is still there: %v", err)
			}
			var types []backend.EventType
			evs, _ := g.st.Events(t.Context(), runID, 0, 0)
			for _, ev := range evs {
				types = append(types, ev.Type)
				if ev.Type == backend.EvWorkspaceConflict {
					var p backend.WorkspaceConflict
					if json.Unmarshal(ev.Payload, &p) != nil || p.Code != backend.CodeWorkspaceConflict ||
						len(p.Files) != 1 || p.Files[0].Found != h("edited") || p.Next == "" {
						t.Errorf("conflict payload %s", ev.Payload)
					}
				}
			}
			if c.event != "" && !slices.Contains(types, c.event) {
				t.Errorf("events %v, want %s", types, c.event)
			}
			if kinds := g.auditKinds(t); !slices.Contains(kinds, c.audit+"/engine") {
				t.Errorf("audit %v, want %s", kinds, c.audit)
			}
			r, _ := g.st.Run(t.Context(), runID)
			if r.State != backend.RunFailed || r.FailureCode != backend.FailRunInterrupted {
				t.Errorf("run %s %s, want Failed(run_interrupted)", r.State, r.FailureCode)
			}
			if _, out := g.call(t, runID, "c1"); !strings.Contains(out, c.callSay) {
				t.Errorf("the call's result %q does not say %q", out, c.callSay)
			}
		})
	}
}

// deadCall records what a process that died during a call leaves: a run
// in Applying, its call c1 (tool name) running, and the call's open intent
// in. It returns the run's id.
func deadCall(t *testing.T, g *gated, name string, in store.Intent) string {
	t.Helper()
	runID := backend.NewID(backend.PrefixRun)
	in.RunID, in.ToolCallID = runID, "c1"
	_, err := g.st.Do(t.Context(), func(tx *store.Tx) error {
		if err := tx.CreateSession("ses_1", "ws_1", "s"); err != nil {
			return err
		}
		if _, err := tx.CreateRun(store.RunRecord{ID: runID, SessionID: "ses_1", WorkspaceID: "ws_1",
			Profile: "p", AgentID: "p", Runtime: "native", Task: "t"}, nil); err != nil {
			return err
		}
		for _, to := range []backend.RunState{backend.RunPlanned, backend.RunAccepted, backend.RunPreparing,
			backend.RunRunning, backend.RunApplying} {
			if _, err := tx.Transition(runID, to, "", nil); err != nil {
				return err
			}
		}
		if err := tx.PutCall(store.Call{ID: "c1", RunID: runID, Step: 1, Name: name,
			Status: backend.CallRunning, Arguments: json.RawMessage(`{}`)}); err != nil {
			return err
		}
		return tx.OpenIntent(in)
	})
	if err != nil {
		t.Fatal(err)
	}
	return runID
}

// TestConflictOfAnEndedRunIsShown: a run that ended (here cancelled) while
// its write's intent stayed open, then a crash: recovery finds a third
// content, and the run, although ended, shows the conflict as its last
// event (an annotation after the end), so its timeline and `runs show`
// list it for the user to resolve; the run stays as it ended.
func TestConflictOfAnEndedRunIsShown(t *testing.T) {
	h := func(s string) string { return workspace.Hash([]byte(s)) }
	root, db := newWorkspace(t)
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newGated(t, root, db)
	runID := deadCall(t, g, "write_file", store.Intent{ID: "ck_0123456789abcdef01234568", WorkspaceID: "ws_1",
		Op: "write", Files: []store.IntentFile{{Path: "f.txt", Before: h("old"), After: h("new")}}})
	if _, err := g.st.Do(t.Context(), func(tx *store.Tx) error {
		_, err := tx.Transition(runID, backend.RunCancelled, "", &store.End{DoneReason: backend.DoneUserCancelled})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := g.e.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer g.close(t)
	evs, err := g.st.Events(t.Context(), runID, 0, 0)
	if err != nil || len(evs) == 0 {
		t.Fatalf("events: %v %v", evs, err)
	}
	last := evs[len(evs)-1]
	var p backend.WorkspaceConflict
	if last.Type != backend.EvWorkspaceConflict || json.Unmarshal(last.Payload, &p) != nil ||
		p.IntentID != "ck_0123456789abcdef01234568" || len(p.Files) != 1 || p.Files[0].Found != h("edited") {
		t.Fatalf("the ended run's last event is %s %s, want its workspace conflict", last.Type, last.Payload)
	}
	if r, _ := g.st.Run(t.Context(), runID); r.State != backend.RunCancelled {
		t.Errorf("run %s after recovery, want still Cancelled", r.State)
	}
}
