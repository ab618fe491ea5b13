package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"agenthub/backend"
)

// Worktree states: Active while the worktree exists for the run to use or
// merge; Kept when its branch stays for the user (the directory may be gone);
// Merged and Discarded once it was brought into the checkout or thrown away
// and cleaned up.
const (
	WorktreeActive    = "active"
	WorktreeKept      = "kept"
	WorktreeMerged    = "merged"
	WorktreeDiscarded = "discarded"
)

// WorktreeRecord is one run's worktree.
type WorktreeRecord struct {
	RunID       string `json:"runId"`
	WorkspaceID string `json:"workspaceId"`
	Branch      string `json:"branch"`
	Base        string `json:"base"`
	State       string `json:"state"`
	Outcome     string `json:"outcome,omitempty"`
	CreatedAt   string `json:"createdAt"`
	ClosedAt    string `json:"closedAt,omitempty"`
}

// AddWorktree records a run's worktree before the run starts.
func (t *Tx) AddWorktree(w WorktreeRecord) error {
	if w.RunID == "" || w.WorkspaceID == "" || w.Branch == "" || w.Base == "" {
		return fmt.Errorf("add worktree %q: run, workspace, branch and base are required", w.RunID)
	}
	if err := t.Exec(`INSERT INTO worktrees (run_id, workspace_id, branch, base, state, created_at)
		VALUES (?, ?, ?, ?, 'active', ?)`, w.RunID, w.WorkspaceID, w.Branch, w.Base, now()); err != nil {
		return fmt.Errorf("add worktree %s: %w", w.RunID, err)
	}
	return nil
}

// SetWorktreeState moves a worktree to state with an outcome note. Merged
// and Discarded are final: a worktree in either is not changed again.
func (t *Tx) SetWorktreeState(runID, state, outcome string) error {
	switch state {
	case WorktreeActive, WorktreeKept, WorktreeMerged, WorktreeDiscarded:
	default:
		return fmt.Errorf("worktree %s: %q is not a state", runID, state)
	}
	closed := any(nil)
	if state == WorktreeMerged || state == WorktreeDiscarded {
		closed = now()
	}
	res, err := t.tx.ExecContext(t.ctx, `UPDATE worktrees SET state = ?, outcome = ?, closed_at = ?
		WHERE run_id = ? AND state IN ('active','kept')`, state, outcome, closed, runID)
	if err != nil {
		return fmt.Errorf("worktree %s: %w", runID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.Join(&backend.NotFound{Kind: "open worktree", ID: runID}, err)
	}
	return nil
}

const worktreeSelect = `SELECT run_id, workspace_id, branch, base, state, outcome, created_at,
	COALESCE(closed_at, '') FROM worktrees`

func scanWorktree(sc interface{ Scan(...any) error }) (WorktreeRecord, error) {
	var w WorktreeRecord
	err := sc.Scan(&w.RunID, &w.WorkspaceID, &w.Branch, &w.Base, &w.State, &w.Outcome, &w.CreatedAt, &w.ClosedAt)
	return w, err
}

// Worktree returns the worktree of a run, or a *backend.NotFound when the
// run has none (it works in the checkout).
func (s *Store) Worktree(ctx context.Context, runID string) (WorktreeRecord, error) {
	w, err := scanWorktree(s.r.QueryRowContext(ctx, worktreeSelect+` WHERE run_id = ?`, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return w, &backend.NotFound{Kind: "worktree", ID: runID}
	}
	if err != nil {
		return w, fmt.Errorf("read worktree %s: %w", runID, err)
	}
	return w, nil
}

// Worktrees lists worktrees, oldest first: of one workspace ("" = all), in
// the given states (none = every state).
func (s *Store) Worktrees(ctx context.Context, workspaceID string, states ...string) ([]WorktreeRecord, error) {
	q, args := worktreeSelect+` WHERE (? = '' OR workspace_id = ?)`, []any{workspaceID, workspaceID}
	if len(states) > 0 {
		q += ` AND state IN (?`
		for i := 1; i < len(states); i++ {
			q += `,?`
		}
		q += `)`
		for _, st := range states {
			args = append(args, st)
		}
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY created_at, run_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	defer rows.Close()
	var out []WorktreeRecord
	for rows.Next() {
		w, err := scanWorktree(rows)
		if err != nil {
			return nil, fmt.Errorf("list worktrees: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}
