package engine

import (
	"errors"

	"agenthub/backend"
)

// Isolation: a run may work in its own git worktree instead of the
// workspace's checkout. The engine only asks Config.RunRoots for the root
// of the run (the app keeps which runs are isolated and where, and follows a
// sub-agent or a resumed run to the run it continues); every root a run's
// tools, runtimes and intent recovery see goes through here.

// orNewRunID is the id a caller chose, or a new one.
func orNewRunID(id string) string {
	if id != "" {
		return id
	}
	return backend.NewID(backend.PrefixRun)
}

// runRoot is the absolute root this run works in.
func (rc *runCtl) runRoot() (string, error) {
	return rc.e.rootFor(rc.rec.ID, rc.rec.WorkspaceID)
}

// rootFor resolves the root of a run ("" = an effect outside any run: the
// checkout).
func (e *Engine) rootFor(runID, workspaceID string) (string, error) {
	if runID != "" && e.cfg.RunRoots != nil {
		return e.cfg.RunRoots(runID, workspaceID)
	}
	if e.cfg.Roots == nil {
		return "", errors.New("no workspace roots configured")
	}
	return e.cfg.Roots(workspaceID)
}
