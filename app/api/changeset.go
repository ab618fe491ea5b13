package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"agenthub/backend"
	"agenthub/backend/store"
	"agenthub/diffview"
	"agenthub/workspace"
	"agenthub/workspace/worktree"
)

// ChangesAPI is a run's change set (issue 18): every change the run
// proposed or applied with its state and diff, the reviewer's line
// comments, and reverting an applied change or the whole run through the
// same checkpoints as `agenthub undo`.
type ChangesAPI struct{ core *Core }

// NewChangesAPI returns the facade.
func NewChangesAPI(c *Core) *ChangesAPI { return &ChangesAPI{core: c} }

// Change states.
const (
	ChangeProposed = "proposed"
	ChangeApplied  = "applied"
	ChangeRejected = "rejected"
	ChangeReverted = "reverted"
)

// ChangeSet is what a run changed or proposes.
type ChangeSet struct {
	RunID       string                  `json:"runId"`
	WorkspaceID string                  `json:"workspaceId"`
	LastTurn    int                     `json:"lastTurn"` // the step of the newest change, "this turn"
	Changes     []Change                `json:"changes"`
	Comments    []backend.ReviewComment `json:"comments"`
	// Branch is a worktree run's branch against its base (nil for a run in
	// the checkout).
	Branch *BranchChanges `json:"branch,omitempty"`
}

// Change is one proposal of the run and what became of it.
type Change struct {
	ToolCallID   string       `json:"toolCallId"`
	ApprovalID   string       `json:"approvalId,omitempty"`
	SubjectHash  string       `json:"subjectHash,omitempty"`
	CheckpointID string       `json:"checkpointId,omitempty"`
	Tool         string       `json:"tool"`
	Turn         int          `json:"turn"` // the step it was proposed in (1-based)
	State        string       `json:"state"`
	Reason       string       `json:"reason,omitempty"` // why rejected: reviewer | drift | conflict
	Pending      bool         `json:"pending"`          // its approval awaits a decision
	Files        []ChangeFile `json:"files"`
	Sequence     int64        `json:"sequence"` // of its run.patch.proposed
}

// ChangeFile is one file of a change, with the diff the reviewer was shown.
type ChangeFile struct {
	Path      string             `json:"path"`
	Operation string             `json:"operation,omitempty"`
	Preimage  string             `json:"preimage"`
	Diff      *diffview.FileDiff `json:"diff,omitempty"`
}

// BranchChanges is a worktree's change set against its base commit.
type BranchChanges struct {
	Base  string              `json:"base"`
	Files []diffview.FileDiff `json:"files"`
}

// Get returns a run's change set, built from its events; an applied change
// whose checkpoint was undone (here, by `agenthub undo` or by another
// surface) is reverted.
func (a *ChangesAPI) Get(runID string) (ChangeSet, error) {
	db, err := a.core.db()
	if err != nil {
		return ChangeSet{}, err
	}
	ctx := context.Background()
	run, err := db.Run(ctx, runID)
	if err != nil {
		return ChangeSet{}, err
	}
	cs := ChangeSet{RunID: run.ID, WorkspaceID: run.WorkspaceID, Changes: []Change{}}
	evs, err := allEvents(ctx, db, run.ID)
	if err != nil {
		return ChangeSet{}, err
	}
	cs.Changes, cs.LastTurn = changesOf(evs)
	pending, err := a.core.engine.Approvals(ctx, run.ID)
	if err != nil {
		return ChangeSet{}, err
	}
	open := map[string]bool{}
	for _, p := range pending {
		open[p.ID] = true
	}
	ck, ckErr := workspace.NewCheckpointStore(a.core.checkpointDir(), 0)
	for i := range cs.Changes {
		ch := &cs.Changes[i]
		ch.Pending = ch.State == ChangeProposed && open[ch.ApprovalID]
		if ch.State == ChangeApplied && ch.CheckpointID != "" && ckErr == nil {
			if m, err := ck.Load(ch.CheckpointID); err == nil && m.UndoneAt != nil {
				ch.State = ChangeReverted
			}
		}
	}
	if cs.Comments, err = db.RunComments(ctx, run.ID); err != nil {
		return ChangeSet{}, err
	}
	if b, ok, err := a.core.branchChanges(ctx, run.ID); err != nil {
		return ChangeSet{}, err
	} else if ok {
		cs.Branch = &b
	}
	return cs, nil
}

