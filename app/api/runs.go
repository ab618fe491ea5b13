package api

import (
	"context"
	"encoding/json"
	"strings"

	"agenthub/backend"
	"agenthub/backend/engine"
	"agenthub/backend/store"
)

// StartRun is a request for a new run.
type StartRun struct {
	WorkspaceID string `json:"workspaceId"`
	SessionID   string `json:"sessionId,omitempty"` // empty = a new session
	Profile     string `json:"profile,omitempty"`   // empty = the default profile
	Task        string `json:"task"`
	NoQueue     bool   `json:"noQueue,omitempty"` // refuse with active_run_exists instead of queueing
	// Isolation is worktree (the run works in its own git worktree on a new
	// branch from Base, default HEAD) or checkout; "" = the workspace's default.
	Isolation string `json:"isolation,omitempty"`
	Base      string `json:"base,omitempty"`
}

// maxTaskBytes bounds a task's text.
const maxTaskBytes = 64 << 10

// RunsAPI starts, lists, follows and cancels runs.
type RunsAPI struct{ core *Core }

// NewRunsAPI returns the facade.
func NewRunsAPI(c *Core) *RunsAPI { return &RunsAPI{core: c} }

func (r *RunsAPI) engine() (*engine.Engine, error) {
	if _, err := r.core.db(); err != nil {
		return nil, err
	}
	return r.core.engine, nil
}

// Start validates and queues a run; it returns at once with the run Accepted
// (or already further along).
func (r *RunsAPI) Start(in StartRun) (backend.RunSummary, error) {
	e, err := r.engine()
	if err != nil {
		return backend.RunSummary{}, err
	}
	if err := r.core.writable(); err != nil {
		return backend.RunSummary{}, err
	}
	task := strings.TrimSpace(in.Task)
	switch {
	case task == "":
		return backend.RunSummary{}, backend.Errorf(backend.CodeInvalidInput, "describe the task for the agent")
	case len(task) > maxTaskBytes:
		return backend.RunSummary{}, backend.Errorf(backend.CodeInvalidInput, "the task is longer than %d KiB", maxTaskBytes>>10)
	case in.WorkspaceID == "":
		return backend.RunSummary{}, &backend.Error{Code: backend.FailOutsideAllowlist,
			Message: "choose a workspace for the run", Next: "Add a folder to the allowlist first."}
	}
	if err := r.core.refuseMissing(context.Background(), in.WorkspaceID); err != nil {
		return backend.RunSummary{}, err
	}
	by := r.core.By()
	req := engine.StartRequest{WorkspaceID: in.WorkspaceID, SessionID: in.SessionID,
		Profile: in.Profile, Task: task, NoQueue: in.NoQueue, Actor: by.Actor, Surface: by.Surface}
	iso, err := r.core.isolationFor(context.Background(), in.WorkspaceID, in.Profile, in.Isolation)
	if err != nil {
		return backend.RunSummary{}, err
	}
	if iso == IsolationWorktree {
		return r.core.startIsolated(context.Background(), req, in.Base) // worktrees.go
	}
	return e.Start(context.Background(), req)
}

// List returns the runs of a workspace ("" = every workspace), newest
// first.
func (r *RunsAPI) List(workspaceID string) ([]backend.RunSummary, error) {
	e, err := r.engine()
	if err != nil {
		return nil, err
	}
	runs, err := e.Runs(context.Background(), store.RunFilter{WorkspaceID: workspaceID})
	if err != nil {
		return nil, err
	}
	out := make([]backend.RunSummary, 0, len(runs))
	for i := len(runs) - 1; i >= 0; i-- {
		out = append(out, runs[i])
	}
	return out, nil
}

// Get returns one run.
func (r *RunsAPI) Get(id string) (backend.RunSummary, error) {
	e, err := r.engine()
	if err != nil {
		return backend.RunSummary{}, err
	}
	return e.Run(context.Background(), id)
}

// maxEventPage bounds one page of events.
const maxEventPage = 5000

// Events returns a run's committed events with sequence above after, at most
// limit (default and maximum 5,000).
func (r *RunsAPI) Events(id string, after int64, limit int) ([]backend.Event, error) {
	e, err := r.engine()
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > maxEventPage {
		limit = maxEventPage
	}
	evs, err := e.Events(context.Background(), id, after, limit)
	if evs == nil && err == nil {
		evs = []backend.Event{}
	}
	return evs, err
}

