package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"agenthub/backend"
)

// Imported runs (issue 19): a run read from a bundle, stored read-only for
// review in another data directory. Its plan holds {"imported": Imported};
// it belongs to the workspace ImportedWorkspace, which is never on the
// allowlist (removed from the start), so nothing can run there.

// ImportedWorkspace is the workspace every imported run belongs to.
const ImportedWorkspace = "ws_imported"

// Imported says where an imported run came from.
type Imported struct {
	Producer   string           `json:"producer"`
	ExportedAt string           `json:"exportedAt"`
	Digest     string           `json:"digest"`              // the bundle's events digest
	AuditHead  string           `json:"auditHead,omitempty"` // SEQ:HASH of the exporting chain
	State      backend.RunState `json:"state"`               // the run's state when it was exported
	Workspace  string           `json:"workspace"`           // the workspace's name where it ran
}

// ImportRun stores run r with its events exactly as exported (ids,
// sequences, timestamps), payloads passed through the redactor again. A run
// exported while it was still going is stored Cancelled: it can never go on
// here. The import is audited.
func (t *Tx) ImportRun(r RunRecord, evs []backend.Event, im Imported, by By) error {
	var n int
	if err := t.tx.QueryRowContext(t.ctx, `SELECT count(*) FROM runs WHERE id = ?`, r.ID).Scan(&n); err != nil {
		return fmt.Errorf("import run %s: %w", r.ID, err)
	}
	if n > 0 {
		return &backend.Error{Code: backend.CodeConflict, Message: "run " + r.ID + " is already in this data directory",
			Next: "Nothing to do: open it in the runs list (it was exported from here, or imported before)."}
	}
	at := now()
	if err := t.Exec(`INSERT INTO workspaces (id, name, path, display_path, added_at, removed_at)
		VALUES (?, 'Imported runs', '', '', ?, ?) ON CONFLICT (id) DO NOTHING`, ImportedWorkspace, at, at); err != nil {
		return fmt.Errorf("import run %s: %w", r.ID, err)
	}
	if err := t.CreateSession(r.SessionID, ImportedWorkspace, "imported: "+r.Task); err != nil {
		return err
	}
	state, reason := r.State, r.DoneReason
	if !state.Terminal() {
		state, reason = backend.RunCancelled, "imported while "+string(r.State)+": the exported copy ends there"
	}
	plan, err := json.Marshal(map[string]any{"imported": im})
	if err != nil {
		return fmt.Errorf("import run %s: %w", r.ID, err)
	}
	last := int64(0)
	if len(evs) > 0 {
		last = evs[len(evs)-1].Sequence
	}
	err = t.Exec(`INSERT INTO runs (id, session_id, workspace_id, profile, agent_id, runtime, task, state, done_reason,
		actor, surface, queue_seq, plan, last_seq, created_at, updated_at, last_event_at, ended_at)
		VALUES (?, ?, ?, ?, 'imported', ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(queue_seq), 0) + 1 FROM runs), ?, ?,
		?, ?, ?, ?)`, r.ID, r.SessionID, ImportedWorkspace, r.Profile, r.Runtime, t.s.red.text(r.Task), string(state),
		reason, by.Actor, string(by.Surface), string(plan), last, r.CreatedAt, at, orText(r.LastEventAt, at), at)
	if err != nil {
		return fmt.Errorf("import run %s: %w", r.ID, err)
	}
	for _, ev := range evs {
		ev.RunID = r.ID
		ev.Payload = t.s.red.json(ev.Payload)
		if err := t.insertEvent(ev); err != nil {
			return fmt.Errorf("import run %s: %w", r.ID, err)
		}
	}
	_, err = t.Audit(backend.AuditEntry{Actor: by.Actor, Surface: by.Surface, Kind: "run.imported", RunID: r.ID,
		Data: map[string]any{"producer": im.Producer, "exportedAt": im.ExportedAt, "digest": im.Digest,
			"auditHead": im.AuditHead, "events": len(evs)}})
	return err
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ImportedRun returns where run id came from when it was imported; ok is
// false for a run of this data directory.
func (s *Store) ImportedRun(ctx context.Context, id string) (im Imported, ok bool, err error) {
	var raw []byte
	err = s.r.QueryRowContext(ctx, `SELECT json_extract(plan, '$.imported') FROM runs WHERE id = ?`, id).Scan(&raw)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return im, false, &backend.NotFound{Kind: "run", ID: id}
		}
		return im, false, fmt.Errorf("read run %s: %w", id, err)
	}
	if len(raw) == 0 {
		return im, false, nil
	}
	if err := json.Unmarshal(raw, &im); err != nil {
		return im, false, fmt.Errorf("read run %s: imported: %w", id, err)
	}
	return im, true, nil
}
