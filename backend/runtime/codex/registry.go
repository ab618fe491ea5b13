package codex

import (
	"os"
	"sync"
)

// registry holds the live sessions of this process. A session is found by
// the id of a call it proxied: the engine hands those back in the
// transcript (to Stream) and in the call's arguments (to the tools), so the
// model and the tools of a run meet without the engine knowing either.
type registry struct {
	mu       sync.Mutex
	sessions map[string]*session // by session id
	calls    map[string]*session // by call id
}

var live = &registry{sessions: map[string]*session{}, calls: map[string]*session{}}

func (r *registry) add(s *session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessions[s.id] = s
	r.calls[s.startCallID()] = s
}

func (r *registry) addCall(callID string, s *session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[callID] = s
}

func (r *registry) byID(id string) (*session, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	return s, ok
}

func (r *registry) byCall(callID string) (*session, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.calls[callID]
	return s, ok
}

func (r *registry) remove(s *session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.sessions, s.id)
	for id, x := range r.calls {
		if x == s {
			delete(r.calls, id)
		}
	}
}

func homeDir() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}
