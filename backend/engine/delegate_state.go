package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"agenthub/backend"
)

// setStateTool is the child's tool for its registered state keys.
const setStateTool = "set_state"

// childState is a child's state keys (SA3, SA6): only registered keys,
// seeded before the first step, exported only from a Completed child. Every
// registered key is persistent.
type childState struct {
	keys []string
	mu   sync.Mutex
	vals map[string]json.RawMessage
}

func newChildState(keys []string) *childState {
	return &childState{keys: keys, vals: map[string]json.RawMessage{}}
}

// seed applies the parent's seed; an unregistered key is an error and
// nothing is applied.
func (s *childState) seed(seed map[string]json.RawMessage) error {
	for k := range seed {
		if !slices.Contains(s.keys, k) {
			return fmt.Errorf("the state seed sets %q, which the sub-agent's profile does not register (state_keys: %v)", k, s.keys)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.Copy(s.vals, seed)
	return nil
}

func (s *childState) set(k string, v json.RawMessage) error {
	if !slices.Contains(s.keys, k) {
		return fmt.Errorf("%q is not a state key of this agent; its keys are %v", k, s.keys)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vals[k] = v
	return nil
}

func (s *childState) export() map[string]json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.vals) == 0 {
		return nil
	}
	return maps.Clone(s.vals)
}

// childSource offers a child the allowed tools of its profile's own source
// and, when it registers state keys, set_state.
type childSource struct {
	inner   ToolSource
	allowed []string
	state   *childState
}

func (c *childSource) Tools(ctx context.Context) []backend.Tool {
	var out []backend.Tool
	if c.inner != nil {
		for _, t := range c.inner.Tools(ctx) {
			if slices.Contains(c.allowed, t.Spec().Name) {
				out = append(out, t)
			}
		}
	}
	if c.state != nil && len(c.state.keys) > 0 {
		out = append(out, setState{c.state})
	}
	return out
}

// setState records a state key; it changes nothing outside the run, so it
// is not gated.
type setState struct{ st *childState }

var setStateSchema = json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"},` +
	`"value":{"description":"any JSON value"}},"required":["key","value"]}`)

func (t setState) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: setStateTool, Schema: setStateSchema,
		Description: "Record a state key that is handed back to the agent that delegated this task when you finish."}
}

func (setState) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}

func (t setState) Execute(_ context.Context, _ backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	var a struct {
		Key   string          `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(in.Arguments, &a); err != nil || a.Key == "" || len(a.Value) == 0 {
		return backend.ToolResult{Content: `invalid arguments for set_state: send {"key": "...", "value": <JSON>}`, IsError: true}, nil
	}
	if err := t.st.set(a.Key, a.Value); err != nil {
		return backend.ToolResult{Content: err.Error(), IsError: true}, nil
	}
	return backend.ToolResult{Content: "state " + a.Key + " recorded"}, nil
}
