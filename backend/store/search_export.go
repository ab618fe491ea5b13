package store

import (
	"context"
	"encoding/json"
	"fmt"

	"agenthub/backend"
)

// What a run bundle (backend/bundle) reads: the run's audit entries and the
// chain's links from the first of them to the head.

// AuditLink is one audit chain entry without its data.
type AuditLink struct {
	Seq            int64
	PrevHash, Hash string
}

// RunAudit returns the audit entries of one run, in chain order.
func (s *Store) RunAudit(ctx context.Context, runID string) ([]backend.AuditEntry, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq, at, actor, surface, kind, run_id, tool_call_id, subject_hash,
		data, prev_hash, hash FROM audit WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("read the audit of %s: %w", runID, err)
	}
	defer rows.Close()
	var out []backend.AuditEntry
	for rows.Next() {
		var e backend.AuditEntry
		var data []byte
		if err := rows.Scan(&e.Seq, &e.At, &e.Actor, &e.Surface, &e.Kind, &e.RunID, &e.ToolCallID, &e.SubjectHash,
			&data, &e.PrevHash, &e.Hash); err != nil {
			return nil, fmt.Errorf("read the audit of %s: %w", runID, err)
		}
		if err := json.Unmarshal(data, &e.Data); err != nil {
			return nil, &backend.Error{Code: backend.CodeStoreCorrupt, Err: err,
				Message: fmt.Sprintf("audit entry %d is damaged: its data is not JSON", e.Seq),
				Next:    "Run `agenthub audit verify` and `agenthub doctor`; restore the database from a backup."}
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the audit of %s: %w", runID, err)
	}
	return out, nil
}

// AuditLinks returns the chain's links from entry from to the head, in order;
// upTo > 0 stops there instead (a head read in the same snapshot as the
// entries).
func (s *Store) AuditLinks(ctx context.Context, from, upTo int64) ([]AuditLink, error) {
	if upTo <= 0 {
		upTo = 1<<63 - 1
	}
	rows, err := s.r.QueryContext(ctx, `SELECT seq, prev_hash, hash FROM audit WHERE seq >= ? AND seq <= ?
		ORDER BY seq`, from, upTo)
	if err != nil {
		return nil, fmt.Errorf("read the audit chain: %w", err)
	}
	defer rows.Close()
	var out []AuditLink
	for rows.Next() {
		var l AuditLink
		if err := rows.Scan(&l.Seq, &l.PrevHash, &l.Hash); err != nil {
			return nil, fmt.Errorf("read the audit chain: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the audit chain: %w", err)
	}
	return out, nil
}

// WorkspaceAny reads a workspace, removed or not (an export still scrubs the
// root of a workspace that left the allowlist).
func (s *Store) WorkspaceAny(ctx context.Context, id string) (backend.Workspace, error) {
	var w backend.Workspace
	err := s.r.QueryRowContext(ctx, `SELECT id, name, path, display_path, added_at FROM workspaces WHERE id = ?`,
		id).Scan(&w.ID, &w.Name, &w.Path, &w.DisplayPath, &w.AddedAt)
	if err != nil {
		return w, fmt.Errorf("read workspace %s: %w", id, err)
	}
	return w, nil
}
