package engine

import (
	"context"
	"slices"
	"sync"
)

// lanes implements CC1–CC3: one FIFO slot per session, then a global pool.
// A run always takes its session slot first, then a global slot; resumed
// runs re-enter the global queue ahead of runs that have not started.
type lanes struct {
	mu       sync.Mutex
	limit    int
	active   int // global slots held
	sessions map[string]*sessionLane
	gq       []*waiter
	// draining is set at quit: nothing is granted any more (CC4).
	draining bool
	observe  func(active int, sessionsBusy map[string]int) // test hook, called under mu
}

type sessionLane struct {
	held  bool
	owner string
	queue []*waiter
}

type waiter struct {
	runID   string
	session string
	ready   chan struct{}
	granted bool
}

func newLanes(limit int) *lanes {
	if limit < 1 {
		limit = 1
	}
	return &lanes{limit: limit, sessions: map[string]*sessionLane{}}
}

// enqueue reserves a run's place in its session lane, synchronously, so
// submission order is FIFO order.
func (l *lanes) enqueue(session, runID string) *waiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := &waiter{runID: runID, session: session, ready: make(chan struct{})}
	sl := l.lane(session)
	sl.queue = append(sl.queue, w)
	l.grantSessions(sl)
	return w
}

// claim marks a session slot held without queueing (recovered waiting runs, SR10).
func (l *lanes) claim(session, runID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sl := l.lane(session)
	sl.held, sl.owner = true, runID
}

func (l *lanes) lane(s string) *sessionLane {
	sl := l.sessions[s]
	if sl == nil {
		sl = &sessionLane{}
		l.sessions[s] = sl
	}
	return sl
}

// drain stops every grant. On quit, a run that releases its slot does not
// hand it on, so queued runs stay Accepted in SQLite and are re-enqueued at
// the next start (CC4, SR12) instead of starting while the engine stops.
func (l *lanes) drain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.draining = true
}

func (l *lanes) grantSessions(sl *sessionLane) {
	if l.draining || sl.held || len(sl.queue) == 0 {
		return
	}
	w := sl.queue[0]
	sl.queue = sl.queue[1:]
	sl.held, sl.owner, w.granted = true, w.runID, true
	close(w.ready)
}

// waitSession blocks until w holds its session slot or ctx ends (then the
// reservation is withdrawn and only it: CC3).
func (l *lanes) waitSession(ctx context.Context, w *waiter) error {
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.granted {
		l.releaseSessionLocked(w.session, w.runID)
	} else {
		sl := l.lane(w.session)
		sl.queue = slices.DeleteFunc(sl.queue, func(x *waiter) bool { return x == w })
	}
	return context.Cause(ctx)
}

func (l *lanes) releaseSession(session, runID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseSessionLocked(session, runID)
}

func (l *lanes) releaseSessionLocked(session, runID string) {
	sl := l.lane(session)
	if !sl.held || sl.owner != runID {
		return
	}
	sl.held, sl.owner = false, ""
	l.grantSessions(sl)
	if !sl.held && len(sl.queue) == 0 {
		delete(l.sessions, session)
	}
	l.notify()
}

// busy reports the run holding a session's slot, if any, and whether runs queue.
func (l *lanes) busy(session string) (owner string, busy bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sl := l.sessions[session]
	if sl == nil {
		return "", false
	}
	return sl.owner, sl.held || len(sl.queue) > 0
}

// acquireGlobal waits for a global slot; resumed runs go ahead of new ones.
func (l *lanes) acquireGlobal(ctx context.Context, runID string, resumed bool) error {
	l.mu.Lock()
	w := &waiter{runID: runID, ready: make(chan struct{})}
	if resumed {
		i := slices.IndexFunc(l.gq, func(x *waiter) bool { return x.session != "resumed" })
		if i < 0 {
			i = len(l.gq)
		}
		w.session = "resumed"
		l.gq = slices.Insert(l.gq, i, w)
	} else {
		l.gq = append(l.gq, w)
	}
	l.grantGlobal()
	l.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.granted {
		l.active--
		l.grantGlobal()
	} else {
		l.gq = slices.DeleteFunc(l.gq, func(x *waiter) bool { return x == w })
	}
	return context.Cause(ctx)
}

func (l *lanes) grantGlobal() {
	for !l.draining && l.active < l.limit && len(l.gq) > 0 {
		w := l.gq[0]
		l.gq = l.gq[1:]
		l.active++
		w.granted = true
		close(w.ready)
	}
	l.notify()
}

func (l *lanes) releaseGlobal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.active--
	l.grantGlobal()
}

func (l *lanes) notify() {
	if l.observe == nil {
		return
	}
	busy := map[string]int{}
	for s, sl := range l.sessions {
		if sl.held {
			busy[s]++
		}
	}
	l.observe(l.active, busy)
}
