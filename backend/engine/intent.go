package engine

import (
	"context"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/backend/store"
	"agenthub/workspace"
	"agenthub/workspace/git"
)

// This file is intent before effect (docs/RELIABILITY.md): a tool's change
// to workspace files is committed as an open intent before its first byte
// is written; the commit that records its patch.applied event and audit
// entry closes it; an intent a dead process left open is reconciled with
// the disk at the next start.

// callJournal is one call's intent journal (ToolEnv.Intents).
type callJournal struct {
	rc *runCtl
	c  *callState
}

func (j callJournal) Intend(in backend.Intent) error {
	rec := store.Intent{ID: in.ID, RunID: j.rc.rec.ID, ToolCallID: j.c.Req.ID, WorkspaceID: j.rc.rec.WorkspaceID,
		Op: in.Op, Undoes: in.Undoes, Staging: in.Staging}
	for _, f := range in.Files {
		rec.Files = append(rec.Files, store.IntentFile(f))
	}
	if err := j.rc.commit(func(tx *store.Tx) error { return tx.OpenIntent(rec) }); err != nil {
		return fmt.Errorf("record intent %s: %w", in.ID, err)
	}
	return nil
}

// Applied closes the intent of an effect that succeeded and that no
// patch.applied event closes (a commit, backend.IntentCloser).
func (j callJournal) Applied(id, outcome string) error {
	return j.rc.commit(func(tx *store.Tx) error {
		_, err := tx.CloseIntent(id, store.IntentApplied, outcome)
		return err
	})
}

// Abandon closes the intent of an effect that failed after its intent was
// recorded. A failure that left the files in neither state is a conflict
// the user must see.
func (j callJournal) Abandon(id, verdict string, cause error) {
	rc := j.rc
	rc.commitLog(func(tx *store.Tx) error {
		closed, err := tx.CloseIntent(id, verdict, "the effect failed: "+causeText(cause))
		if err != nil || !closed || verdict != store.IntentConflict {
			return err
		}
		ins, err := rc.e.store.Intents(rc.ctx, rc.rec.ID)
		if err != nil {
			return err
		}
		for _, in := range ins {
			if in.ID == id {
				return conflictTx(tx, in, nil, false) // the call is executing: its run is open
			}
		}
		return nil
	})
}

func causeText(err error) string {
	if err == nil {
		return "unknown"
	}
	return err.Error()
}

// closeApplied closes, in the transaction that records a patch.applied
// event, the intent of the checkpoint it names.
func closeApplied(tx *store.Tx, payload any) error {
	m, ok := payload.(map[string]any)
	if !ok {
		return nil
	}
	id, _ := m["checkpointId"].(string)
	if id == "" {
		return nil
	}
	_, err := tx.CloseIntent(id, store.IntentApplied, "applied")
	return err
}

// reconcileIntents settles every intent a previous process left open, before
// its run is recovered (an interrupted run takes no more events): each is
// compared with the disk (workspace.Reconcile), its staging files removed,
// and closed as applied (with the patch.applied event and audit entry the
// dead process did not commit), not applied, or a conflict.
func (e *Engine) reconcileIntents(ctx context.Context) error {
	open, err := e.store.Intents(ctx, "", store.IntentOpen)
	if err != nil {
		return fmt.Errorf("recover intents: %w", err)
	}
	for _, in := range open {
		verdict, states, rerr := e.reconcileOne(in)
		if rerr != nil {
			e.log.Warn("recover intent", "intent_id", in.ID, "err", rerr)
		}
		live := false
		if in.RunID != "" {
			r, err := e.store.Run(ctx, in.RunID)
			live = err == nil && !r.State.Terminal()
		}
		_, err := e.store.Do(ctx, func(tx *store.Tx) error {
			return recordVerdict(tx, in, verdict, states, live)
		})
		if err != nil {
			return fmt.Errorf("recover intent %s: %w", in.ID, err)
		}
	}
	return nil
}

