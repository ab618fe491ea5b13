package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/store"
	"agenthub/diffview"
	"agenthub/workspace"
)

// The change set (issue 18): run.patch.proposed for every proposal put to
// the gate, and run.diff.ready at the end of each turn that applied a patch
// and at the end of a run that changed files, so that surfaces other than
// the approval dialog can show what a run proposes and what it changed.

// proposalTx appends run.patch.proposed for a write or patch action, in the
// transaction that suspends or approves it: the proposal is visible exactly
// when its approval (or its approval by policy) is. Other kinds propose no
// change to files and append nothing.
func (rc *runCtl) proposalTx(tx *store.Tx, c *callState, a backend.GatedAction, hash, approvalID string) error {
	p, ok := proposalOf(c.Req.Name, a)
	if !ok {
		return nil
	}
	p.ToolCallID, p.ApprovalID, p.SubjectHash = c.Req.ID, approvalID, hash
	p.Resolver = "reviewer"
	if approvalID == "" {
		// No approval holds the diff: the proposal carries it.
		p.Resolver, p.Preview = "policy", json.RawMessage(orNull(a.Preview))
	}
	_, err := tx.Append(rc.rec.ID, backend.EvPatchProposed, p)
	return err
}

// proposalOf reads the affected files and their pre-image hashes from a
// write or patch action's subject (which the reviewer's decision is bound
// to), and the operation from its preview when it names one.
func proposalOf(tool string, a backend.GatedAction) (backend.PatchProposed, bool) {
	if a.Kind != backend.ActionPatch && a.Kind != backend.ActionWrite {
		return backend.PatchProposed{}, false
	}
	var subj struct {
		Tool      string              `json:"tool"`
		Path      string              `json:"path"`
		Paths     []string            `json:"paths"`
		Preimages []approval.Preimage `json:"preimages"`
		Files     []approval.Preimage `json:"files"`
		Postimage string              `json:"postimage"`
	}
	var pv struct {
		Operation string `json:"operation"`
	}
	_ = json.Unmarshal(a.Subject, &subj) // a subject of another shape names no files
	_ = json.Unmarshal(a.Preview, &pv)
	p := backend.PatchProposed{Tool: tool, Files: []backend.ProposedFile{}}
	if subj.Tool != "" {
		p.Tool = subj.Tool
	}
	seen := map[string]bool{}
	add := func(f backend.ProposedFile) {
		if f.Path == "" || seen[f.Path] {
			return
		}
		seen[f.Path] = true
		p.Files = append(p.Files, f)
	}
	for _, f := range append(subj.Preimages, subj.Files...) {
		pf := backend.ProposedFile{Path: f.Path, Preimage: f.SHA256}
		if f.Path == subj.Path {
			pf.Operation, pf.Postimage = pv.Operation, subj.Postimage
		}
		add(pf)
	}
	for _, path := range append([]string{subj.Path}, subj.Paths...) {
		add(backend.ProposedFile{Path: path, Operation: pv.Operation})
	}
	return p, true
}

// appliedPatch is what run.diff.ready reads of a run.patch.applied (every
// runtime's payload names its checkpoint and files).
type appliedPatch struct {
	CheckpointID string `json:"checkpointId"`
	Files        []struct {
		Path      string `json:"path"`
		Preimage  string `json:"preimage"`
		Postimage string `json:"postimage"`
	} `json:"files"`
}

// turnDiff appends run.diff.ready{scope:"turn"} for the patches applied
// since the last turn's diff (read from the store, so that a restarted run
// neither loses nor repeats a turn). A turn that applied nothing appends
// nothing. Failures are logged: the diff is a view, never the run's fate.
func (rc *runCtl) turnDiff(step int) {
	rc.diffReady(backend.DiffTurn, step, true)
}

// runDiff appends run.diff.ready{scope:"run"} (and "branch" for a run in a
// worktree) before the run's terminal event.
func (rc *runCtl) runDiff() {
	rc.diffReady(backend.DiffRun, 0, false)
	if rc.e.cfg.BranchDiff == nil || rc.sub != nil {
		return
	}
	d, ok, err := rc.e.cfg.BranchDiff(context.WithoutCancel(rc.ctx), rc.rec.ID, rc.rec.WorkspaceID)
	if err != nil {
		rc.e.log.Warn("branch diff", "run_id", rc.rec.ID, "err", err)
		return
	}
	if ok {
		d.Scope = backend.DiffBranch
		rc.commitLog(func(tx *store.Tx) error { _, err := tx.Append(rc.rec.ID, backend.EvDiffReady, d); return err })
	}
}

