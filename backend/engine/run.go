package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"agenthub/backend"
	"agenthub/backend/store"
)

// runCtl is one activation of a run: the state the loop works on.
type runCtl struct {
	e    *Engine
	rec  store.RunRecord
	p    Profile
	ctx  context.Context
	stop func(cause error)
	done chan struct{}

	decisions chan store.StoredDecision

	transcript []backend.Message
	msgCount   int
	st         stats
	cur        *stepState
	hk         hookState    // hooks.go
	cx         contextState // what the model sees of transcript (context.go)
	sub        *subRun      // set for a sub-agent run (delegate.go)

	// grants are the run's "approve for this run" grants (AP11), read from
	// the store on first use so that they survive a restart. Only the run's
	// own goroutine touches them.
	grants     []heldGrant
	grantsRead bool

	mu       sync.Mutex
	stoppers []backend.Stopper
	stopOnce sync.Once
	asyncErr error

	h            *handle
	holdsSession bool
	holdsGlobal  bool
	activeSince  time.Time
	timer        *time.Timer
}

// stepState is the current step: the assistant message and its calls.
type stepState struct {
	Step      int             `json:"step"`
	Assistant backend.Message `json:"assistant"`
	Calls     []*callState    `json:"calls"`
	Written   bool            `json:"-"`
}

type callState struct {
	Req        backend.ToolCallRequest `json:"req"`
	Status     backend.CallStatus      `json:"status"`
	Result     string                  `json:"result,omitempty"`
	IsError    bool                    `json:"isError,omitempty"`
	TicketID   string                  `json:"ticketId,omitempty"`
	Subject    string                  `json:"subjectHash,omitempty"`
	ResumeMode backend.ResumeMode      `json:"resumeMode,omitempty"`
	Executed   bool                    `json:"executed,omitempty"`
	// Gate is the kind of the gated action approved for this call (by a
	// reviewer, a grant or a rule); set, the action is verified against
	// Subject right before it executes (AP10).
	Gate backend.ActionKind `json:"gate,omitempty"`
	// Review is the reviewer's line comments delivered with the decision on
	// this call: the agent reads them after the call's result (changeset.go).
	Review string `json:"review,omitempty"`
}

// ckState is what a checkpoint holds beyond the committed messages.
type ckState struct {
	Step  int        `json:"step"`
	Stats stats      `json:"stats"`
	Cur   *stepState `json:"current,omitempty"`
	// Executor is the executor of a suspended step: a restart replays its
	// decisions under it, whatever the profile says by then (EX3, recover.go).
	Executor Executor `json:"executor,omitempty"`
}

// ending is how a run ends.
type ending struct {
	state backend.RunState
	end   store.End
}

func failed(code backend.FailureCode, msg string) *ending {
	return failedNext(code, msg, "")
}

// failedNext is a failure with its own next step ([backend.Error.Next]),
// which the run's failure shows instead of the code's default.
func failedNext(code backend.FailureCode, msg, next string) *ending {
	return &ending{state: backend.RunFailed,
		end: store.End{DoneReason: string(code), Code: code, Message: msg, Next: next}}
}

func (e *Engine) newCtl(rec store.RunRecord, p Profile) *runCtl {
	ctx, cancel := context.WithCancelCause(context.Background())
	rc := &runCtl{e: e, rec: rec, p: p, ctx: ctx, done: make(chan struct{}),
		decisions: make(chan store.StoredDecision, 64)}
	rc.stop = func(cause error) {
		rc.stopOnce.Do(func() {
			cancel(cause)
			rc.mu.Lock()
			stoppers := rc.stoppers
			rc.mu.Unlock()
			for _, s := range stoppers {
				go func() {
					if err := s.Stop(e.cfg.Grace); err != nil {
						e.log.Warn("stop process", "run_id", rec.ID, "err", err)
					}
				}()
			}
		})
	}
	return rc
}

// commit runs one job through the group committer; the run's own context is
// not used, so a cancel never aborts the write that records it.
func (rc *runCtl) commit(fn store.Job) error {
	_, err := rc.e.store.Do(context.Background(), fn)
	return err
}

