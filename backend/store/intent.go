package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Intent states. An intent is Open from the commit that precedes its effect
// until the commit that records the outcome; recovery closes the ones a dead
// process left open as Applied, NotApplied or Conflict (the disk matches
// neither side), and a Conflict stays listed until the user resolves it.
const (
	IntentOpen       = "open"
	IntentApplied    = "applied"
	IntentNotApplied = "not_applied"
	IntentConflict   = "conflict"
	IntentResolved   = "resolved"
)

// IntentFile is one file of an effect: its content hash before and after
// ("absent" for no file).
type IntentFile struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Intent is one effect on a workspace, recorded before it happens.
type Intent struct {
	ID          string       `json:"id"` // the checkpoint id of the effect
	RunID       string       `json:"runId,omitempty"`
	ToolCallID  string       `json:"toolCallId,omitempty"`
	WorkspaceID string       `json:"workspaceId"`
	Op          string       `json:"op"`               // write | undo
	Undoes      string       `json:"undoes,omitempty"` // an undo's checkpoint
	Files       []IntentFile `json:"files"`
	Staging     []string     `json:"staging"` // workspace-relative
	State       string       `json:"state"`
	Outcome     string       `json:"outcome,omitempty"`
	CreatedAt   string       `json:"createdAt"`
	ClosedAt    string       `json:"closedAt,omitempty"`
}

// OpenIntent records an effect about to happen. It must commit before the
// effect's first write.
func (t *Tx) OpenIntent(in Intent) error {
	if in.ID == "" || in.WorkspaceID == "" || in.Op == "" || len(in.Files) == 0 {
		return fmt.Errorf("open intent %q: id, workspace, op and files are required", in.ID)
	}
	files, err := json.Marshal(in.Files)
	if err != nil {
		return fmt.Errorf("open intent %s: %w", in.ID, err)
	}
	staging := in.Staging
	if staging == nil {
		staging = []string{}
	}
	st, err := json.Marshal(staging)
	if err != nil {
		return fmt.Errorf("open intent %s: %w", in.ID, err)
	}
	return t.Exec(`INSERT INTO intents (id, run_id, tool_call_id, workspace_id, op, undoes, files, staging, state,
		created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)`, in.ID, in.RunID, in.ToolCallID, in.WorkspaceID, in.Op,
		in.Undoes, string(files), string(st), now())
}

// CloseIntent records an intent's outcome. Closing an intent that is not
// open (or not there) changes nothing and reports false, so the two paths
// that may close one (the effect's own commit and recovery) never both do.
func (t *Tx) CloseIntent(id, state, outcome string) (bool, error) {
	switch state {
	case IntentApplied, IntentNotApplied, IntentConflict:
	default:
		return false, fmt.Errorf("close intent %s: %q is not an outcome", id, state)
	}
	res, err := t.tx.ExecContext(t.ctx, `UPDATE intents SET state = ?, outcome = ?, closed_at = ?
		WHERE id = ? AND state = 'open'`, state, outcome, now(), id)
	if err != nil {
		return false, fmt.Errorf("close intent %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("close intent %s: %w", id, err)
	}
	return n == 1, nil
}

// ResolveIntent marks a conflict as settled by the user.
func (t *Tx) ResolveIntent(id, note string) error {
	res, err := t.tx.ExecContext(t.ctx, `UPDATE intents SET state = 'resolved',
		outcome = outcome || ?, closed_at = ? WHERE id = ? AND state = 'conflict'`, "; resolved: "+note, now(), id)
	if err != nil {
		return fmt.Errorf("resolve intent %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.Join(fmt.Errorf("resolve intent %s: no such conflict", id), err)
	}
	return nil
}

const intentSelect = `SELECT id, run_id, tool_call_id, workspace_id, op, undoes, files, staging, state, outcome,
	created_at, COALESCE(closed_at, '') FROM intents`

// Intents lists intents in creation order: those in the given states
// (none: every state) and, when runID is set, of that run only.
func (s *Store) Intents(ctx context.Context, runID string, states ...string) ([]Intent, error) {
	var where []string
	var args []any
	if runID != "" {
		where, args = append(where, "run_id = ?"), append(args, runID)
	}
	if len(states) > 0 {
		where = append(where, "state IN (?"+strings.Repeat(",?", len(states)-1)+")")
		for _, st := range states {
			args = append(args, st)
		}
	}
	q := intentSelect
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.r.QueryContext(ctx, q+" ORDER BY created_at, id", args...)
	if err != nil {
		return nil, fmt.Errorf("list intents: %w", err)
	}
	defer rows.Close()
	var out []Intent
	for rows.Next() {
		in, err := scanIntent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

func scanIntent(rows *sql.Rows) (Intent, error) {
	var in Intent
	var files, staging string
	if err := rows.Scan(&in.ID, &in.RunID, &in.ToolCallID, &in.WorkspaceID, &in.Op, &in.Undoes, &files, &staging, &in.State,
		&in.Outcome, &in.CreatedAt, &in.ClosedAt); err != nil {
		return in, fmt.Errorf("read intent: %w", err)
	}
	if err := json.Unmarshal([]byte(files), &in.Files); err != nil {
		return in, fmt.Errorf("read intent %s files: %w", in.ID, err)
	}
	if err := json.Unmarshal([]byte(staging), &in.Staging); err != nil {
		return in, fmt.Errorf("read intent %s staging: %w", in.ID, err)
	}
	return in, nil
}