// reconcileOne compares one intent with its workspace. A workspace that
// cannot be opened is a conflict: nothing can say what it holds.
func (e *Engine) reconcileOne(in store.Intent) (workspace.Verdict, []workspace.FileState, error) {
	win := workspace.Intent{ID: in.ID, Op: in.Op, Undoes: in.Undoes, Staging: in.Staging}
	for _, f := range in.Files {
		win.Files = append(win.Files, workspace.IntentFile(f))
	}
	unknown := func(err error) (workspace.Verdict, []workspace.FileState, error) {
		var states []workspace.FileState
		for _, f := range win.Files {
			states = append(states, workspace.FileState{IntentFile: f, Found: "unreadable: the workspace is unavailable"})
		}
		return workspace.VerdictConflict, states, err
	}
	root, err := e.rootFor(in.RunID, in.WorkspaceID) // a worktree run's effects are in its worktree
	if err != nil {
		return unknown(err)
	}
	if in.Op == backend.IntentCommit {
		return reconcileCommit(root, in)
	}
	w, err := workspace.Open(root)
	if err != nil {
		return unknown(err)
	}
	defer w.Close()
	return workspace.Reconcile(w, win)
}

// reconcileCommit asks the repository whether a commit a dead process
// intended was made (git.Landed): HEAD still its base is not applied, HEAD
// the commit on that base with exactly its blobs is applied, anything else a
// conflict. The states name HEAD: what it was, what was found.
func reconcileCommit(root string, in store.Intent) (workspace.Verdict, []workspace.FileState, error) {
	if len(in.Files) == 0 || in.Files[0].Path != "HEAD" {
		return workspace.VerdictConflict, nil, fmt.Errorf("commit intent %s names no HEAD", in.ID)
	}
	base := in.Files[0].Before
	blobs := map[string]string{}
	for _, f := range in.Files[1:] {
		blobs[f.Path] = f.After
	}
	head := workspace.FileState{IntentFile: workspace.IntentFile(in.Files[0])}
	r, err := git.Open(root)
	if err != nil {
		head.Found = "unreadable: " + err.Error()
		return workspace.VerdictConflict, []workspace.FileState{head}, err
	}
	l, err := r.Landed(base, blobs)
	head.Found = l.Head
	if err != nil {
		return workspace.VerdictConflict, []workspace.FileState{head}, err
	}
	if l.State == git.LandedYes {
		head.After = l.Head // the commit's hash is known only now
	}
	return workspace.Verdict(l.State), []workspace.FileState{head}, nil
}

// recordVerdict closes a recovered intent. On a run still open it appends
// what the effect's own commit would have (patch.applied) or the conflict;
// the audit trail gets an entry either way.
func recordVerdict(tx *store.Tx, in store.Intent, v workspace.Verdict, states []workspace.FileState, live bool) error {
	closed, err := tx.CloseIntent(in.ID, string(v), "reconciled at start: "+describe(states))
	if err != nil || !closed {
		return err
	}
	files := conflictFiles(states)
	if in.Op == backend.IntentCommit && v != workspace.VerdictConflict {
		// No patch event: a commit's record is the audit entry (and the
		// interrupted call's result, intentOutcomes).
		kind := map[workspace.Verdict]string{workspace.VerdictApplied: "commit.applied",
			workspace.VerdictNotApplied: "commit.not_applied"}[v]
		return auditIntent(tx, in, kind, map[string]any{"intentId": in.ID, "head": files, "recovered": true})
	}
	switch v {
	case workspace.VerdictApplied:
		payload := map[string]any{"tool": in.Op, "checkpointId": in.ID, "files": files, "recovered": true,
			"toolCallId": in.ToolCallID}
		if live {
			if _, err := tx.Append(in.RunID, backend.EvPatchApplied, payload); err != nil {
				return err
			}
		}
		return auditIntent(tx, in, "patch.applied", payload)
	case workspace.VerdictNotApplied:
		return auditIntent(tx, in, "patch.not_applied", map[string]any{"checkpointId": in.ID, "files": files,
			"recovered": true})
	}
	return conflictTx(tx, in, states, !live)
}

