package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"agenthub/backend"
	"agenthub/backend/engine"
	"agenthub/backend/store"
	"agenthub/backend/tools"
	"agenthub/diffview"
	"agenthub/workspace"
	"agenthub/workspace/git"
	"agenthub/workspace/worktree"
)

// Isolation modes of a run.
const (
	IsolationCheckout = "checkout" // the run works in the workspace's checkout
	IsolationWorktree = "worktree" // the run works in its own git worktree
)

// isolationKey is the setting holding a workspace's default isolation.
func isolationKey(workspaceID string) string { return "isolation:" + workspaceID }

// worktrees is the manager of this data directory's run worktrees.
func (c *Core) worktrees() *worktree.Manager {
	return &worktree.Manager{Dir: filepath.Join(c.cfg.Home, "worktrees"), Run: tools.GitRunner(),
		Env: git.CLIEnv(os.Environ())}
}

// maxRootHops bounds the chain of sub-agents and resumptions followed to
// the run that owns a worktree.
const maxRootHops = 32

// isolationOwner is the run whose worktree runID works in ("" = none: the
// checkout). A sub-agent works where its parent does and a resumed run where
// the run it resumes did; both are named in the run's run.created event.
func (c *Core) isolationOwner(ctx context.Context, runID string) (string, error) {
	for range maxRootHops {
		if _, err := c.store.Worktree(ctx, runID); err == nil {
			return runID, nil
		} else if !errors.Is(err, backend.ErrNotFound) {
			return "", err
		}
		evs, err := c.store.Events(ctx, runID, 0, 1)
		if err != nil {
			return "", err
		}
		if len(evs) == 0 || evs[0].Type != backend.EvRunCreated {
			return "", nil
		}
		var created struct {
			ParentRunID string `json:"parentRunId"`
			ResumedFrom string `json:"resumedFrom"`
		}
		if err := json.Unmarshal(evs[0].Payload, &created); err != nil {
			return "", fmt.Errorf("read run %s: %w", runID, err)
		}
		next := cmpOr(created.ParentRunID, created.ResumedFrom)
		if next == "" {
			return "", nil
		}
		runID = next
	}
	return "", fmt.Errorf("run %s: more than %d sub-agents or resumptions deep", runID, maxRootHops)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// runRoot is the engine's Config.RunRoots: a run in a worktree works there,
// and fails (never falls back to the checkout) when that worktree is gone.
func (c *Core) runRoot(runID, workspaceID string) (string, error) {
	ctx := context.Background()
	owner, err := c.isolationOwner(ctx, runID)
	if err != nil {
		return "", err
	}
	if owner == "" {
		return c.workspaceRoot(workspaceID)
	}
	rec, err := c.store.Worktree(ctx, owner)
	if err != nil {
		return "", err
	}
	if rec.State == store.WorktreeMerged || rec.State == store.WorktreeDiscarded {
		return "", &backend.Error{Code: backend.CodeConflict,
			Message: fmt.Sprintf("the worktree of run %s was %s", owner, rec.State),
			Next:    "Start a new run; the checkout holds what was merged."}
	}
	p := c.worktrees().Path(owner)
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		return "", &backend.Error{Code: backend.CodeNotFound, Err: err,
			Message: fmt.Sprintf("the worktree of run %s is gone", owner),
			Next:    "Run `agenthub doctor` to see the run's branch; start a new run from it."}
	}
	return p, nil
}

// isolationFor resolves the isolation a start asks for: the request's, else
// the profile's (isolation in its file), else the workspace's default, else
// the checkout.
func (c *Core) isolationFor(ctx context.Context, workspaceID, profile, asked string) (string, error) {
	if asked == "" {
		list, _ := c.prof.get()
		for _, p := range list {
			if p.Name == profile || (profile == "" && p.Default) {
				asked = p.Isolation
			}
		}
	}
	if asked == "" {
		v, ok, err := c.store.Setting(ctx, isolationKey(workspaceID))
		if err != nil {
			return "", err
		}
		if !ok {
			return IsolationCheckout, nil
		}
		asked = v
	}
	if asked != IsolationCheckout && asked != IsolationWorktree {
		return "", backend.Errorf(backend.CodeInvalidInput, "unknown isolation %q: use worktree or checkout", asked)
	}
	return asked, nil
}

