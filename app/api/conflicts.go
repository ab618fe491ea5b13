package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"agenthub/backend"
	"agenthub/backend/store"
	"agenthub/workspace"
)

// ConflictsAPI settles the workspace conflicts recovery recorded
// (run.workspace.conflict, docs/RELIABILITY.md): files a crash left holding
// neither their content before a change nor what the change wrote. Only the
// user can say which content is right.
type ConflictsAPI struct{ core *Core }

// NewConflictsAPI returns the facade.
func NewConflictsAPI(c *Core) *ConflictsAPI { return &ConflictsAPI{core: c} }

// resolveMu serialises resolutions in this process (the engine owns the
// data directory), so two restores of one conflict never both write; the
// intent's state, changed in the resolution's commit, refuses a second one
// from anywhere else.
var resolveMu sync.Mutex

// Resolve settles one conflict of a run. choice "keep" records that the
// files stay as they are on disk; "restore" puts back each file's content
// from before the change, from the intent's checkpoint pre-images, and
// refuses, naming the files and writing none, when any file no longer holds
// what recovery found. A conflict is resolved once.
func (a *ConflictsAPI) Resolve(runID, intentID, choice string) (backend.WorkspaceConflictResolved, error) {
	var out backend.WorkspaceConflictResolved
	if choice != backend.ConflictKeep && choice != backend.ConflictRestore {
		return out, backend.Errorf(backend.CodeInvalidInput, "choice %q: want keep or restore", choice)
	}
	db, err := a.core.db()
	if err != nil {
		return out, err
	}
	if err := a.core.writable(); err != nil {
		return out, err
	}
	resolveMu.Lock()
	defer resolveMu.Unlock()
	ctx := context.Background()
	in, found, err := a.conflict(ctx, db, runID, intentID)
	if err != nil {
		return out, err
	}
	by := a.core.By()
	out = backend.WorkspaceConflictResolved{IntentID: in.ID, Choice: choice, Files: found,
		Actor: by.Actor, Surface: by.Surface}
	var applied *workspace.ApplyResult
	if choice == backend.ConflictRestore {
		res, files, err := a.restore(ctx, db, in, found)
		if err != nil {
			return backend.WorkspaceConflictResolved{}, err
		}
		applied, out.Files, out.RestoreCheckpointID = &res, files, res.CheckpointID
	}
	_, err = db.Do(ctx, func(tx *store.Tx) error {
		if err := tx.ResolveIntent(in.ID, choice+" by "+by.Actor); err != nil {
			return alreadyResolved(in.ID, err)
		}
		if applied != nil {
			if _, err := tx.CloseIntent(applied.CheckpointID, store.IntentApplied, "conflict "+in.ID+" restored"); err != nil {
				return err
			}
		}
		if _, err := tx.Annotate(runID, backend.EvWorkspaceConflictResolved, out); err != nil {
			return err
		}
		_, err := tx.Audit(backend.AuditEntry{At: backend.Stamp(nowUTC()), Actor: by.Actor, Surface: by.Surface,
			Kind: "patch.conflict_resolved", RunID: runID, ToolCallID: in.ToolCallID, Data: map[string]any{
				"workspaceId": in.WorkspaceID, "intentId": in.ID, "choice": choice, "files": out.Files,
				"restoreCheckpointId": out.RestoreCheckpointID}})
		return err
	})
	if err != nil {
		return backend.WorkspaceConflictResolved{}, err
	}
	return out, nil
}

// conflict finds a run's open conflict and what recovery found on disk
// (from its audit entry, which exists whether or not the run was still
// live to carry the event).
func (a *ConflictsAPI) conflict(ctx context.Context, db *store.Store, runID, intentID string) (store.Intent, []backend.ConflictFile, error) {
	ins, err := db.Intents(ctx, runID)
	if err != nil {
		return store.Intent{}, nil, err
	}
	var in store.Intent
	for _, x := range ins {
		if x.ID == intentID {
			in = x
		}
	}
	switch {
	case in.ID == "":
		return in, nil, &backend.Error{Code: backend.CodeNotFound,
			Message: fmt.Sprintf("run %s has no workspace conflict %s", runID, intentID),
			Next:    "Conflict ids are listed by `agenthub runs show RUN`."}
	case in.State == store.IntentResolved:
		return in, nil, alreadyResolved(in.ID, nil)
	case in.State != store.IntentConflict:
		return in, nil, &backend.Error{Code: backend.CodeConflict,
			Message: fmt.Sprintf("the change %s of run %s is %s, not a conflict", in.ID, runID, in.State),
			Next:    "Only conflicts listed by `agenthub runs show RUN` need resolving."}
	}
	entries, err := db.RunAudit(ctx, runID)
	if err != nil {
		return in, nil, err
	}
	for _, e := range entries {
		if e.Kind != "patch.conflict" || e.Data["checkpointId"] != in.ID {
			continue
		}
		raw, err := json.Marshal(e.Data["files"])
		if err != nil {
			return in, nil, fmt.Errorf("read conflict %s: %w", in.ID, err)
		}
		var files []backend.ConflictFile
		if err := json.Unmarshal(raw, &files); err != nil {
			return in, nil, fmt.Errorf("read conflict %s: %w", in.ID, err)
		}
		return in, files, nil
	}
	return in, nil, fmt.Errorf("conflict %s of run %s: its audit entry is missing", in.ID, runID)
}

