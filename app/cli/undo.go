package cli

import (
	"context"
	"fmt"

	"agenthub/app/api"
	"agenthub/backend"
)

func runUndo(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "undo")
	wsPath := fl.String("workspace", "", "the workspace the apply changed")
	runID := fl.String("run", "", "undo a run's applied changes: CHECKPOINT names one, none undoes them all")
	asJSON := fl.Bool("json", false, "print JSON")
	words, err := positional(fl, args)
	if err != nil {
		return err
	}
	usage := "undo --workspace W CHECKPOINT | undo --run RUN [CHECKPOINT] (checkpoint ids are in run.patch.applied events)"
	if (*runID == "") == (*wsPath == "") || len(words) > 1 || (*wsPath != "" && len(words) != 1) {
		return usagef("%s", usage)
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	if *runID != "" {
		return undoRun(e, core, *runID, words, *asJSON)
	}
	ws, err := findWorkspace(core, *wsPath)
	if err != nil {
		return err
	}
	res, err := api.NewWorkspacesAPI(core).Undo(ws.ID, words[0])
	if err != nil {
		return err
	}
	text := fmt.Sprintf("Restored %d file(s) from %s; undo it with: agenthub undo --workspace %s %s",
		len(res.Files), words[0], *wsPath, res.CheckpointID)
	return printOne(e, *asJSON, res, text)
}

// undoRun reverts one applied change of a run, or all of them, in the run's
// own root (its worktree for a worktree run), as the Changes view does.
func undoRun(e *Env, core *api.Core, runID string, words []string, asJSON bool) error {
	ck := ""
	if len(words) == 1 {
		ck = words[0]
	}
	res, err := api.NewChangesAPI(core).Revert(runID, ck)
	if err != nil {
		return err
	}
	files := 0
	for _, r := range res.Reverted {
		files += len(r.Files)
	}
	text := fmt.Sprintf("Reverted %d change(s) of run %s, %d file(s) restored", len(res.Reverted), runID, files)
	return printOne(e, asJSON, res, text)
}