func allEvents(ctx context.Context, db *store.Store, runID string) ([]backend.Event, error) {
	var out []backend.Event
	var after int64
	for {
		page, err := db.Events(ctx, runID, after, 1000)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < 1000 {
			return out, nil
		}
		after = page[len(page)-1].Sequence
	}
}

// changesOf folds a run's events into its changes, in proposal order.
func changesOf(evs []backend.Event) ([]Change, int) {
	out := []Change{}
	byCall := map[string]int{}
	previews := map[string]json.RawMessage{} // approval preview by tool call
	turn, last := 1, 0
	for _, ev := range evs {
		var p struct {
			ToolCallID   string                 `json:"toolCallId"`
			CheckpointID string                 `json:"checkpointId"`
			Reason       string                 `json:"reason"`
			Kind         string                 `json:"kind"`
			Preview      json.RawMessage        `json:"preview"`
			Files        []workspace.FileResult `json:"files"`
		}
		_ = json.Unmarshal(ev.Payload, &p) // a payload of another shape changes nothing
		i, known := byCall[p.ToolCallID]
		switch ev.Type {
		case backend.EvCheckpointCreated:
			if p.Kind == "step" {
				turn++
			}
		case backend.EvApprovalRequested:
			previews[p.ToolCallID] = p.Preview
		case backend.EvPatchProposed:
			var pp backend.PatchProposed
			if json.Unmarshal(ev.Payload, &pp) != nil {
				continue
			}
			ch := Change{ToolCallID: pp.ToolCallID, ApprovalID: pp.ApprovalID, SubjectHash: pp.SubjectHash,
				Tool: pp.Tool, Turn: turn, State: ChangeProposed, Sequence: ev.Sequence, Files: []ChangeFile{}}
			preview := pp.Preview
			if len(preview) == 0 {
				preview = previews[pp.ToolCallID]
			}
			diffs := previewDiffs(preview)
			for _, f := range pp.Files {
				cf := ChangeFile{Path: f.Path, Operation: f.Operation, Preimage: f.Preimage}
				if d, ok := diffs[f.Path]; ok {
					cf.Diff = &d
				}
				ch.Files = append(ch.Files, cf)
			}
			byCall[pp.ToolCallID] = len(out)
			out = append(out, ch)
			last = turn
		case backend.EvPatchApplied:
			if known && p.CheckpointID != "" {
				out[i].State, out[i].CheckpointID = ChangeApplied, p.CheckpointID
			}
		case backend.EvPatchRejected:
			// A partial approval rejects some hunks and applies the rest:
			// only a whole rejection (it names no path) rejects the change.
			if known && out[i].State != ChangeApplied && !strings.Contains(string(ev.Payload), `"path"`) {
				out[i].State, out[i].Reason = ChangeRejected, p.Reason
			}
		case backend.EvToolResult:
			// A call cancelled or failed without applying (the run was
			// cancelled, the decision rejected it) proposes nothing any more.
			var r struct {
				Status backend.CallStatus `json:"status"`
			}
			if known && out[i].State == ChangeProposed && json.Unmarshal(ev.Payload, &r) == nil &&
				r.Status != backend.CallSucceeded {
				out[i].State = ChangeRejected
				if out[i].Reason == "" {
					out[i].Reason = string(r.Status)
				}
			}
		}
	}
	return out, last
}