// startIsolated creates the run's worktree and records it before the run
// exists, so no step of the run can see the checkout as its root; a start
// that fails removes the (still clean) worktree again.
func (c *Core) startIsolated(ctx context.Context, req engine.StartRequest, base string) (backend.RunSummary, error) {
	ws, err := c.store.Workspace(ctx, req.WorkspaceID)
	if err != nil {
		return backend.RunSummary{}, err
	}
	req.RunID = backend.NewID(backend.PrefixRun)
	m := c.worktrees()
	wt, err := m.Create(ctx, ws.Path, req.RunID, base)
	if err != nil {
		return backend.RunSummary{}, &backend.Error{Code: backend.CodeInvalidInput, Err: err,
			Message: "could not create the run's worktree: " + scrubPaths(err.Error(), ws.Path, m.Dir),
			Next:    "The workspace must be a git repository with at least one commit; check the base."}
	}
	by := c.By()
	_, err = c.store.Do(ctx, func(tx *store.Tx) error {
		if err := tx.AddWorktree(store.WorktreeRecord{RunID: wt.ID, WorkspaceID: ws.ID, Branch: wt.Branch,
			Base: wt.Base}); err != nil {
			return err
		}
		_, err := tx.Audit(backend.AuditEntry{Actor: by.Actor, Surface: by.Surface, Kind: "worktree.created",
			RunID: wt.ID, Data: map[string]any{"workspaceId": ws.ID, "branch": wt.Branch, "base": wt.Base}})
		return err
	})
	if err == nil {
		var sum backend.RunSummary
		if sum, err = c.engine.Start(ctx, req); err == nil {
			return sum, nil
		}
	}
	if rmErr := m.Remove(ctx, ws.Path, wt, false, worktree.State{}); rmErr != nil {
		c.log.Warn("remove the worktree of a run that did not start", "run_id", wt.ID, "err", rmErr)
	} else if _, dbErr := c.store.Do(ctx, func(tx *store.Tx) error {
		return tx.SetWorktreeState(wt.ID, store.WorktreeDiscarded, "the run did not start")
	}); dbErr != nil && !errors.Is(dbErr, backend.ErrNotFound) {
		c.log.Warn("record the worktree of a run that did not start", "run_id", wt.ID, "err", dbErr)
	}
	return backend.RunSummary{}, err
}

// scrubPaths keeps absolute machine paths out of a message.
func scrubPaths(s string, paths ...string) string {
	for _, p := range paths {
		if p != "" {
			s = strings.ReplaceAll(s, p, "…")
		}
	}
	return s
}

// WorktreesAPI shows, merges, keeps, discards and pushes run worktrees.
type WorktreesAPI struct{ core *Core }

// NewWorktreesAPI returns the facade.
func NewWorktreesAPI(c *Core) *WorktreesAPI { return &WorktreesAPI{core: c} }

// WorktreeView is a worktree with what it holds that exists nowhere else.
type WorktreeView struct {
	store.WorktreeRecord
	worktree.State
	// Token names this exact listing of unsaved work: a discard confirms it.
	Token string `json:"token,omitempty"`
}

