package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"agenthub/backend"
	"agenthub/backend/store"
)

// durable reports whether a profile's runtime keeps its whole state in
// AgentHub's checkpoints (SR11): the built-in loop and playbooks. An agent
// CLI's conversation lives in its process, which a restart loses.
func (p Profile) durable() bool {
	return p.Runtime == "" || p.Runtime == "native" || p.Runtime == "script"
}

// resumable reports whether a run can be resumed from its last checkpoint:
// it was interrupted (a crash or a restart while it ran) and its runtime is
// durable.
func (e *Engine) resumable(r store.RunRecord) bool {
	if r.State != backend.RunFailed || r.FailureCode != backend.FailRunInterrupted || r.ResumedBy != "" {
		return false
	}
	p, ok := e.profile(r.Profile)
	return ok && p.durable()
}

// summary is the API shape of a run record.
func (e *Engine) summary(r store.RunRecord) backend.RunSummary {
	s := r.Summary()
	s.Resumable = e.resumable(r)
	return s
}

// Resume continues an interrupted run from its last checkpoint: a new run
// in the same session, whose transcript is the session's, holding every
// step the interrupted run finished (checkpoints hold whole steps only,
// CK2), and which is told to go on from there. The interrupted run stays
// Failed: terminal states never change. The new run's run.created names
// the run it resumes.
func (e *Engine) Resume(ctx context.Context, runID string, actor string, surface backend.Surface) (backend.RunSummary, error) {
	r, err := e.store.Run(ctx, runID)
	if err != nil {
		return backend.RunSummary{}, err
	}
	if r.State != backend.RunFailed || r.FailureCode != backend.FailRunInterrupted {
		return backend.RunSummary{}, &backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("run %s was not interrupted (it is %s); only an interrupted run can be resumed", r.ID, r.State),
			Next:    "Start a new run with the task instead."}
	}
	if r.ResumedBy != "" { // once: a second resume would run the same commands again
		return backend.RunSummary{}, store.ErrAlreadyResumed(r.ID, r.ResumedBy)
	}
	p, ok := e.profile(r.Profile)
	if !ok || !p.durable() {
		return backend.RunSummary{}, &backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("the runtime of profile %q cannot resume from a checkpoint", r.Profile),
			Next:    "Start a new run with the task instead; the workspace checkpoint can restore files (agenthub undo)."}
	}
	steps, err := e.finishedSteps(ctx, r.ID)
	if err != nil {
		return backend.RunSummary{}, err
	}
	task := r.Task
	if steps > 0 { // the task is in the transcript already, with those steps
		task = fmt.Sprintf("AgentHub resumed this task after an interruption: the previous run finished %d step(s), "+
			"shown above; its unfinished step was lost. Check the workspace, then continue the task: %s", steps, r.Task)
	}
	return e.Start(ctx, StartRequest{WorkspaceID: r.WorkspaceID, SessionID: r.SessionID, Profile: r.Profile,
		Task: task, Actor: actor, Surface: surface, ResumedFrom: r.ID})
}

// finishedSteps is the number of whole steps a run's last checkpoint holds.
func (e *Engine) finishedSteps(ctx context.Context, runID string) (int, error) {
	_, raw, ok, err := e.store.LastCheckpoint(ctx, runID)
	if err != nil || !ok {
		return 0, err
	}
	var ck ckState
	if err := json.Unmarshal(raw, &ck); err != nil {
		return 0, fmt.Errorf("read the checkpoint of run %s: %w", runID, err)
	}
	return ck.Stats.Steps, nil
}