// previewDiffs reads the per-file diffs of a patch preview (backend/patch's
// Preview: one file with its diff; a runtime's preview may have none).
func previewDiffs(preview json.RawMessage) map[string]diffview.FileDiff {
	out := map[string]diffview.FileDiff{}
	var pv struct {
		Path string             `json:"path"`
		Diff *diffview.FileDiff `json:"diff"`
	}
	if json.Unmarshal(preview, &pv) == nil && pv.Diff != nil && pv.Path != "" {
		out[pv.Path] = *pv.Diff
	}
	return out
}

// branchChanges is a worktree run's change set against its base.
func (c *Core) branchChanges(ctx context.Context, runID string) (BranchChanges, bool, error) {
	owner, err := c.isolationOwner(ctx, runID)
	if err != nil || owner == "" {
		return BranchChanges{}, false, err
	}
	rec, err := c.store.Worktree(ctx, owner)
	if err != nil {
		return BranchChanges{}, false, err
	}
	if rec.State == store.WorktreeMerged || rec.State == store.WorktreeDiscarded {
		return BranchChanges{}, false, nil
	}
	m := c.worktrees()
	wt := worktree.Worktree{ID: rec.RunID, Path: m.Path(rec.RunID), Branch: rec.Branch, Base: rec.Base}
	changes, err := m.Changes(ctx, wt)
	if err != nil {
		return BranchChanges{}, false, fmt.Errorf("the changes of run %s's worktree: %w", owner, err)
	}
	b := BranchChanges{Base: rec.Base, Files: []diffview.FileDiff{}}
	for _, fc := range changes {
		var o, n diffview.Side
		if fc.BeforeExists {
			o = diffview.Side{Path: fc.Path, Content: fc.Before}
		}
		if fc.AfterExists {
			n = diffview.Side{Path: fc.Path, Content: fc.After}
		}
		d, err := diffview.Diff(o, n, diffview.Options{})
		if err != nil {
			d = diffview.FileDiff{Old: diffview.FileInfo{Path: fc.Path}, New: diffview.FileInfo{Path: fc.Path},
				Omitted: &diffview.Omitted{Reason: "error", Detail: err.Error()}}
		}
		b.Files = append(b.Files, d)
	}
	return b, true, nil
}

// branchDiff is the engine's Config.BranchDiff: run.diff.ready{scope:
// "branch"} for a run in a worktree.
func (c *Core) branchDiff(ctx context.Context, runID, _ string) (backend.DiffReady, bool, error) {
	b, ok, err := c.branchChanges(ctx, runID)
	if err != nil || !ok {
		return backend.DiffReady{}, false, err
	}
	d := backend.DiffReady{Scope: backend.DiffBranch, Base: b.Base, Target: "worktree", Files: []backend.ChangedFile{}}
	for _, f := range b.Files {
		path := f.New.Path
		if path == "" {
			path = f.Old.Path
		}
		df := backend.ChangedFile{Path: path, Before: hashOrAbsent(f.Old), After: hashOrAbsent(f.New),
			Added: f.Stats.Added, Removed: f.Stats.Deleted}
		switch {
		case !f.Old.Exists:
			df.Operation = "create"
		case !f.New.Exists:
			df.Operation = "delete"
		default:
			df.Operation = "modify"
		}
		switch {
		case f.Binary != nil:
			d.LeftOut = append(d.LeftOut, backend.LeftOutFile{Path: path, Reason: "binary"})
		case f.Omitted != nil:
			d.LeftOut = append(d.LeftOut, backend.LeftOutFile{Path: path, Reason: "too_large"})
		}
		d.Files = append(d.Files, df)
		d.Summary.Files++
		d.Summary.Added += df.Added
		d.Summary.Removed += df.Removed
	}
	return d, true, nil
}

func hashOrAbsent(f diffview.FileInfo) string {
	if !f.Exists {
		return workspace.Absent
	}
	return f.SHA256
}

// CommentInput is a new review comment.
type CommentInput struct {
	RunID        string `json:"runId"`
	ApprovalID   string `json:"approvalId,omitempty"`
	CheckpointID string `json:"checkpointId,omitempty"`
	Path         string `json:"path"`
	StartLine    int    `json:"startLine"`
	EndLine      int    `json:"endLine"`
	Side         string `json:"side,omitempty"`
	Body         string `json:"body"`
}

