package api

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"agenthub/backend"
)

// dirMissing reports whether a workspace's directory is gone: it does not
// exist or is no longer a directory. Any other error (no permission, an
// I/O error) is not "missing": the run's own tools report it.
func dirMissing(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return !fi.IsDir()
}

// refuseMissing fails with workspace_missing when the workspace's directory
// is gone: a run started there would see every tool fail and still offer to
// allow commands "in this workspace" (issue 21). An unknown id is left to
// the engine, which names it.
func (c *Core) refuseMissing(ctx context.Context, workspaceID string) error {
	ws, err := c.store.Workspace(ctx, workspaceID)
	if err != nil {
		return nil //nolint:nilerr // the engine's start reports an unknown workspace with its own code
	}
	if !dirMissing(ws.Path) {
		return nil
	}
	return &backend.Error{Code: backend.CodeWorkspaceMissing,
		Message: "the folder of the workspace " + ws.Name + " is gone from disk (deleted, moved or unmounted)",
		Next:    backend.Recovery[backend.CodeWorkspaceMissing]}
}
