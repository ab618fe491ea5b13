package engine

import (
	"agenthub/backend"
	"agenthub/backend/store"
)

// streaming is ParallelStreaming's wait (EX3): each decision is applied as
// it arrives and its replay starts at once, while earlier replays may still
// run. The run is NeedsApproval only while nothing runs and a call waits;
// it is Applying while any gated replay runs. Only this loop's goroutine
// commits; replays only execute.
type streaming struct {
	rc       *runCtl
	done     chan replayDone
	inflight int // replays executing
	applying int // of which gated actions
	waiting  bool
}

type replayDone struct {
	p   *plan
	out execOut
}

// waitStreaming runs the wait; recovered is a run a restart found waiting
// (recover.go), which is NeedsApproval with its checkpoint already.
func (rc *runCtl) waitStreaming(recovered bool) *ending {
	s := &streaming{rc: rc, done: make(chan replayDone), waiting: recovered}
	end := s.loop()
	s.drain() // no replay outlives the wait; unrecorded ones are paired at RunEnd
	return end
}

func (s *streaming) loop() *ending {
	rc := s.rc
	for {
		if s.inflight == 0 {
			if !rc.suspended() {
				return nil
			}
			if !s.waiting {
				if end := rc.enterWaiting(); end != nil {
					return end
				}
				s.waiting = true
			}
		}
		select {
		case <-rc.ctx.Done():
			end, _ := rc.cancelled()
			return end
		case d := <-rc.decisions:
			if end := s.decide(d); end != nil {
				return end
			}
		case r := <-s.done:
			if end := s.finish(r); end != nil {
				return end
			}
		}
	}
}

// decide applies one decision: reject-and-stop stops the run and its
// running replays at once; an approval starts the call's replay.
func (s *streaming) decide(d store.StoredDecision) *ending {
	rc := s.rc
	if d.Kind == backend.RejectAndStop {
		rc.stop(errRejectStop)
		return rc.endFor(errRejectStop)
	}
	if rc.suspendedCall(d.ToolCallID) == nil {
		return nil
	}
	if s.waiting {
		if end := rc.leaveWaiting("decision " + d.DecisionID); end != nil {
			return end
		}
		s.waiting = false
	}
	p, end := rc.prepareReplay(d)
	if end != nil || p == nil {
		return end
	}
	if ok, end := rc.check(p); end != nil || !ok {
		return end
	}
	enter := p.gated() && s.applying == 0
	if err := rc.commit(func(tx *store.Tx) error { return rc.startTx(tx, []*plan{p}, enter) }); err != nil {
		return failed(backend.FailInternal, "could not record the call")
	}
	if p.gated() {
		s.applying++
	}
	s.inflight++
	go func() { s.done <- replayDone{p: p, out: rc.run(p)} }()
	return nil
}

// finish records one replay's result, leaving Applying with the last gated
// one.
func (s *streaming) finish(r replayDone) *ending {
	s.inflight--
	leave := false
	if r.p.gated() {
		s.applying--
		leave = s.applying == 0
	}
	err := s.rc.commit(func(tx *store.Tx) error {
		return s.rc.finishTx(tx, []*plan{r.p}, []execOut{r.out}, leave)
	})
	if err != nil {
		return failed(backend.FailInternal, "could not record the tool result")
	}
	return nil
}

func (s *streaming) drain() {
	for s.inflight > 0 {
		<-s.done
		s.inflight--
	}
}