func (rc *runCtl) diffReady(scope backend.DiffScope, step int, sinceLast bool) {
	ctx := context.WithoutCancel(rc.ctx) // a cancelled run still says what it changed
	applied, err := rc.e.store.EventsOfType(ctx, rc.rec.ID, backend.EvPatchApplied)
	if err != nil || len(applied) == 0 {
		if err != nil {
			rc.e.log.Warn("diff ready: read applied patches", "run_id", rc.rec.ID, "err", err)
		}
		return
	}
	if sinceLast {
		prev, err := rc.e.store.EventsOfType(ctx, rc.rec.ID, backend.EvDiffReady)
		if err != nil {
			rc.e.log.Warn("diff ready: read earlier diffs", "run_id", rc.rec.ID, "err", err)
			return
		}
		var last int64
		for _, ev := range prev {
			var d backend.DiffReady
			if json.Unmarshal(ev.Payload, &d) == nil && d.Scope == backend.DiffTurn {
				last = ev.Sequence
			}
		}
		applied = slices.DeleteFunc(applied, func(ev backend.Event) bool { return ev.Sequence <= last })
		if len(applied) == 0 {
			return
		}
	}
	var patches []appliedPatch
	for _, ev := range applied {
		var p appliedPatch
		if json.Unmarshal(ev.Payload, &p) == nil && p.CheckpointID != "" {
			patches = append(patches, p)
		}
	}
	if len(patches) == 0 {
		return
	}
	root, err := rc.runRoot()
	if err != nil {
		rc.e.log.Warn("diff ready: run root", "run_id", rc.rec.ID, "err", err)
		return
	}
	d := summarise(root, rc.e.cfg.Checkpoints, patches)
	d.Scope, d.Step = scope, step
	rc.commitLog(func(tx *store.Tx) error { _, err := tx.Append(rc.rec.ID, backend.EvDiffReady, d); return err })
}