// restore writes each file's pre-image back, as one apply whose pre-images
// are what recovery found: a file changed since then fails the whole apply
// before anything is written (ErrConflict naming the files). The restore has
// its own checkpoint and intent, like an undo.
func (a *ConflictsAPI) restore(ctx context.Context, db *store.Store, in store.Intent,
	found []backend.ConflictFile) (workspace.ApplyResult, []backend.ConflictFile, error) {
	if in.Op == backend.IntentCommit {
		return workspace.ApplyResult{}, nil, &backend.Error{Code: backend.CodeConflict,
			Message: "a commit's conflict cannot be restored here: HEAD is git's to move",
			Next:    "Review the branch with `git log`, then resolve the conflict with --keep."}
	}
	ck, err := workspace.NewCheckpointStore(a.core.checkpointDir(), 0)
	if err != nil {
		return workspace.ApplyResult{}, nil, err
	}
	var changes []workspace.Change
	var unreadable []string
	after := make([]backend.ConflictFile, len(found))
	for i, f := range found {
		after[i] = f
		after[i].Found = f.Before
		if f.Found == f.Before {
			continue // this file already holds its content from before
		}
		if f.Found != workspace.Absent && !isHash(f.Found) {
			unreadable = append(unreadable, f.Path)
			continue
		}
		c := workspace.Change{Path: f.Path, PreimageSHA256: f.Found}
		if f.Before == workspace.Absent {
			c.Delete = true
		} else if c.NewContent, err = ck.Blob(f.Before); err != nil {
			return workspace.ApplyResult{}, nil, &backend.Error{Code: backend.CodeNotFound, Err: err,
				Message: fmt.Sprintf("nothing was restored: the content of %s before the change is no longer kept", f.Path),
				Next:    "Edit the files by hand, then resolve the conflict with keep."}
		}
		changes = append(changes, c)
	}
	if len(unreadable) > 0 {
		return workspace.ApplyResult{}, nil, &backend.Error{Code: backend.CodeConflict,
			Message: fmt.Sprintf("nothing was restored: recovery could not read %v", unreadable),
			Next:    "Check those files' permissions and edit them by hand, then resolve the conflict with keep."}
	}
	if len(changes) == 0 {
		return workspace.ApplyResult{Files: []workspace.FileResult{}}, after, nil
	}
	root, err := a.core.runRoot(in.RunID, in.WorkspaceID)
	if err != nil {
		return workspace.ApplyResult{}, nil, err
	}
	fsys, err := workspace.Open(root)
	if err != nil {
		return workspace.ApplyResult{}, nil, fmt.Errorf("open the run's workspace: %w", err)
	}
	defer fsys.Close()
	res, err := workspace.ApplyWith(fsys, changes, ck, workspace.Options{
		Journal: undoJournal{ctx: ctx, db: db, workspaceID: in.WorkspaceID}})
	var files *workspace.FilesError
	switch {
	case errors.Is(err, workspace.ErrConflict) && errors.As(err, &files):
		return res, nil, &backend.Error{Code: backend.CodeConflict, Err: err,
			Message: fmt.Sprintf("nothing was restored: %v changed since the conflict was recorded", files.Paths),
			Next:    "Review those files; resolve with keep to leave the disk as it is, or edit them by hand."}
	case err != nil:
		return res, nil, fmt.Errorf("restore conflict %s: %w", in.ID, err)
	}
	return res, after, nil
}

func alreadyResolved(id string, err error) error {
	return &backend.Error{Code: backend.CodeConflict, Err: err,
		Message: fmt.Sprintf("conflict %s was already resolved", id),
		Next:    "Its resolution is in the run's events and the audit log (`agenthub audit export`)."}
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