// conflictTx records a conflict: an event on an open run and an audit entry.
func conflictTx(tx *store.Tx, in store.Intent, states []workspace.FileState, ended bool) error {
	p := backend.WorkspaceConflict{Code: backend.CodeWorkspaceConflict, IntentID: in.ID, CheckpointID: in.ID,
		ToolCallID: in.ToolCallID, Files: conflictFiles(states),
		Message: "AgentHub stopped while changing these files, and they now hold neither what they held " +
			"before nor what the change wrote (or only some of them changed); nothing was touched",
		Next: "Review the files, then keep what is on disk or restore the content before the change: " +
			"`agenthub conflicts resolve " + in.RunID + " " + in.ID + " --keep|--restore`, or the buttons on " +
			"this conflict in the run's timeline."}
	if in.Op == backend.IntentCommit {
		p.Message = "AgentHub stopped while making a commit, and HEAD now points neither to the commit it " +
			"started from nor to the commit it was making; nothing was touched"
		p.Next = "Review the branch with `git log`: the commit that moved HEAD is not the approved one."
	}
	if p.Files == nil {
		for _, f := range in.Files {
			p.Files = append(p.Files, backend.ConflictFile{IntentFile: backend.IntentFile(f), Found: "unknown"})
		}
	}
	// A run that ended before recovery still shows its conflict (timeline,
	// runs show), as an annotation after its end.
	switch {
	case in.RunID != "" && !ended:
		if _, err := tx.Append(in.RunID, backend.EvWorkspaceConflict, p); err != nil {
			return err
		}
	case in.RunID != "":
		if _, err := tx.Annotate(in.RunID, backend.EvWorkspaceConflict, p); err != nil {
			return err
		}
	}
	return auditIntent(tx, in, "patch.conflict", map[string]any{"code": p.Code, "checkpointId": in.ID,
		"files": p.Files})
}

func auditIntent(tx *store.Tx, in store.Intent, kind string, data map[string]any) error {
	data["workspaceId"], data["op"] = in.WorkspaceID, in.Op
	_, err := tx.Audit(backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine, Kind: kind,
		RunID: in.RunID, ToolCallID: in.ToolCallID, Data: data})
	return err
}

func conflictFiles(states []workspace.FileState) []backend.ConflictFile {
	var out []backend.ConflictFile
	for _, s := range states {
		out = append(out, backend.ConflictFile{IntentFile: backend.IntentFile(s.IntentFile), Found: s.Found})
	}
	return out
}

func describe(states []workspace.FileState) string {
	parts := make([]string, 0, len(states))
	for _, s := range states {
		side := "neither image"
		switch s.Found {
		case s.After:
			side = "after-image"
		case s.Before:
			side = "before-image"
		}
		parts = append(parts, s.Path+": "+side)
	}
	return strings.Join(parts, ", ")
}

// intentOutcomes says, per tool call of a run, what its reconciled intents
// did to the workspace, for the result of a call recovery interrupts: the
// record says whether the change is on disk.
func (e *Engine) intentOutcomes(ctx context.Context, runID string) (map[string]string, error) {
	ins, err := e.store.Intents(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("recover run %s: %w", runID, err)
	}
	out := map[string]string{}
	for _, in := range ins {
		var paths []string
		for _, f := range in.Files {
			paths = append(paths, f.Path)
		}
		what := strings.Join(paths, ", ")
		if in.Op == backend.IntentCommit {
			switch in.State {
			case store.IntentApplied:
				out[in.ToolCallID] += "; the commit was made (" + in.Outcome + ")"
			case store.IntentNotApplied:
				out[in.ToolCallID] += "; nothing was committed"
			case store.IntentConflict:
				out[in.ToolCallID] += "; HEAD moved to neither the base nor the intended commit (" +
					backend.CodeWorkspaceConflict + ")"
			}
			continue
		}
		switch in.State {
		case store.IntentApplied:
			out[in.ToolCallID] += fmt.Sprintf("; its change to %s was applied (checkpoint %s)", what, in.ID)
		case store.IntentNotApplied:
			out[in.ToolCallID] += fmt.Sprintf("; nothing was written to %s", what)
		case store.IntentConflict:
			out[in.ToolCallID] += fmt.Sprintf("; %s hold neither the old nor the new content (%s)", what,
				backend.CodeWorkspaceConflict)
		}
	}
	return out, nil
}