// summarise compares, per file, the pre-image of its first apply in
// patches with the file as it is in root now.
func summarise(root, ckDir string, patches []appliedPatch) backend.DiffReady {
	d := backend.DiffReady{Base: patches[0].CheckpointID, Target: "workspace", Files: []backend.ChangedFile{}}
	type first struct{ ck, pre string }
	firsts := map[string]first{}
	var order []string
	for _, p := range patches {
		d.Checkpoints = append(d.Checkpoints, p.CheckpointID)
		for _, f := range p.Files {
			if _, ok := firsts[f.Path]; !ok && f.Path != "" {
				firsts[f.Path] = first{p.CheckpointID, f.Preimage}
				order = append(order, f.Path)
			}
		}
	}
	slices.Sort(order)
	var ck *workspace.CheckpointStore
	if ckDir != "" {
		ck, _ = workspace.NewCheckpointStore(ckDir, 0) // nil: every file is left out as unreadable
	}
	w, werr := workspace.Open(root)
	if werr == nil {
		defer w.Close()
	}
	for _, path := range order {
		f := firsts[path]
		df := backend.ChangedFile{Path: path, Before: f.pre, After: workspace.Absent}
		var before, after []byte
		var reason string
		if f.pre != workspace.Absent && f.pre != "" {
			if ck == nil {
				reason = "unreadable"
			} else if b, err := ck.Blob(f.pre); err != nil {
				reason = "unreadable"
			} else {
				before = b
			}
		}
		if werr != nil {
			reason = "unreadable"
		} else if b, err := w.ReadFile(path); err == nil {
			after, df.After = b, workspace.Hash(b)
		} else if errors.Is(err, workspace.ErrTooLarge) {
			reason, df.After = "too_large", ""
		} else if !isNotExist(err) {
			reason, df.After = "unreadable", ""
		}
		switch {
		case df.Before == df.After:
			continue // changed and changed back: nothing to review
		case df.Before == workspace.Absent:
			df.Operation = "create"
		case df.After == workspace.Absent:
			df.Operation = "delete"
		default:
			df.Operation = "modify"
		}
		if reason == "" {
			var oldSide, newSide diffview.Side
			if df.Before != workspace.Absent {
				oldSide = diffview.Side{Path: path, Content: before}
			}
			if df.After != workspace.Absent {
				newSide = diffview.Side{Path: path, Content: after}
			}
			fd, err := diffview.Diff(oldSide, newSide, diffview.Options{NoWords: true})
			switch {
			case err != nil:
				reason = "unreadable"
			case fd.Binary != nil:
				reason = "binary"
			case fd.Omitted != nil:
				reason = "too_large"
			default:
				df.Added, df.Removed = fd.Stats.Added, fd.Stats.Deleted
			}
		}
		if reason != "" {
			d.LeftOut = append(d.LeftOut, backend.LeftOutFile{Path: path, Reason: reason})
		}
		d.Files = append(d.Files, df)
		d.Summary.Files++
		d.Summary.Added += df.Added
		d.Summary.Removed += df.Removed
	}
	return d
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// deliverComments binds the reviewer's comments on an approval to the
// decision on it, in the decision's transaction, with an audit entry that
// names them (so the digest chain covers what the agent was told).
func deliverComments(tx *store.Tx, tk store.Ticket, sd store.StoredDecision) error {
	list, err := tx.DeliverComments(tk.ID, sd.DecisionID)
	if err != nil || len(list) == 0 {
		return err
	}
	ids := make([]string, len(list))
	for i, c := range list {
		ids[i] = c.ID
	}
	_, err = tx.Audit(backend.AuditEntry{Actor: sd.Actor, Surface: sd.Surface, Kind: "review.comments",
		RunID: tk.RunID, ToolCallID: tk.ToolCallID, SubjectHash: tk.SubjectHash,
		Data: map[string]any{"approvalId": tk.ID, "decisionId": sd.DecisionID, "commentIds": ids,
			"comments": list}})
	return err
}

// attachReview sets the text the agent reads of the comments delivered with
// d, read back from the store so that a run restarted between the decision
// and its replay still delivers them.
func (rc *runCtl) attachReview(c *callState, d store.StoredDecision) {
	list, err := rc.e.store.CommentsDelivered(context.WithoutCancel(rc.ctx), d.DecisionID)
	if err != nil {
		rc.e.log.Warn("review comments", "run_id", rc.rec.ID, "decision_id", d.DecisionID, "err", err)
		return
	}
	c.Review = reviewText(list)
}

// reviewText is how the agent reads line comments: after the tool result,
// one line per comment, each naming its file and lines.
func reviewText(list []backend.ReviewComment) string {
	if len(list) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nReviewer comments on this change:")
	for _, c := range list {
		lines := fmt.Sprintf("line %d", c.StartLine)
		if c.EndLine > c.StartLine {
			lines = fmt.Sprintf("lines %d-%d", c.StartLine, c.EndLine)
		}
		if c.Side == "old" {
			lines += " (before the change)"
		}
		fmt.Fprintf(&b, "\n- %s %s: %s", c.Path, lines, c.Body)
	}
	return b.String()
}

// rejected settles a call the reviewer rejected; a rejected write or patch
// also gets run.patch.rejected{reason:"reviewer"}, in the same commit, so
// that the change set shows the proposal as rejected.
func (rc *runCtl) rejected(c *callState, d store.StoredDecision) *ending {
	err := rc.commit(func(tx *store.Tx) error {
		if err := rc.setCall(tx, c, backend.CallCancelled, "rejected by the reviewer: "+d.Reason, true); err != nil {
			return err
		}
		if c.Gate != backend.ActionPatch && c.Gate != backend.ActionWrite {
			return nil
		}
		_, err := tx.Append(rc.rec.ID, backend.EvPatchRejected, map[string]any{"toolCallId": c.Req.ID,
			"approvalId": c.TicketID, "reason": "reviewer", "decisionId": d.DecisionID})
		return err
	})
	if err != nil {
		return failed(backend.FailInternal, "could not record the tool result")
	}
	return nil
}

// withCallID names the call in the patch events its tool emits, so that an
// applied or partly rejected patch is matched to its proposal.
func withCallID(typ backend.EventType, payload any, callID string) any {
	m, ok := payload.(map[string]any)
	if !ok || (typ != backend.EvPatchApplied && typ != backend.EvPatchRejected) {
		return payload
	}
	if _, has := m["toolCallId"]; has {
		return payload
	}
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out["toolCallId"] = callID
	return out
}

// taskMessage is a run's first message: its task, then the reviewer's
// comments on changes earlier runs of the session applied that no agent has
// read yet (the "next message of the session"). They are marked delivered
// with this run, so a run recovered before its first step reads the same
// comments again (delivered reads them back by the run's id).
func (rc *runCtl) taskMessage(recovered bool) string {
	ctx := context.WithoutCancel(rc.ctx)
	var list []backend.ReviewComment
	var err error
	if recovered {
		list, err = rc.e.store.CommentsDelivered(ctx, rc.rec.ID)
	} else {
		_, err = rc.e.store.Do(ctx, func(tx *store.Tx) error {
			var err error
			list, err = tx.DeliverSessionComments(rc.rec.SessionID, rc.rec.ID)
			if err != nil || len(list) == 0 {
				return err
			}
			ids := make([]string, len(list))
			for i, c := range list {
				ids[i] = c.ID
			}
			_, err = tx.Audit(backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine,
				Kind: "review.comments", RunID: rc.rec.ID,
				Data: map[string]any{"runId": rc.rec.ID, "commentIds": ids, "comments": list}})
			return err
		})
	}
	if err != nil {
		rc.e.log.Warn("review comments of the session", "run_id", rc.rec.ID, "err", err)
	}
	if len(list) == 0 {
		return rc.rec.Task
	}
	return rc.rec.Task + strings.Replace(reviewText(list), "on this change:", "on changes made earlier in this session:", 1)
}
