package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"agenthub/backend"
	"agenthub/backend/store"
	"agenthub/workspace"
)

// UndoResult is what an undo restored.
type UndoResult struct {
	CheckpointID string                 `json:"checkpointId"` // the undo's own checkpoint, so it can be undone too
	Files        []workspace.FileResult `json:"files"`
}

// checkpointDir holds the pre-images of every apply, outside any workspace.
func (c *Core) checkpointDir() string { return filepath.Join(c.cfg.Home, "checkpoints") }

// Undo restores the files an apply changed, from its checkpoint. It refuses,
// naming the files, when any of them changed since the apply, and then
// nothing is restored. The undo is audited with the user as actor.
func (w *WorkspacesAPI) Undo(workspaceID, checkpointID string) (UndoResult, error) {
	db, err := w.core.db()
	if err != nil {
		return UndoResult{}, err
	}
	ctx := context.Background()
	ws, err := db.Workspace(ctx, workspaceID)
	if err != nil {
		return UndoResult{}, err
	}
	fsys, err := workspace.Open(ws.Path)
	if err != nil {
		return UndoResult{}, fmt.Errorf("open workspace %s: %w", ws.DisplayPath, err)
	}
	defer fsys.Close()
	ck, err := workspace.NewCheckpointStore(w.core.checkpointDir(), 0)
	if err != nil {
		return UndoResult{}, err
	}
	res, err := workspace.UndoWith(fsys, ck, checkpointID, workspace.Options{
		Journal: undoJournal{ctx: ctx, db: db, workspaceID: ws.ID}})
	if err != nil {
		return UndoResult{}, undoError(err)
	}
	// The audit entry and the close of the undo's intent are one commit:
	// a crash before it leaves the intent open for the next start to
	// reconcile with the disk (docs/RELIABILITY.md).
	by := w.core.By()
	_, err = db.Do(ctx, func(tx *store.Tx) error {
		if _, err := tx.Audit(backend.AuditEntry{At: backend.Stamp(nowUTC()), Actor: by.Actor,
			Surface: by.Surface, Kind: "patch.undone", Data: map[string]any{"workspaceId": ws.ID,
				"checkpointId": checkpointID, "undoCheckpointId": res.CheckpointID, "files": res.Files}}); err != nil {
			return err
		}
		_, err := tx.CloseIntent(res.CheckpointID, store.IntentApplied, "undone")
		return err
	})
	if err != nil {
		return UndoResult{}, err
	}
	return UndoResult{CheckpointID: res.CheckpointID, Files: res.Files}, nil
}

// undoJournal records an undo as an intent before it touches a file.
type undoJournal struct {
	ctx         context.Context
	db          *store.Store
	workspaceID string
}

func (j undoJournal) Intend(in workspace.Intent) error {
	rec := store.Intent{ID: in.ID, WorkspaceID: j.workspaceID, Op: in.Op, Undoes: in.Undoes, Staging: in.Staging}
	for _, f := range in.Files {
		rec.Files = append(rec.Files, store.IntentFile{Path: f.Path, Before: f.Before, After: f.After})
	}
	_, err := j.db.Do(j.ctx, func(tx *store.Tx) error { return tx.OpenIntent(rec) })
	return err
}

func (j undoJournal) Abandon(id string, v workspace.Verdict, cause error) {
	_, err := j.db.Do(j.ctx, func(tx *store.Tx) error {
		_, err := tx.CloseIntent(id, string(v), "the undo failed: "+cause.Error())
		return err
	})
	if err != nil {
		slog.Warn("undo: close intent", "intent_id", id, "err", err)
	}
}

func undoError(err error) error {
	var files *workspace.FilesError
	switch {
	case errors.Is(err, workspace.ErrChanged) && errors.As(err, &files):
		return &backend.Error{Code: backend.CodeConflict, Err: err,
			Message: fmt.Sprintf("nothing was restored: %v changed since the apply", files.Paths),
			Next:    "Review those files; undo only restores files that still hold what the apply wrote."}
	case errors.Is(err, workspace.ErrChanged):
		return &backend.Error{Code: backend.CodeConflict, Err: err, Message: "nothing was restored: files changed since the apply"}
	case errors.Is(err, workspace.ErrCheckpoint):
		return &backend.Error{Code: backend.CodeNotFound, Err: err,
			Message: "no such checkpoint for this workspace, or it was already undone",
			Next:    "Checkpoint ids are in the run's run.patch.applied events (agenthub runs events RUN)."}
	}
	return err
}
