// Package conflicttest leaves a data directory with a real workspace
// conflict, for the tests of the surfaces that resolve it (app/api,
// app/cli): a run applied f.txt's change ("old" → "new") through the
// checkpoint machinery, its process died before recording the outcome,
// someone wrote "edited" over the file, and the next start's recovery
// recorded run.workspace.conflict. Test support only: no product code
// imports it.
package conflicttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/store"
	"agenthub/workspace"
)

// Conflict is what Make left: the workspace root, the run and the
// conflict's intent id. The file is f.txt.
type Conflict struct {
	Root, RunID, IntentID string
}

// Make records the conflict in home's data directory, with root as the
// workspace (an existing, empty directory; Conflict.Root is its resolved
// path); no core is left open.
func Make(ctx context.Context, home, root string) (Conflict, error) {
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		return Conflict{}, err
	}
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("old"), 0o644); err != nil {
		return Conflict{}, err
	}
	core, err := api.Open(ctx, api.Config{Home: home, Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		return Conflict{}, err
	}
	c, err := crash(ctx, core, root)
	if cerr := core.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Conflict{}, err
	}
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("edited"), 0o644); err != nil {
		return Conflict{}, err
	}
	again, err := api.Open(ctx, api.Config{Home: home, Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		return Conflict{}, err
	}
	defer again.Close()
	ins, err := again.Store().Intents(ctx, c.RunID)
	if err != nil {
		return Conflict{}, err
	}
	if len(ins) != 1 || ins[0].State != store.IntentConflict {
		return Conflict{}, fmt.Errorf("after recovery: intents %+v, want one conflict", ins)
	}
	return c, nil
}

// crash applies the change and leaves its run in Applying with the intent
// open, as a process killed before the outcome's commit does.
func crash(ctx context.Context, core *api.Core, root string) (Conflict, error) {
	ws, err := api.NewWorkspacesAPI(core).Add(root)
	if err != nil {
		return Conflict{}, err
	}
	fsys, err := workspace.Open(root)
	if err != nil {
		return Conflict{}, err
	}
	defer fsys.Close()
	ck, err := workspace.NewCheckpointStore(filepath.Join(core.Config().Home, "checkpoints"), 0)
	if err != nil {
		return Conflict{}, err
	}
	res, err := workspace.Apply(fsys, []workspace.Change{{Path: "f.txt",
		PreimageSHA256: workspace.Hash([]byte("old")), NewContent: []byte("new")}}, ck)
	if err != nil {
		return Conflict{}, err
	}
	runID := backend.NewID(backend.PrefixRun)
	_, err = core.Store().Do(ctx, func(tx *store.Tx) error {
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
		return Conflict{}, err
	}
	return Conflict{Root: root, RunID: runID, IntentID: res.CheckpointID}, nil
}