// Cancel cancels a run and returns it once terminal; cancelling a finished
// run changes nothing.
func (r *RunsAPI) Cancel(id string) (backend.RunSummary, error) {
	e, err := r.engine()
	if err != nil {
		return backend.RunSummary{}, err
	}
	if err := r.core.writable(); err != nil {
		return backend.RunSummary{}, err
	}
	return e.Cancel(context.Background(), id)
}

// Resume continues an interrupted run from its last checkpoint, as a new
// run in the same session (see engine.Resume); the user of this surface
// starts it.
func (r *RunsAPI) Resume(id string) (backend.RunSummary, error) {
	e, err := r.engine()
	if err != nil {
		return backend.RunSummary{}, err
	}
	if err := r.core.writable(); err != nil {
		return backend.RunSummary{}, err
	}
	if err := refuseImported(r.core, id, "resumed"); err != nil { // export.go
		return backend.RunSummary{}, err
	}
	if run, err := e.Run(context.Background(), id); err == nil {
		if err := r.core.refuseMissing(context.Background(), run.WorkspaceID); err != nil { // missing.go
			return backend.RunSummary{}, err
		}
	}
	by := r.core.By()
	return e.Resume(context.Background(), id, by.Actor, by.Surface)
}

// Subscribe follows a run's events after a cursor (runID "" = every run,
// live only); the channel closes when ctx ends.
func (c *Core) Subscribe(ctx context.Context, runID string, after int64) (<-chan backend.Event, error) {
	if _, err := c.db(); err != nil {
		return nil, err
	}
	if runID != "" {
		if _, err := c.engine.Run(ctx, runID); err != nil {
			return nil, err
		}
	}
	if runID == "" {
		return c.withChanges(ctx, c.engine.Subscribe(ctx, runID, after)), nil
	}
	return c.engine.Subscribe(ctx, runID, after), nil
}

// ApprovalsAPI lists and decides approval requests.
type ApprovalsAPI struct{ core *Core }

// NewApprovalsAPI returns the facade.
func NewApprovalsAPI(c *Core) *ApprovalsAPI { return &ApprovalsAPI{core: c} }

// List returns the pending approvals of every run, the inbox.
func (a *ApprovalsAPI) List() ([]backend.ApprovalRequest, error) { return a.ForRun("") }

// ForRun returns one run's pending approvals ("" = every run).
func (a *ApprovalsAPI) ForRun(runID string) ([]backend.ApprovalRequest, error) {
	if _, err := a.core.db(); err != nil {
		return nil, err
	}
	list, err := a.core.engine.Approvals(context.Background(), runID)
	if list == nil && err == nil {
		list = []backend.ApprovalRequest{}
	}
	return list, err
}

// DecisionOutcome is what a decision led to.
type DecisionOutcome struct {
	Outcome string `json:"outcome"`
}

// Decide records the user's decision. Actor and surface come from the
// core, never from the caller: an approval is the user's act on this
// surface. Delivering the same decision id twice has one effect and
// returns the first outcome.
func (a *ApprovalsAPI) Decide(d backend.Decision) (DecisionOutcome, error) {
	if _, err := a.core.db(); err != nil {
		return DecisionOutcome{}, err
	}
	if err := a.core.writable(); err != nil {
		return DecisionOutcome{}, err
	}
	if d.ApprovalID == "" || d.Kind == "" {
		return DecisionOutcome{}, backend.Errorf(backend.CodeInvalidInput, "a decision needs the approval id and the decision")
	}
	if err := a.checkSelection(d); err != nil {
		return DecisionOutcome{}, err
	}
	by := a.core.By()
	d.Actor, d.Surface = by.Actor, by.Surface
	raw, err := a.core.engine.Decide(context.Background(), d)
	if err != nil {
		return DecisionOutcome{}, err
	}
	var out DecisionOutcome
	if json.Unmarshal([]byte(raw), &out) != nil || out.Outcome == "" {
		out.Outcome = raw
	}
	return out, nil
}
