package engine

import (
	"fmt"
	"sync"
	"time"
)

// handle is one registered active run of a session (CC5).
type handle struct {
	runID  string
	cancel func()
}

// registry maps sessionId → handle. Only the owner clears its entry.
type registry struct {
	mu      sync.Mutex
	entries map[string]*handle
	waiters map[string][]chan struct{}
}

func newRegistry() *registry {
	return &registry{entries: map[string]*handle{}, waiters: map[string][]chan struct{}{}}
}

func (r *registry) register(session string, h *handle) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.entries[session]; ok {
		return fmt.Errorf("session %s already has active run %s", session, cur.runID)
	}
	r.entries[session] = h
	return nil
}

// clear removes the entry only when it still holds h.
func (r *registry) clear(session string, h *handle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries[session] == h {
		delete(r.entries, session)
		r.wakeLocked(session)
	}
}

// forceDetach removes any entry and wakes the waiters.
func (r *registry) forceDetach(session string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.entries, session)
	r.wakeLocked(session)
}

func (r *registry) wakeLocked(session string) {
	for _, ch := range r.waiters[session] {
		close(ch)
	}
	delete(r.waiters, session)
}

func (r *registry) get(session string) (*handle, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.entries[session]
	return h, ok
}

// waitForRunEnd returns true at once when nothing is registered, true when
// the entry is cleared, false on timeout.
func (r *registry) waitForRunEnd(session string, timeout time.Duration) bool {
	r.mu.Lock()
	if _, ok := r.entries[session]; !ok {
		r.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	r.waiters[session] = append(r.waiters[session], ch)
	r.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