// Comment stores a reviewer's comment on lines of a change of the run: a
// pending proposal's comments go to the agent with the decision on it. The
// comment is audited with the user as actor.
func (a *ChangesAPI) Comment(in CommentInput) (backend.ReviewComment, error) {
	db, err := a.core.db()
	if err != nil {
		return backend.ReviewComment{}, err
	}
	if err := a.core.writable(); err != nil {
		return backend.ReviewComment{}, err
	}
	ctx := context.Background()
	if in.EndLine == 0 {
		in.EndLine = in.StartLine
	}
	if in.Side == "" {
		in.Side = "new"
	}
	switch {
	case strings.TrimSpace(in.Body) == "":
		return backend.ReviewComment{}, backend.Errorf(backend.CodeInvalidInput, "a comment needs a text")
	case len(in.Body) > store.MaxCommentBytes:
		return backend.ReviewComment{}, backend.Errorf(backend.CodeInvalidInput,
			"a comment is at most %d bytes", store.MaxCommentBytes)
	case in.StartLine < 1 || in.EndLine < in.StartLine:
		return backend.ReviewComment{}, backend.Errorf(backend.CodeInvalidInput,
			"a comment names a line or a range of lines (first ≤ last, from 1)")
	case (in.ApprovalID == "") == (in.CheckpointID == ""):
		return backend.ReviewComment{}, backend.Errorf(backend.CodeInvalidInput,
			"a comment is on a proposed change (its approval) or an applied one (its checkpoint)")
	case in.Side != "new" && in.Side != "old":
		return backend.ReviewComment{}, backend.Errorf(backend.CodeInvalidInput, "side is new or old")
	}
	set, err := a.Get(in.RunID)
	if err != nil {
		return backend.ReviewComment{}, err
	}
	found := false
	for _, ch := range set.Changes {
		if (in.ApprovalID != "" && ch.ApprovalID == in.ApprovalID && ch.Pending) ||
			(in.CheckpointID != "" && ch.CheckpointID == in.CheckpointID) {
			found = found || slices.ContainsFunc(ch.Files, func(f ChangeFile) bool { return f.Path == in.Path })
		}
	}
	if !found {
		return backend.ReviewComment{}, backend.Errorf(backend.CodeNotFound,
			"no pending proposal or applied change of this run changes %s", in.Path)
	}
	by := a.core.By()
	c := backend.ReviewComment{ID: backend.NewID(backend.PrefixComment), RunID: set.RunID, ApprovalID: in.ApprovalID,
		CheckpointID: in.CheckpointID, Path: in.Path, StartLine: in.StartLine, EndLine: in.EndLine, Side: in.Side,
		Body: in.Body, Actor: by.Actor, Surface: by.Surface, CreatedAt: backend.Stamp(nowUTC())}
	_, err = db.Do(ctx, func(tx *store.Tx) error {
		if err := tx.AddComment(c); err != nil {
			return err
		}
		_, err := tx.Audit(backend.AuditEntry{At: c.CreatedAt, Actor: by.Actor, Surface: by.Surface,
			Kind: "review.comment", RunID: c.RunID, Data: map[string]any{"commentId": c.ID,
				"approvalId": c.ApprovalID, "checkpointId": c.CheckpointID, "path": c.Path,
				"startLine": c.StartLine, "endLine": c.EndLine, "side": c.Side}})
		return err
	})
	if err != nil {
		return backend.ReviewComment{}, err
	}
	return c, nil
}

// RevertResult is what a revert restored, per checkpoint, newest first.
type RevertResult struct {
	Reverted []UndoResult `json:"reverted"`
}

