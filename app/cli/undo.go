package cli

import (
	"context"
	"fmt"

	"agenthub/app/api"
	"agenthub/backend"
)

func runUndo(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "undo")
	wsPath := fl.String("workspace", "", "the workspace the apply changed (required)")
	asJSON := fl.Bool("json", false, "print JSON")
	words, err := positional(fl, args)
	if err != nil {
		return err
	}
	if len(words) != 1 || *wsPath == "" {
		return usagef("undo --workspace W CHECKPOINT (checkpoint ids are in run.patch.applied events)")
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
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
