package engine

import (
	"fmt"

	"agenthub/backend"
	"agenthub/backend/store"
)

// This file is the decision replay of the parallel executors (run-model.md
// EX3): ParallelBatchApproval records decisions as they arrive and replays
// when every suspended call of the step has one, concurrently;
// ParallelStreaming replays each decision at once, concurrently with the
// replays already running. Under both, reject-and-stop and cancel take
// effect at once.

// enterWaiting is the suspension: checkpoint, NeedsApproval, release the
// global slot (SR2).
func (rc *runCtl) enterWaiting() *ending {
	rc.pauseClock()
	err := rc.commit(func(tx *store.Tx) error {
		if _, err := tx.Checkpoint(rc.rec.ID, "suspension", rc.cur.Step,
			ckState{Step: rc.st.Steps, Stats: rc.st, Cur: rc.cur, Executor: rc.p.Executor}); err != nil {
			return err
		}
		_, err := tx.Transition(rc.rec.ID, backend.RunNeedsApproval, "waiting for a decision", nil)
		return err
	})
	if err != nil {
		return failed(backend.FailInternal, "could not record the suspension")
	}
	if rc.holdsGlobal {
		rc.e.lanes.releaseGlobal()
		rc.holdsGlobal = false
	}
	return nil
}

// leaveWaiting takes the global slot again and returns to Running.
func (rc *runCtl) leaveWaiting(why string) *ending {
	if err := rc.reacquire(); err != nil {
		end, _ := rc.cancelled()
		return end
	}
	if err := rc.transition(backend.RunRunning, why); err != nil {
		return failed(backend.FailInternal, "could not record the run state")
	}
	rc.startClock()
	return nil
}

// suspendedCall returns the step's suspended call with this id, or nil (a
// decision for a call that is no longer waiting changes nothing).
func (rc *runCtl) suspendedCall(id string) *callState {
	for _, c := range rc.cur.Calls {
		if c.Req.ID == id && c.Status == backend.CallSuspended {
			return c
		}
	}
	return nil
}

// prepareReplay applies a decision to its call (SR4) up to the execution:
// a rejection settles the call, an approval makes it Resuming and returns
// its plan, verified and recorded like a sequential replay (SR5).
func (rc *runCtl) prepareReplay(d store.StoredDecision) (*plan, *ending) {
	c := rc.suspendedCall(d.ToolCallID)
	if c == nil {
		return nil, nil
	}
	rc.attachReview(c, d) // changeset.go
	if !d.Kind.Approves() {
		return nil, rc.rejected(c, d) // changeset.go
	}
	if err := rc.commit(func(tx *store.Tx) error { return rc.setCall(tx, c, backend.CallResuming, "", false) }); err != nil {
		return nil, failed(backend.FailInternal, "could not record the call")
	}
	if c.ResumeMode == backend.ResumeUseDecisionAsToolResult {
		return nil, rc.finish(c, backend.CallSucceeded, string(d.Payload), false)
	}
	resume := d.Payload
	if len(resume) == 0 || string(resume) == "null" {
		resume = decisionInput(d)
	}
	return &plan{c: c, tool: rc.replayTool(c.Req.Name), resume: resume, verify: true,
		before: func(a *backend.GatedAction) *ending { return rc.keepGrant(d, c, a) }}, nil
}

// waitBatch is ParallelBatchApproval's wait: decisions are collected (they
// are already committed) until every suspended call has one, then all
// replay together. Calls that suspend again start another round. recovered
// is a run that a restart found waiting (recover.go): it is NeedsApproval
// with its suspension checkpoint already, so the first round commits
// neither again.
func (rc *runCtl) waitBatch(recovered bool) *ending {
	for rc.suspended() {
		if !recovered {
			if end := rc.enterWaiting(); end != nil {
				return end
			}
		}
		recovered = false
		decided := map[string]store.StoredDecision{}
		for len(decided) < rc.countSuspended() {
			select {
			case <-rc.ctx.Done():
				end, _ := rc.cancelled()
				return end
			case d := <-rc.decisions:
				if d.Kind == backend.RejectAndStop {
					return rc.endFor(errRejectStop)
				}
				if rc.suspendedCall(d.ToolCallID) != nil {
					decided[d.ToolCallID] = d
				}
			}
		}
		if end := rc.leaveWaiting(fmt.Sprintf("%d decisions", len(decided))); end != nil {
			return end
		}
		var plans []*plan
		for _, c := range rc.cur.Calls { // call order, not arrival order
			d, ok := decided[c.Req.ID]
			if !ok {
				continue
			}
			p, end := rc.prepareReplay(d)
			if end != nil {
				return end
			}
			if p != nil {
				plans = append(plans, p)
			}
		}
		if end := rc.executeAll(plans); end != nil {
			return end
		}
	}
	return nil
}

func (rc *runCtl) countSuspended() int {
	n := 0
	for _, c := range rc.cur.Calls {
		if c.Status == backend.CallSuspended {
			n++
		}
	}
	return n
}
