package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sqlite3 "github.com/mattn/go-sqlite3"

	"agenthub/backend"
)

// Workspaces returns the allowlisted workspaces, oldest first.
func (s *Store) Workspaces(ctx context.Context) ([]backend.Workspace, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, name, path, display_path, added_at FROM workspaces
		WHERE removed_at IS NULL ORDER BY added_at, rowid`)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	defer rows.Close()
	var out []backend.Workspace
	for rows.Next() {
		var w backend.Workspace
		if err := rows.Scan(&w.ID, &w.Name, &w.Path, &w.DisplayPath, &w.AddedAt); err != nil {
			return nil, fmt.Errorf("list workspaces: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	return out, nil
}

// Workspace returns one allowlisted workspace, or backend.ErrNotFound.
func (s *Store) Workspace(ctx context.Context, id string) (backend.Workspace, error) {
	var w backend.Workspace
	err := s.r.QueryRowContext(ctx, `SELECT id, name, path, display_path, added_at FROM workspaces
		WHERE id = ? AND removed_at IS NULL`, id).Scan(&w.ID, &w.Name, &w.Path, &w.DisplayPath, &w.AddedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return w, &backend.NotFound{Kind: "workspace", ID: id}
	}
	if err != nil {
		return w, fmt.Errorf("read workspace %s: %w", id, err)
	}
	return w, nil
}

// AddWorkspace allowlists w (ID chosen by the caller) and appends the
// workspace.added audit entry in the same transaction (AU1). A path that is
// already allowlisted is a conflict.
func (s *Store) AddWorkspace(ctx context.Context, w backend.Workspace, by By) error {
	if w.AddedAt == "" {
		w.AddedAt = now()
	}
	return s.auditTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, path, display_path, added_at)
			VALUES (?, ?, ?, ?, ?)`, w.ID, w.Name, w.Path, w.DisplayPath, w.AddedAt)
		if isConstraint(err) {
			return &backend.Error{Code: backend.CodeWorkspaceExists,
				Message: fmt.Sprintf("workspace %s is already in the allowlist", w.DisplayPath), Err: err}
		}
		if err != nil {
			return fmt.Errorf("add workspace %s: %w", w.ID, err)
		}
		_, err = s.appendAudit(ctx, tx, backend.AuditEntry{Actor: by.Actor, Surface: by.Surface,
			Kind: "workspace.added", Data: map[string]any{
				"workspaceId": w.ID, "name": w.Name, "displayPath": w.DisplayPath}})
		return err
	})
}

// RemoveWorkspace takes a workspace off the allowlist. Its runs and sessions
// stay (history is never dropped); the row is only marked removed.
func (s *Store) RemoveWorkspace(ctx context.Context, id string, by By) error {
	return s.auditTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE workspaces SET removed_at = ?
			WHERE id = ? AND removed_at IS NULL`, now(), id)
		if err != nil {
			return fmt.Errorf("remove workspace %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("remove workspace: %w", &backend.NotFound{Kind: "workspace", ID: id})
		}
		_, err = s.appendAudit(ctx, tx, backend.AuditEntry{Actor: by.Actor, Surface: by.Surface,
			Kind: "workspace.removed", Data: map[string]any{"workspaceId": id}})
		return err
	})
}

// Setting reads one setting; ok is false when it was never set.
func (s *Store) Setting(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := s.r.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read setting %s: %w", key, err)
	}
	return v, true, nil
}

// SetSetting writes one setting.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
		if err != nil {
			return fmt.Errorf("write setting %s: %w", key, err)
		}
		return nil
	})
}

func isConstraint(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}
