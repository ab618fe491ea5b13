package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"agenthub/backend"
	"agenthub/backend/store"
)

// A run whose end could not be committed (the disk is full, the database
// read-only) still ends for everyone watching it: its activation is over,
// so nothing else would ever tell them. The engine keeps the end it could
// not record, tells the run's subscribers with a terminal notification that
// is not stored (like system.gap, EV10), answers cancel and status with it,
// and retries the commit on cancel; the next start reconciles the run in
// any case (Recover: run_interrupted).

// unrecordedEnd is a run end that was decided but not committed.
type unrecordedEnd struct {
	state backend.RunState
	end   store.End
	code  backend.FailureCode
	err   error
}

// storageCode names a failed commit's cause for the user.
func storageCode(err error) backend.FailureCode {
	msg := strings.ToLower(err.Error())
	switch {
	case errors.Is(err, syscall.ENOSPC), strings.Contains(msg, "disk is full"), strings.Contains(msg, "no space"):
		return backend.CodeStorageFull
	case errors.Is(err, syscall.EROFS), strings.Contains(msg, "readonly"), strings.Contains(msg, "read-only"):
		return backend.CodeStorageReadOnly
	}
	return backend.FailInternal
}

// endUnrecorded is runEnd's path when the terminal commit failed.
func (rc *runCtl) endUnrecorded(end *ending, err error) {
	u := unrecordedEnd{state: end.state, end: end.end, code: storageCode(err), err: err}
	e := rc.e
	e.unrecMu.Lock()
	if e.unrecorded == nil {
		e.unrecorded = map[string]unrecordedEnd{}
	}
	e.unrecorded[rc.rec.ID] = u
	e.unrecMu.Unlock()
	e.log.Error("run end not recorded; subscribers are told, the next start reconciles it",
		"run_id", rc.rec.ID, "state", end.state, "err", err)
	var seq int64
	if r, rerr := e.store.Run(context.Background(), rc.rec.ID); rerr == nil {
		seq = r.LastSeq + 1
	}
	p := backend.RunEnded{From: backend.RunRunning, DoneReason: "end_not_recorded", Code: u.code,
		Message: u.message(), Next: u.next(), Recovery: backend.Recovery[u.code]}
	raw, _ := json.Marshal(p)
	e.bus.Publish(backend.Event{SchemaVersion: backend.SchemaVersion, ID: backend.NewID(backend.PrefixEvent),
		Sequence: seq, Type: backend.EvRunFailed, RunID: rc.rec.ID, SessionID: rc.rec.SessionID,
		AgentID: rc.rec.AgentID, Timestamp: backend.Stamp(time.Now()), Payload: raw})
}

func (u unrecordedEnd) message() string {
	return fmt.Sprintf("the run ended (%s) but AgentHub could not record its end: %v", u.state, u.err)
}

func (u unrecordedEnd) next() string {
	step := backend.Recovery[u.code]
	if step == "" {
		step = "Check the data directory's disk."
	}
	return step + " Then cancel the run again or restart AgentHub: the run is reconciled at start."
}

// error is what cancel and status answer while the end is not recorded.
func (u unrecordedEnd) error(runID string) error {
	return &backend.Error{Code: u.code, Message: fmt.Sprintf("run %s: %s", runID, u.message()), Next: u.next(),
		Err: u.err}
}

// settleUnrecorded retries recording a run's end that failed to commit, the
// way the next start would (Recover's interrupt).
// ok is false when the run has no such end; err when it still cannot be
// recorded. A run the store already shows as ended needs nothing.
func (e *Engine) settleUnrecorded(ctx context.Context, runID string) (ok bool, err error) {
	e.unrecMu.Lock()
	u, found := e.unrecorded[runID]
	e.unrecMu.Unlock()
	if !found {
		return false, nil
	}
	// As the next start would: every open call paired, Failed(run_interrupted).
	r, cerr := e.store.Run(ctx, runID)
	if cerr == nil && !r.State.Terminal() {
		cerr = e.interrupt(ctx, r)
	}
	if cerr != nil {
		u.err = cerr
		u.code = storageCode(cerr)
		e.unrecMu.Lock()
		e.unrecorded[runID] = u
		e.unrecMu.Unlock()
		return true, u.error(runID)
	}
	e.unrecMu.Lock()
	delete(e.unrecorded, runID)
	e.unrecMu.Unlock()
	return true, nil
}
