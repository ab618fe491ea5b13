// Package sessions holds the live sessions of a runtime adapter in this
// process, found by session id and by the id of any call a session
// proxied. The engine hands those ids back in the transcript (to a model's
// Stream) and in a call's arguments (to the proxy tools), so the model and
// the tools of a run meet without the engine knowing either. It keeps
// nothing across restarts and knows nothing of what a session is; every
// runtime adapter uses it.
package sessions

import (
	"encoding/json"
	"fmt"
	"sync"

	"agenthub/backend"
)

// Registry maps session and call ids to sessions; safe for concurrent use.
type Registry[S comparable] struct {
	mu    sync.Mutex
	byID  map[string]S // by session id
	calls map[string]S // by call id
}

// New returns an empty registry.
func New[S comparable]() *Registry[S] {
	return &Registry[S]{byID: map[string]S{}, calls: map[string]S{}}
}

// Add registers s under its id and the id of the call that starts it.
func (r *Registry[S]) Add(id, startCallID string, s S) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[id] = s
	r.calls[startCallID] = s
}

// AddCall registers another call s proxied.
func (r *Registry[S]) AddCall(callID string, s S) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[callID] = s
}

// ByID returns the session with id.
func (r *Registry[S]) ByID(id string) (S, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.byID[id]
	return s, ok
}

// ByCall returns the session that proxied the call.
func (r *Registry[S]) ByCall(callID string) (S, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.calls[callID]
	return s, ok
}

// Remove forgets the session id and every call of s.
func (r *Registry[S]) Remove(id string, s S) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byID, id)
	for c, x := range r.calls {
		if x == s {
			delete(r.calls, c)
		}
	}
}

// Find returns the live session of the run a transcript belongs to, or
// the zero S and the task when the run has not started one: the newest
// assistant message names the session through its calls, and a task (a
// user message that is not a steer) after every assistant message means a
// new run. An assistant message none of whose calls is live means the
// session is gone: Find returns gone.
func (r *Registry[S]) Find(msgs []backend.Message, gone error) (S, string, error) {
	var zero S
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		switch {
		case m.Role == backend.RoleAssistant:
			for _, c := range m.Calls {
				if s, ok := r.ByCall(c.ID); ok {
					return s, "", nil
				}
			}
			return zero, "", gone
		case m.Role == backend.RoleUser && !m.Steer:
			return zero, m.Text, nil
		}
	}
	return zero, "", backend.Errorf(backend.FailInternal, "the run has no task")
}

// Call is a model response that makes one call of a runtime's own tool
// (the session tool, say) with args, after text.
func Call(text, id, tool string, args any) (backend.ModelResponse, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return backend.ModelResponse{}, fmt.Errorf("encode the call of %s: %w", tool, err)
	}
	return backend.ModelResponse{Text: text, Calls: []backend.ToolCallRequest{{ID: id, Name: tool, Arguments: b}}}, nil
}

// Replies maps each tool call in msgs to the text of its tool message: what
// the engine told the model about a call it decided without running (a
// rejection, a policy denial), which the adapter passes on to its agent.
func Replies(msgs []backend.Message) map[string]string {
	told := map[string]string{}
	for _, m := range msgs {
		if m.Role == backend.RoleTool {
			told[m.ToolCallID] = m.Text
		}
	}
	return told
}