// Revert restores the files one applied change of the run wrote
// (checkpointID), or every applied change of the run still in place
// (checkpointID ""), newest first, in the run's own root (its worktree for
// a worktree run). It refuses, naming the files and restoring nothing, when
// any of them changed since. Each restored checkpoint is marked undone and
// audited (patch.undone, with the run).
func (a *ChangesAPI) Revert(runID, checkpointID string) (RevertResult, error) {
	db, err := a.core.db()
	if err != nil {
		return RevertResult{}, err
	}
	if err := a.core.writable(); err != nil {
		return RevertResult{}, err
	}
	set, err := a.Get(runID)
	if err != nil {
		return RevertResult{}, err
	}
	var cks []string
	for _, ch := range slices.Backward(set.Changes) {
		if ch.State == ChangeApplied && (checkpointID == "" || ch.CheckpointID == checkpointID) {
			cks = append(cks, ch.CheckpointID)
		}
	}
	if len(cks) == 0 {
		if checkpointID != "" {
			return RevertResult{}, backend.Errorf(backend.CodeNotFound,
				"no applied change of run %s has checkpoint %s still in place", runID, checkpointID)
		}
		return RevertResult{Reverted: []UndoResult{}}, nil
	}
	root, err := a.core.runRoot(set.RunID, set.WorkspaceID)
	if err != nil {
		return RevertResult{}, err
	}
	fsys, err := workspace.Open(root)
	if err != nil {
		return RevertResult{}, fmt.Errorf("open the run's workspace: %w", err)
	}
	defer fsys.Close()
	ck, err := workspace.NewCheckpointStore(a.core.checkpointDir(), 0)
	if err != nil {
		return RevertResult{}, err
	}
	if err := checkUnchanged(fsys, ck, cks); err != nil {
		return RevertResult{}, undoError(err)
	}
	ctx := context.Background()
	out := RevertResult{Reverted: []UndoResult{}}
	for _, id := range cks {
		res, err := workspace.UndoWith(fsys, ck, id, workspace.Options{
			Journal: undoJournal{ctx: ctx, db: db, workspaceID: set.WorkspaceID}})
		if err != nil {
			return out, undoError(err)
		}
		by := a.core.By()
		scope := "patch"
		if checkpointID == "" {
			scope = "run"
		}
		_, err = db.Do(ctx, func(tx *store.Tx) error {
			if _, err := tx.Audit(backend.AuditEntry{At: backend.Stamp(nowUTC()), Actor: by.Actor,
				Surface: by.Surface, Kind: "patch.undone", RunID: set.RunID, Data: map[string]any{
					"workspaceId": set.WorkspaceID, "checkpointId": id, "undoCheckpointId": res.CheckpointID,
					"files": res.Files, "scope": scope}}); err != nil {
				return err
			}
			_, err := tx.CloseIntent(res.CheckpointID, store.IntentApplied, "undone")
			return err
		})
		if err != nil {
			return out, err
		}
		out.Reverted = append(out.Reverted, UndoResult{CheckpointID: res.CheckpointID, Files: res.Files})
	}
	return out, nil
}

// checkUnchanged refuses a revert of several checkpoints (newest first)
// before any file is touched when a file no longer holds what the newest
// of them wrote: undoing them one by one would otherwise restore some and
// stop at the first that drifted.
func checkUnchanged(fsys *workspace.FS, ck *workspace.CheckpointStore, newestFirst []string) error {
	want := map[string]string{}
	var order []string
	for _, id := range newestFirst {
		m, err := ck.Load(id)
		if err != nil {
			return err
		}
		for _, f := range m.Files {
			if _, ok := want[f.Path]; !ok {
				want[f.Path] = f.Postimage
				order = append(order, f.Path)
			}
		}
	}
	var changed []string
	for _, p := range order {
		data, err := fsys.ReadFile(p)
		switch {
		case err == nil:
			if workspace.Hash(data) != want[p] {
				changed = append(changed, p)
			}
		case errors.Is(err, fs.ErrNotExist):
			if want[p] != workspace.Absent {
				changed = append(changed, p)
			}
		default:
			changed = append(changed, p)
		}
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		return &workspace.FilesError{Err: workspace.ErrChanged, Paths: changed}
	}
	return nil
}