func (rc *runCtl) transition(to backend.RunState, reason string) error {
	return rc.commit(func(tx *store.Tx) error { _, err := tx.Transition(rc.rec.ID, to, reason, nil); return err })
}

// activate is a fresh run's whole life: lanes, Preparing, the loop, RunEnd.
func (rc *runCtl) activate(w *waiter) {
	defer close(rc.done)
	if err := rc.e.lanes.waitSession(rc.ctx, w); err != nil {
		rc.runEnd(rc.endFor(err))
		return
	}
	rc.holdsSession = true
	if err := rc.e.lanes.acquireGlobal(rc.ctx, rc.rec.ID, false); err != nil {
		rc.runEnd(rc.endFor(err))
		return
	}
	rc.holdsGlobal = true
	rc.runEnd(rc.prepareAndLoop())
}

func (rc *runCtl) prepareAndLoop() *ending {
	if err := rc.transition(backend.RunPreparing, "slots acquired"); err != nil {
		return failed(backend.FailInternal, "could not record the run state")
	}
	rc.h = &handle{runID: rc.rec.ID, cancel: func() { rc.stop(errUserCancel) }}
	if err := rc.e.reg.register(rc.rec.SessionID, rc.h); err != nil {
		rc.h = nil
		return failed(backend.FailInternal, "the session already has an active run")
	}
	if end := rc.gatingEnding(); end != nil { // gating.go: before the runtime starts
		return end
	}
	msgs, err := rc.e.store.Messages(context.Background(), rc.rec.SessionID)
	if err != nil {
		return failed(backend.FailInternal, "could not read the transcript")
	}
	rc.transcript, rc.msgCount = msgs, len(msgs)
	rc.transcript = append(rc.transcript, backend.Message{Role: backend.RoleUser, Text: rc.taskMessage(false)}) // changeset.go
	if err := rc.transition(backend.RunRunning, ""); err != nil {
		return failed(backend.FailInternal, "could not record the run state")
	}
	rc.startClock()
	rc.hookRunStart(false)
	return rc.loop()
}

// detached is the ending of a run stopped by shutdown: no terminal state is
// written, so the next start recovers it (SR10, SR12).
var detached = &ending{}

// endFor maps a stop cause to the run's ending.
func (rc *runCtl) endFor(err error) *ending {
	switch {
	case errors.Is(err, errShutdown):
		return detached
	case errors.Is(err, errTimeout):
		return failed(backend.FailRunTimeout, "the run exceeded its time limit")
	case errors.Is(err, errParentCancel):
		return &ending{state: backend.RunCancelled, end: store.End{DoneReason: backend.DoneParentCancelled}}
	case errors.Is(err, errRejectStop):
		return &ending{state: backend.RunCancelled, end: store.End{DoneReason: backend.DoneApprovalRejected}}
	case errors.Is(err, errUserCancel), errors.Is(err, context.Canceled):
		return &ending{state: backend.RunCancelled, end: store.End{DoneReason: backend.DoneUserCancelled}}
	}
	var be *backend.Error
	if errors.As(err, &be) {
		return failedNext(be.Code, be.Message, be.Next)
	}
	return failed(backend.FailInternal, "an internal error stopped the run")
}

// cancelled returns the ending when the run was stopped, else nil (PH2).
func (rc *runCtl) cancelled() (*ending, bool) {
	if rc.ctx.Err() == nil {
		return nil, false
	}
	return rc.endFor(context.Cause(rc.ctx)), true
}

// startClock (re)arms the hard timeout on the remaining active time (CC8).
func (rc *runCtl) startClock() {
	rc.activeSince = time.Now()
	limit := rc.p.RunTimeout
	if limit <= 0 {
		limit = 30 * time.Minute
	}
	left := limit - time.Duration(rc.st.ActiveMS)*time.Millisecond
	rc.timer = time.AfterFunc(max(left, 0), func() { rc.stop(errTimeout) })
}

// pauseClock stops counting active time (NeedsApproval does not count).
func (rc *runCtl) pauseClock() {
	if rc.timer != nil {
		rc.timer.Stop()
		rc.timer = nil
	}
	if !rc.activeSince.IsZero() {
		rc.st.ActiveMS += time.Since(rc.activeSince).Milliseconds()
		rc.activeSince = time.Time{}
	}
}

