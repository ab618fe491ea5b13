package codex

import (
	"slices"
	"time"

	"agenthub/backend/runtime/agentproc"
)

// closeGrace bounds how long a finished CLI may take to exit after its
// input is closed.
const closeGrace = 10 * time.Second

// finish ends a session whose turn is over: the CLI exits when its input
// closes; one that does not is stopped.
func (s *session) finish() {
	agentproc.Finish(s.P, &s.wmu, closeGrace)
	s.drop()
}

// stop ends the session at once (cancel, failure): interrupt, then a
// graceful stop, then kill.
func (s *session) stop() { _ = stopper{s}.Stop(2 * time.Second) }

// stopper is what the run tracks: a cancel, the hard timeout or shutdown
// interrupts the turn, closes Codex's input, and stops the whole process
// group after the grace period; the session is forgotten.
type stopper struct{ s *session }

func (st stopper) Stop(grace time.Duration) error {
	s := st.s
	defer s.drop()
	if s.P == nil {
		return nil
	}
	deadline := time.Now().Add(grace)
	s.Mu.Lock()
	thread, turn, done := s.thread, s.turn, s.turnDone || s.Exited
	var open []*request
	for _, r := range s.reqs {
		if !r.answered && !slices.Contains(open, r) {
			open = append(open, r)
		}
	}
	s.Mu.Unlock()
	for _, r := range open {
		_ = s.answer(r, "cancel")
	}
	if !done && thread != "" && turn != "" {
		_, _, _ = s.request("turn/interrupt", map[string]any{"threadId": thread, "turnId": turn}, false)
		s.waitTurnDone(min(grace/2, 2*time.Second))
	}
	s.wmu.Lock()
	if in := s.P.Stdin(); in != nil {
		_ = in.Close()
	}
	s.wmu.Unlock()
	select {
	case <-s.P.Done():
	case <-time.After(time.Until(deadline)):
	}
	return s.P.Stop(max(time.Until(deadline), 500*time.Millisecond))
}

// waitTurnDone waits at most d for the turn to end or the process to exit.
func (s *session) waitTurnDone(d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.Mu.Lock()
		done, wait := s.turnDone || s.Exited, s.Changed
		s.Mu.Unlock()
		if done {
			return
		}
		select {
		case <-wait:
		case <-timer.C:
			return
		}
	}
}

// waitExited waits (briefly) until watchExit has recorded the exit, so its
// stderr is at hand.
func (s *session) waitExited() {
	timer := time.NewTimer(2 * time.Second)
	defer timer.Stop()
	for {
		s.Mu.Lock()
		exited, wait := s.Exited, s.Changed
		s.Mu.Unlock()
		if exited {
			return
		}
		select {
		case <-wait:
		case <-timer.C:
			return
		}
	}
}