func stateToken(st worktree.State) string {
	b, _ := json.Marshal([]any{st.Uncommitted, st.Unmerged})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// located is a worktree with its checkout, for the calls that act on it.
type located struct {
	rec      store.WorktreeRecord
	wt       worktree.Worktree
	checkout string
	ws       backend.Workspace
}

func (w *WorktreesAPI) locate(ctx context.Context, runID string) (located, error) {
	db, err := w.core.db()
	if err != nil {
		return located{}, err
	}
	rec, err := db.Worktree(ctx, runID)
	if err != nil {
		return located{}, err
	}
	ws, err := db.Workspace(ctx, rec.WorkspaceID)
	if err != nil {
		return located{}, err
	}
	m := w.core.worktrees()
	return located{rec: rec, ws: ws, checkout: ws.Path,
		wt: worktree.Worktree{ID: rec.RunID, Path: m.Path(rec.RunID), Branch: rec.Branch, Base: rec.Base}}, nil
}

// closed reports whether the worktree was merged or discarded: nothing is
// left to act on.
func (l located) closed() bool {
	return l.rec.State == store.WorktreeMerged || l.rec.State == store.WorktreeDiscarded
}

func (l located) closedError() error {
	return &backend.Error{Code: backend.CodeConflict,
		Message: fmt.Sprintf("the worktree of run %s was already %s", l.rec.RunID, l.rec.State)}
}

// Get returns a run's worktree and its unsaved work.
func (w *WorktreesAPI) Get(runID string) (WorktreeView, error) {
	ctx := context.Background()
	l, err := w.locate(ctx, runID)
	if err != nil {
		return WorktreeView{}, err
	}
	return w.view(ctx, l)
}

func (w *WorktreesAPI) view(ctx context.Context, l located) (WorktreeView, error) {
	v := WorktreeView{WorktreeRecord: l.rec}
	if l.closed() {
		return v, nil
	}
	st, err := w.core.worktrees().State(ctx, l.checkout, l.wt)
	if err != nil {
		return v, w.gitError(err, l)
	}
	v.State, v.Token = st, stateToken(st)
	return v, nil
}

func (w *WorktreesAPI) gitError(err error, l located) error {
	return &backend.Error{Code: backend.FailInternal, Err: err,
		Message: "git failed on the run's worktree: " + scrubPaths(err.Error(), l.checkout, w.core.worktrees().Dir)}
}

// List returns the worktrees of a workspace ("" = every workspace) that are
// not merged or discarded, with their unsaved work.
func (w *WorktreesAPI) List(workspaceID string) ([]WorktreeView, error) {
	db, err := w.core.db()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	recs, err := db.Worktrees(ctx, workspaceID, store.WorktreeActive, store.WorktreeKept)
	if err != nil {
		return nil, err
	}
	out := make([]WorktreeView, 0, len(recs))
	for _, r := range recs {
		l, err := w.locate(ctx, r.RunID)
		if err != nil {
			return nil, err
		}
		v, err := w.view(ctx, l)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// SetDefaultIsolation makes mode the isolation of the workspace's runs that
// ask for none.
func (w *WorktreesAPI) SetDefaultIsolation(workspaceID, mode string) error {
	db, err := w.core.db()
	if err != nil {
		return err
	}
	ctx := context.Background()
	if _, err := db.Workspace(ctx, workspaceID); err != nil {
		return err
	}
	if mode != IsolationCheckout && mode != IsolationWorktree {
		return backend.Errorf(backend.CodeInvalidInput, "unknown isolation %q: use worktree or checkout", mode)
	}
	return db.SetSetting(ctx, isolationKey(workspaceID), mode)
}

// ended refuses an act on the worktree of a run that is still going.
func (w *WorktreesAPI) ended(ctx context.Context, l located) error {
	if err := w.core.writable(); err != nil {
		return err
	}
	if l.closed() {
		return l.closedError()
	}
	r, err := w.core.store.Run(ctx, l.rec.RunID)
	if err != nil {
		return err
	}
	if !r.State.Terminal() {
		return &backend.Error{Code: backend.CodeConflict,
			Message: fmt.Sprintf("run %s is still %s", l.rec.RunID, r.State),
			Next:    "Wait for the run to end, or cancel it, then merge, keep or discard its worktree."}
	}
	return nil
}

// Keep ends a worktree run's isolation but keeps its branch for the user:
// the directory goes when it holds no uncommitted work, else it stays too.
func (w *WorktreesAPI) Keep(runID string) (WorktreeView, error) {
	ctx := context.Background()
	l, err := w.locate(ctx, runID)
	if err != nil {
		return WorktreeView{}, err
	}
	if err := w.ended(ctx, l); err != nil {
		return WorktreeView{}, err
	}
	outcome := "kept as branch " + l.rec.Branch
	var ue *worktree.UnsavedError
	switch err := w.core.worktrees().Remove(ctx, l.checkout, l.wt, true, worktree.State{}); {
	case errors.As(err, &ue):
		outcome += "; the directory stays: " + ue.State.Describe()
	case err != nil:
		return WorktreeView{}, w.gitError(err, l)
	}
	if err := w.record(ctx, l, store.WorktreeKept, "worktree.kept", outcome, nil); err != nil {
		return WorktreeView{}, err
	}
	return w.Get(runID)
}

// Discard removes a worktree run's directory and branch. Work that exists
// nowhere else is removed only when confirm is the token of its listing
// (from [WorktreesAPI.Get] or the refusal); otherwise the refusal, code
// worktree_unsaved, lists it.
func (w *WorktreesAPI) Discard(runID, confirm string) (WorktreeView, error) {
	ctx := context.Background()
	l, err := w.locate(ctx, runID)
	if err != nil {
		return WorktreeView{}, err
	}
	if err := w.ended(ctx, l); err != nil {
		return WorktreeView{}, err
	}
	m := w.core.worktrees()
	st, err := m.State(ctx, l.checkout, l.wt)
	if err != nil {
		return WorktreeView{}, w.gitError(err, l)
	}
	var confirmed worktree.State
	if !st.Clean() && confirm == stateToken(st) {
		confirmed = st
	}
	err = m.Remove(ctx, l.checkout, l.wt, false, confirmed)
	var ue *worktree.UnsavedError
	if errors.As(err, &ue) {
		return WorktreeView{}, unsavedError(ue.State)
	}
	if err != nil {
		return WorktreeView{}, w.gitError(err, l)
	}
	data := map[string]any{"uncommitted": st.Uncommitted, "commits": st.Unmerged, "head": st.Head}
	if err := w.record(ctx, l, store.WorktreeDiscarded, "worktree.discarded", "discarded", data); err != nil {
		return WorktreeView{}, err
	}
	return w.Get(runID)
}

func unsavedError(st worktree.State) error {
	return &backend.Error{Code: backend.CodeWorktreeUnsaved, Detail: stateToken(st),
		Message: "the worktree holds work that exists nowhere else: " + st.Describe(),
		Next:    "Keep it as a branch, merge it, or confirm discarding exactly this work with token " + stateToken(st) + "."}
}

// record moves the worktree's row and audits the act with its actor.
func (w *WorktreesAPI) record(ctx context.Context, l located, state, kind, outcome string, data map[string]any) error {
	by := w.core.By()
	if data == nil {
		data = map[string]any{}
	}
	data["workspaceId"], data["branch"], data["outcome"] = l.rec.WorkspaceID, l.rec.Branch, outcome
	_, err := w.core.store.Do(ctx, func(tx *store.Tx) error {
		if err := tx.SetWorktreeState(l.rec.RunID, state, outcome); err != nil {
			return err
		}
		_, err := tx.Audit(backend.AuditEntry{Actor: by.Actor, Surface: by.Surface, Kind: kind,
			RunID: l.rec.RunID, Data: data})
		return err
	})
	return err
}

// Merge statuses of one file.
const (
	MergeApply    = "apply"    // brings the run's change into the checkout
	MergeConflict = "conflict" // the checkout changed where the run did
	MergeSame     = "same"     // the checkout already holds the run's version
	MergeSkipped  = "skipped"  // not a regular file, or too big: not merged
)

// MergeFile is one file of a merge: the run's change against its base, and
// how it meets the checkout now.
type MergeFile struct {
	Path     string              `json:"path"`
	Status   string              `json:"status"`
	Reason   string              `json:"reason,omitempty"`
	Checkout string              `json:"checkout"` // SHA-256 of the checkout's file now, or "absent"
	Base     string              `json:"base"`
	After    string              `json:"after"`
	Diff     diffview.FileDiff   `json:"diff"` // base → the run's version, hunk by hunk
	fc       worktree.FileChange `json:"-"`
	current  []byte
}

// MergePlan is what merging a worktree run would do to the checkout now.
// Token binds it: a merge names the token of the plan it was shown.
type MergePlan struct {
	RunID  string      `json:"runId"`
	Branch string      `json:"branch"`
	Base   string      `json:"base"`
	Files  []MergeFile `json:"files"`
	Token  string      `json:"token"`
}

func hashOf(data []byte, exists bool) string {
	if !exists {
		return workspace.Absent
	}
	return workspace.Hash(data)
}

// MergePlan computes the merge of a run's worktree into the checkout.
func (w *WorktreesAPI) MergePlan(runID string) (MergePlan, error) {
	ctx := context.Background()
	l, err := w.locate(ctx, runID)
	if err != nil {
		return MergePlan{}, err
	}
	return w.plan(ctx, l)
}

func (w *WorktreesAPI) plan(ctx context.Context, l located) (MergePlan, error) {
	if l.closed() {
		return MergePlan{}, l.closedError()
	}
	changes, err := w.core.worktrees().Changes(ctx, l.wt)
	if err != nil {
		return MergePlan{}, w.gitError(err, l)
	}
	fsys, err := workspace.Open(l.checkout)
	if err != nil {
		return MergePlan{}, fmt.Errorf("open workspace %s: %w", l.ws.DisplayPath, err)
	}
	defer fsys.Close()
	p := MergePlan{RunID: l.rec.RunID, Branch: l.rec.Branch, Base: l.rec.Base, Files: []MergeFile{}}
	for _, fc := range changes {
		mf := MergeFile{Path: fc.Path, fc: fc, Base: hashOf(fc.Before, fc.BeforeExists),
			After: hashOf(fc.After, fc.AfterExists)}
		cur, err := fsys.ReadFile(fc.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			mf.Checkout = workspace.Absent
		case err != nil:
			mf.Checkout, mf.Status, mf.Reason = "unreadable", MergeConflict, "the checkout's file cannot be read: "+
				scrubPaths(err.Error(), l.checkout)
		default:
			mf.Checkout, mf.current = workspace.Hash(cur), cur
		}
		if mf.Status == "" {
			classify(&mf)
		}
		p.Files = append(p.Files, mf)
	}
	p.Token = planToken(p)
	return p, nil
}

// classify decides how one file of the run meets the checkout.
func classify(mf *MergeFile) {
	fc := mf.fc
	if fc.Skipped != "" {
		mf.Status, mf.Reason = MergeSkipped, fc.Skipped
		return
	}
	// What the run's commands left under .git, .agenthub (the checkout's
	// policy) or in a secret file never reaches the checkout: Apply would
	// refuse it anyway, and the refusal would sink the whole merge.
	if class := workspace.Classify(fc.Path); class != workspace.ClassNone {
		mf.Status, mf.Reason = MergeSkipped, fmt.Sprintf("a protected file (%s): never merged", class)
		return
	}
	d, err := diffview.Diff(sideOf(fc.Path, fc.Before, fc.BeforeExists), sideOf(fc.Path, fc.After, fc.AfterExists),
		diffview.Options{})
	if err == nil {
		mf.Diff = d
	}
	switch mf.Checkout {
	case mf.After:
		mf.Status = MergeSame
	case mf.Base:
		mf.Status = MergeApply
	default:
		// The checkout moved: the run's hunks still apply when every line
		// they touch is unchanged where they touch it (no fuzz).
		if _, err := mergedContent(*mf, nil); err == nil {
			mf.Status, mf.Reason = MergeApply, "the checkout changed since the base, away from the run's hunks"
		} else {
			mf.Status, mf.Reason = MergeConflict, "the checkout changed since the base where the run changed it"
		}
	}
}

// sideOf is one side of a file's diff; diffview writes an absent file as a
// side without a path.
func sideOf(path string, data []byte, exists bool) diffview.Side {
	if !exists {
		return diffview.Side{}
	}
	return diffview.Side{Path: path, Content: data}
}

// mergedContent is the checkout's file with the selected hunks of the run's
// change (nil = all) applied; delete is true when the result is no file.
func mergedContent(mf MergeFile, hunks []int) ([]byte, error) {
	fc := mf.fc
	if mf.Checkout == mf.Base && hunks == nil {
		return fc.After, nil
	}
	if !mf.Diff.IsText() {
		if hunks != nil {
			return nil, fmt.Errorf("%s is not text: it merges whole or not at all", mf.Path)
		}
		return nil, fmt.Errorf("%s: %w", mf.Path, diffview.ErrConflict)
	}
	if mf.Checkout == workspace.Absent && fc.BeforeExists || mf.Checkout != workspace.Absent && !fc.BeforeExists {
		return nil, fmt.Errorf("%s exists on one side only: %w", mf.Path, diffview.ErrConflict)
	}
	d := mf.Diff
	if hunks != nil {
		var err error
		if d, err = diffview.Select(d, hunks); err != nil {
			return nil, err
		}
	}
	d.Old.SHA256, d.New.SHA256 = "", "" // applied to the checkout's content, checked line by line
	return diffview.Apply(mf.current, d)
}

func planToken(p MergePlan) string {
	type bound struct{ Path, Status, Checkout, Base, After string }
	bs := make([]bound, len(p.Files))
	for i, f := range p.Files {
		bs[i] = bound{f.Path, f.Status, f.Checkout, f.Base, f.After}
	}
	b, _ := json.Marshal(struct {
		Run   string
		Files []bound
	}{p.RunID, bs})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// MergeSelection names one file of a merge and, optionally, its hunks
// (indexes into the plan's diff; none = the whole file).
type MergeSelection struct {
	Path  string `json:"path"`
	Hunks []int  `json:"hunks,omitempty"`
}

// MergeRequest is an approved merge: the token of the plan shown and the
// files chosen from it (none = every file to apply).
type MergeRequest struct {
	Token string           `json:"token"`
	Files []MergeSelection `json:"files,omitempty"`
}

// MergeResult is what a merge wrote into the checkout.
type MergeResult struct {
	CheckpointID string                 `json:"checkpointId,omitempty"` // undo restores the checkout
	Files        []workspace.FileResult `json:"files"`
	// Cleaned is true when nothing of the run is left to merge: its
	// worktree and branch were removed.
	Cleaned   bool   `json:"cleaned"`
	Remaining int    `json:"remaining"` // files of the run the checkout does not hold yet
	State     string `json:"state"`
}

// Merge brings the chosen part of a run's change set into the checkout as
// one approved patch bound to the checkout's hashes in the plan shown: a plan
// that no longer matches (the checkout or the worktree moved) is a conflict
// and nothing is written. When the checkout then holds every file of the
// run, the worktree and its branch are removed.
func (w *WorktreesAPI) Merge(runID string, req MergeRequest) (MergeResult, error) {
	ctx := context.Background()
	l, err := w.locate(ctx, runID)
	if err != nil {
		return MergeResult{}, err
	}
	if err := w.ended(ctx, l); err != nil {
		return MergeResult{}, err
	}
	p, err := w.plan(ctx, l)
	if err != nil {
		return MergeResult{}, err
	}
	if req.Token != p.Token {
		return MergeResult{}, &backend.Error{Code: backend.CodeConflict, Detail: "merge_moved",
			Message: "the checkout or the run's worktree changed since this merge was shown; nothing was written",
			Next:    "Show the merge again (agenthub worktree merge RUN) and approve what it shows now."}
	}
	changes, err := mergeChanges(p, req.Files)
	if err != nil {
		return MergeResult{}, err
	}
	fsys, err := workspace.Open(l.checkout)
	if err != nil {
		return MergeResult{}, fmt.Errorf("open workspace %s: %w", l.ws.DisplayPath, err)
	}
	defer fsys.Close()
	ck, err := workspace.NewCheckpointStore(w.core.checkpointDir(), 0)
	if err != nil {
		return MergeResult{}, err
	}
	res, err := workspace.ApplyWith(fsys, changes, ck, workspace.Options{
		Journal: mergeJournal{ctx: ctx, db: w.core.store, workspaceID: l.ws.ID}})
	if errors.Is(err, workspace.ErrConflict) {
		return MergeResult{}, &backend.Error{Code: backend.CodeConflict, Detail: "merge_moved", Err: err,
			Message: "the checkout changed while the merge was applied; nothing was written",
			Next:    "Show the merge again and approve what it shows now."}
	}
	if err != nil {
		return MergeResult{}, fmt.Errorf("merge run %s: %w", runID, err)
	}
	by := w.core.By()
	_, err = w.core.store.Do(ctx, func(tx *store.Tx) error {
		if _, err := tx.Audit(backend.AuditEntry{Actor: by.Actor, Surface: by.Surface, Kind: "worktree.merged",
			RunID: runID, Data: map[string]any{"workspaceId": l.ws.ID, "branch": l.rec.Branch,
				"checkpointId": res.CheckpointID, "files": res.Files, "token": p.Token}}); err != nil {
			return err
		}
		_, err := tx.CloseIntent(res.CheckpointID, store.IntentApplied, "merged from "+l.rec.Branch)
		return err
	})
	if err != nil {
		return MergeResult{}, err
	}
	out := MergeResult{CheckpointID: res.CheckpointID, Files: res.Files, State: l.rec.State}
	return w.cleanIfMerged(ctx, l, out)
}

// mergeChanges turns the chosen files of a plan into whole-file changes
// bound to the checkout's hashes in the plan.
func mergeChanges(p MergePlan, sel []MergeSelection) ([]workspace.Change, error) {
	byPath := map[string]MergeFile{}
	for _, f := range p.Files {
		byPath[f.Path] = f
	}
	if len(sel) == 0 {
		for _, f := range p.Files {
			if f.Status == MergeApply {
				sel = append(sel, MergeSelection{Path: f.Path})
			}
		}
	}
	if len(sel) == 0 {
		return nil, backend.Errorf(backend.CodeInvalidInput, "nothing to merge: no file of the run applies to the checkout")
	}
	var out []workspace.Change
	seen := map[string]bool{}
	for _, s := range sel {
		f, ok := byPath[s.Path]
		switch {
		case !ok:
			return nil, backend.Errorf(backend.CodeInvalidInput, "%s is not in the run's change set", s.Path)
		case seen[s.Path]:
			return nil, backend.Errorf(backend.CodeInvalidInput, "%s is chosen twice", s.Path)
		case f.Status != MergeApply:
			return nil, &backend.Error{Code: backend.CodeConflict, Detail: "merge_" + f.Status,
				Message: fmt.Sprintf("%s cannot be merged: %s (%s)", f.Path, f.Status, f.Reason),
				Next:    "Leave it out, or edit the checkout's file by hand from the run's branch."}
		}
		seen[s.Path] = true
		data, err := mergedContent(f, s.Hunks)
		if err != nil {
			return nil, &backend.Error{Code: backend.CodeConflict, Detail: "merge_conflict", Err: err,
				Message: fmt.Sprintf("%s: the chosen hunks do not apply to the checkout", f.Path)}
		}
		c := workspace.Change{Path: f.Path, PreimageSHA256: f.Checkout, NewContent: data, Mode: f.fc.Mode}
		if !f.fc.AfterExists && (s.Hunks == nil || len(s.Hunks) == len(f.Diff.Hunks)) {
			c.Delete, c.NewContent = true, nil
		}
		out = append(out, c)
	}
	return out, nil
}

// cleanIfMerged removes the worktree and its branch once the checkout holds
// every file of the run (nothing skipped or left): the run's work is then
// in the checkout, and the removal confirms exactly the listing it read.
func (w *WorktreesAPI) cleanIfMerged(ctx context.Context, l located, out MergeResult) (MergeResult, error) {
	p, err := w.plan(ctx, l)
	if err != nil {
		return out, err
	}
	for _, f := range p.Files {
		if f.Status != MergeSame {
			out.Remaining++
		}
	}
	if out.Remaining > 0 {
		return out, nil
	}
	m := w.core.worktrees()
	st, err := m.State(ctx, l.checkout, l.wt)
	if err != nil {
		return out, w.gitError(err, l)
	}
	if err := m.Remove(ctx, l.checkout, l.wt, false, st); err != nil {
		// The merge stands; the worktree stays listed for a later discard.
		slog.Warn("clean up a merged worktree", "run_id", l.rec.RunID, "err", err)
		return out, nil
	}
	data := map[string]any{"head": st.Head, "commits": st.Unmerged}
	if err := w.record(ctx, l, store.WorktreeMerged, "worktree.cleaned", "merged into the checkout", data); err != nil {
		return out, err
	}
	out.Cleaned, out.State = true, store.WorktreeMerged
	return out, nil
}

// mergeJournal records a merge as an intent before it touches a file.
type mergeJournal struct {
	ctx         context.Context
	db          *store.Store
	workspaceID string
}

func (j mergeJournal) Intend(in workspace.Intent) error {
	rec := store.Intent{ID: in.ID, WorkspaceID: j.workspaceID, Op: in.Op, Staging: in.Staging}
	for _, f := range in.Files {
		rec.Files = append(rec.Files, store.IntentFile{Path: f.Path, Before: f.Before, After: f.After})
	}
	_, err := j.db.Do(j.ctx, func(tx *store.Tx) error { return tx.OpenIntent(rec) })
	return err
}

func (j mergeJournal) Abandon(id string, v workspace.Verdict, cause error) {
	_, err := j.db.Do(j.ctx, func(tx *store.Tx) error {
		_, err := tx.CloseIntent(id, string(v), "the merge failed: "+cause.Error())
		return err
	})
	if err != nil {
		slog.Warn("merge: close intent", "intent_id", id, "err", err)
	}
}

// PlanPush shows what pushing a run's branch to remote would send.
func (w *WorktreesAPI) PlanPush(runID, remote string) (worktree.PushPlan, error) {
	ctx := context.Background()
	l, err := w.locate(ctx, runID)
	if err != nil {
		return worktree.PushPlan{}, err
	}
	p, err := w.core.worktrees().PlanPush(ctx, l.checkout, l.wt, remote)
	if err != nil {
		return worktree.PushPlan{}, &backend.Error{Code: backend.CodeInvalidInput, Err: err,
			Message: scrubPaths(err.Error(), l.checkout, w.core.worktrees().Dir),
			Next:    "Name a remote configured in the checkout (git remote -v)."}
	}
	return p, nil
}

// Push performs exactly the push shown (the user's approval): the branch
// must still be at plan.To and the remote at plan.From. It is audited with
// the user as actor.
func (w *WorktreesAPI) Push(runID string, plan worktree.PushPlan) (worktree.PushPlan, error) {
	ctx := context.Background()
	l, err := w.locate(ctx, runID)
	if err != nil {
		return plan, err
	}
	if err := w.core.writable(); err != nil {
		return plan, err
	}
	if plan.Branch != l.rec.Branch {
		return plan, backend.Errorf(backend.CodeInvalidInput, "the plan pushes %s, not the run's branch %s",
			plan.Branch, l.rec.Branch)
	}
	err = w.core.worktrees().Push(ctx, l.checkout, plan)
	if errors.Is(err, worktree.ErrMoved) {
		return plan, &backend.Error{Code: backend.CodeConflict, Detail: "push_moved", Err: err,
			Message: "the branch or the remote moved since the push was shown; nothing was pushed",
			Next:    "Show the push again and approve what it shows now."}
	}
	if err != nil {
		return plan, w.gitError(err, l)
	}
	by := w.core.By()
	hashes := make([]string, len(plan.Commits))
	for i, c := range plan.Commits {
		hashes[i] = c.Hash
	}
	_, err = w.core.store.Do(ctx, func(tx *store.Tx) error {
		_, err := tx.Audit(backend.AuditEntry{Actor: by.Actor, Surface: by.Surface, Kind: "git.pushed",
			RunID: runID, Data: map[string]any{"workspaceId": l.ws.ID, "remote": plan.Remote,
				"branch": plan.Branch, "from": plan.From, "to": plan.To, "commits": hashes}})
		return err
	})
	return plan, err
}

// unknownWorktrees lists run worktrees git records for a checkout that
// AgentHub has no open row for (left by a crash or by hand).
func (w *WorktreesAPI) unknownWorktrees(ctx context.Context, ws backend.Workspace) ([]worktree.Entry, error) {
	entries, err := w.core.worktrees().List(ctx, ws.Path)
	if err != nil {
		return nil, err
	}
	recs, err := w.core.store.Worktrees(ctx, ws.ID, store.WorktreeActive, store.WorktreeKept)
	if err != nil {
		return nil, err
	}
	var out []worktree.Entry
	for _, e := range entries {
		if !slices.ContainsFunc(recs, func(r store.WorktreeRecord) bool { return r.Branch == e.Branch }) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Unknown returns, per workspace name, the run worktrees git records that
// AgentHub does not list as open (doctor shows them).
func (w *WorktreesAPI) Unknown() (map[string][]worktree.Entry, error) {
	db, err := w.core.db()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	wss, err := db.Workspaces(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]worktree.Entry{}
	for _, ws := range wss {
		es, err := w.unknownWorktrees(ctx, ws)
		if err != nil {
			continue // not a git repository: no worktrees
		}
		if len(es) > 0 {
			out[ws.Name] = es
		}
	}
	return out, nil
}