// runEnd is RunEnd (CC6): every step is attempted and errors are logged.
// Whatever the run started (an agent CLI's process group) is stopped first,
// on every exit path: completion, failure, reject-and-stop, cancel and
// shutdown alike, so no process outlives its run.
func (rc *runCtl) runEnd(end *ending) {
	rc.stopTracked()
	rc.pauseClock()
	if end != nil && end != detached {
		if ev, ok := runtimeFailure[end.end.Code]; ok && end.state == backend.RunFailed {
			rc.commitLog(func(tx *store.Tx) error {
				p := map[string]any{"code": end.end.Code, "message": end.end.Message}
				if end.end.Next != "" {
					p["next"] = end.end.Next
				}
				_, err := tx.Append(rc.rec.ID, ev, p)
				return err
			})
		}
		rc.runDiff() // changeset.go: what the run changed, before its terminal event
		if err := rc.commit(func(tx *store.Tx) error { return rc.finalTx(tx, end) }); err != nil {
			rc.endUnrecorded(end, err) // unrecorded.go: the surfaces end anyway
		}
	}
	rc.hookRunEnd(end)
	if rc.h != nil {
		rc.e.reg.clear(rc.rec.SessionID, rc.h)
	}
	if rc.holdsGlobal {
		rc.e.lanes.releaseGlobal()
		rc.holdsGlobal = false
	}
	if rc.holdsSession {
		rc.e.lanes.releaseSession(rc.rec.SessionID, rc.rec.ID)
		rc.holdsSession = false
	}
}

// runtimeFailure is the runtime event that precedes run.failed for failures
// of the runtime itself (004: fault triage), so a timeline shows which side
// failed before it shows the end.
var runtimeFailure = map[backend.FailureCode]backend.EventType{
	backend.FailRunTimeout:         backend.EvRuntimeTimeout,
	backend.FailRuntimeUnavailable: backend.EvRuntimeUnavailable,
}

// stopTracked stops every tracked resource and waits for them: each gets
// the grace period, then is killed. Stop is idempotent, so resources a
// cancel already stopped cost nothing.
func (rc *runCtl) stopTracked() {
	rc.mu.Lock()
	stoppers := rc.stoppers
	rc.stoppers = nil
	rc.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range stoppers {
		wg.Go(func() {
			if err := s.Stop(rc.e.cfg.Grace); err != nil {
				rc.e.log.Warn("stop process at run end", "run_id", rc.rec.ID, "err", err)
			}
		})
	}
	wg.Wait()
}

func (rc *runCtl) commitLog(fn store.Job) {
	if err := rc.commit(fn); err != nil {
		rc.e.log.Error("run end commit", "run_id", rc.rec.ID, "err", err)
	}
}

// finalTx pairs every open call, writes the unwritten step, the final
// checkpoint and the terminal event in one transaction (CK2).
func (rc *runCtl) finalTx(tx *store.Tx, end *ending) error {
	if cur := rc.cur; cur != nil && !cur.Written {
		for _, c := range cur.Calls {
			if c.Status.Terminal() {
				continue
			}
			to, text := backend.CallCancelled, "cancelled"
			if c.Status == backend.CallNew && end.state == backend.RunFailed {
				to, text = backend.CallFailed, "interrupted"
			}
			if err := rc.setCall(tx, c, to, text, true); err != nil {
				return err
			}
			if c.TicketID != "" {
				if err := tx.CloseTicket(c.TicketID); err != nil {
					return err
				}
			}
		}
		if err := rc.writeStep(tx); err != nil {
			return err
		}
	}
	if _, err := tx.Checkpoint(rc.rec.ID, "final", rc.st.Steps, ckState{Step: rc.st.Steps, Stats: rc.st}); err != nil {
		return err
	}
	if err := tx.SetStats(rc.rec.ID, rc.st); err != nil {
		return err
	}
	_, err := tx.Transition(rc.rec.ID, end.state, "", &end.end)
	return err
}
