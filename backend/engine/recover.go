package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"agenthub/backend"
	"agenthub/backend/store"
)

// Recover runs once at start (SR10–SR12): the intents a dead process left
// open are reconciled with the disk first (intent.go); then runs that were preparing, running
// or applying end Failed(run_interrupted) with every open call paired;
// waiting runs of durable runtimes reclaim their session slot and wait for a
// decision under the same run id; queued runs are re-enqueued in order.
func (e *Engine) Recover(ctx context.Context) error {
	if err := e.reconcileIntents(ctx); err != nil { // intent.go: before any run takes events again
		return err
	}
	live := []backend.RunState{backend.RunCreated, backend.RunPlanned, backend.RunAccepted, backend.RunPreparing,
		backend.RunRunning, backend.RunApplying, backend.RunNeedsApproval}
	runs, err := e.store.Runs(ctx, store.RunFilter{States: live})
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	for _, r := range runs {
		p, known := e.profile(r.Profile)
		p.Name = r.Profile
		switch {
		case r.Surface == backend.SurfaceEngine:
			// A sub-agent (delegate.go) cannot continue without the parent
			// call that waited for it, and its restricted tools are not
			// persisted: it ends run_interrupted like its parent's call.
			if err := e.interrupt(ctx, r); err != nil {
				return err
			}
		case r.State == backend.RunNeedsApproval && known && p.durable():
			if err := e.resumeWaiting(ctx, r, p); err != nil {
				return err
			}
		case r.State == backend.RunNeedsApproval, r.State == backend.RunPreparing, r.State == backend.RunRunning,
			r.State == backend.RunApplying:
			if err := e.interrupt(ctx, r); err != nil {
				return err
			}
		default:
			if err := e.requeue(ctx, r, p, known); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *Engine) interrupt(ctx context.Context, r store.RunRecord) error {
	calls, err := e.store.Calls(ctx, r.ID)
	if err != nil {
		return err
	}
	said, err := e.intentOutcomes(ctx, r.ID)
	if err != nil {
		return err
	}
	_, err = e.store.Do(ctx, func(tx *store.Tx) error {
		for _, c := range calls {
			if c.Status.Terminal() {
				continue
			}
			to := backend.CallFailed
			if c.Status == backend.CallSuspended {
				to = backend.CallCancelled
			}
			c.Status = to
			content := "interrupted" + said[c.ID]
			c.Result, _ = json.Marshal(map[string]any{"content": content, "isError": true})
			if err := tx.PutCall(c); err != nil {
				return err
			}
			if _, err := tx.Append(r.ID, backend.EvToolResult, map[string]any{"toolCallId": c.ID, "status": to,
				"content": content, "isError": true}); err != nil {
				return err
			}
			if c.TicketID != "" {
				if err := tx.CloseTicket(c.TicketID); err != nil {
					return err
				}
			}
		}
		_, err := tx.Transition(r.ID, backend.RunFailed, "recovery", &store.End{
			DoneReason: string(backend.FailRunInterrupted), Code: backend.FailRunInterrupted,
			Message: "AgentHub stopped while this run was active"})
		return err
	})
	if err != nil {
		return fmt.Errorf("recover run %s: %w", r.ID, err)
	}
	return nil
}

func (e *Engine) requeue(ctx context.Context, r store.RunRecord, p Profile, known bool) error {
	if !known {
		_, err := e.store.Do(ctx, func(tx *store.Tx) error {
			_, err := tx.Transition(r.ID, backend.RunFailed, "recovery", &store.End{
				DoneReason: string(backend.FailRuntimeUnavailable), Code: backend.FailRuntimeUnavailable,
				Message: "the run's profile is not configured"})
			return err
		})
		return err
	}
	_, err := e.store.Do(ctx, func(tx *store.Tx) error {
		for _, to := range []backend.RunState{backend.RunPlanned, backend.RunAccepted} {
			if _, err := tx.Transition(r.ID, to, "re-enqueued after restart", nil); err != nil &&
				r.State != backend.RunAccepted {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("requeue run %s: %w", r.ID, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	rc := e.newCtl(r, p)
	w := e.lanes.enqueue(r.SessionID, r.ID)
	e.spawn(rc, func() { rc.activate(w) })
	return nil
}

// resumeWaiting rehydrates a waiting run from its suspension checkpoint.
func (e *Engine) resumeWaiting(ctx context.Context, r store.RunRecord, p Profile) error {
	_, raw, ok, err := e.store.LastCheckpoint(ctx, r.ID)
	if err != nil || !ok {
		return e.interrupt(ctx, r)
	}
	var ck ckState
	if err := json.Unmarshal(raw, &ck); err != nil || ck.Cur == nil {
		return e.interrupt(ctx, r)
	}
	msgs, err := e.store.Messages(ctx, r.SessionID)
	if err != nil {
		return err
	}
	decided, err := e.decided(ctx, ck.Cur)
	if err != nil {
		return fmt.Errorf("recover run %s: %w", r.ID, err)
	}
	if ck.Executor != "" && ck.Executor.Valid() {
		p.Executor = ck.Executor // the run's executor, even if the profile changed since (EX3)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	rc := e.newCtl(r, p)
	rc.st, rc.cur = ck.Stats, ck.Cur
	// The task message is stored with the run's first step (writeStep): only
	// a run that has not finished a step yet gets it appended again.
	rc.transcript, rc.msgCount = msgs, len(msgs)
	if ck.Stats.Steps == 0 {
		rc.transcript = append(rc.transcript, backend.Message{Role: backend.RoleUser, Text: rc.taskMessage(true)}) // changeset.go
	}
	rc.decisions = make(chan store.StoredDecision, cap(rc.decisions)+len(decided))
	for _, d := range decided {
		rc.decisions <- d
	}
	e.lanes.claim(r.SessionID, r.ID)
	rc.holdsSession = true
	rc.h = &handle{runID: r.ID, cancel: func() { rc.stop(errUserCancel) }}
	_ = e.reg.register(r.SessionID, rc.h)
	e.spawn(rc, func() {
		defer close(rc.done)
		rc.runEnd(rc.waitRecovered())
	})
	return nil
}

// decided returns the decisions committed for the step's Suspended calls
// that the previous process did not live to apply. A decision is durable once
// committed (SR3), and a run still in NeedsApproval has applied none since
// its last suspension checkpoint: applying one first commits the move to
// Running.
func (e *Engine) decided(ctx context.Context, cur *stepState) ([]store.StoredDecision, error) {
	var out []store.StoredDecision
	_, err := e.store.Do(ctx, func(tx *store.Tx) error {
		for _, c := range cur.Calls {
			if c.Status != backend.CallSuspended || c.TicketID == "" {
				continue
			}
			d, ok, err := tx.DecisionFor(c.TicketID)
			if err != nil {
				return err
			}
			if ok {
				if string(d.Payload) == "null" { // stored for "no payload"
					d.Payload = nil
				}
				out = append(out, d)
			}
		}
		return nil
	})
	return out, err
}

// waitRecovered waits in NeedsApproval without re-committing the state,
// then replays under the run's executor (EX3): the parallel executors take
// over the wait itself (decisions committed before the restart are already
// queued), so ParallelBatchApproval still replays only when every
// suspended call has a decision, and ParallelStreaming replays each at
// once, beside the others. Sequential applies one decision here.
func (rc *runCtl) waitRecovered() *ending {
	rc.hookRunStart(true)
	switch rc.p.Executor {
	case ExecParallelBatch, ExecParallelStreaming:
		wait := rc.waitBatch
		if rc.p.Executor == ExecParallelStreaming {
			wait = rc.waitStreaming
		}
		if end := wait(true); end != nil {
			return end
		}
		return rc.loop() // the step's StepEnd, then the next step
	}
	var d store.StoredDecision
	select {
	case <-rc.ctx.Done():
		end, _ := rc.cancelled()
		return end
	case d = <-rc.decisions:
	}
	if d.Kind == backend.RejectAndStop {
		return rc.endFor(errRejectStop)
	}
	if err := rc.e.lanes.acquireGlobal(rc.ctx, rc.rec.ID, true); err != nil {
		end, _ := rc.cancelled()
		return end
	}
	rc.holdsGlobal = true
	if err := rc.transition(backend.RunRunning, "decision "+d.DecisionID); err != nil {
		return failed(backend.FailInternal, "could not record the run state")
	}
	rc.startClock()
	if end := rc.apply(d); end != nil {
		return end
	}
	return rc.loop()
}
