package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"agenthub/backend"
)

type delegateArgs struct {
	Task    string         `json:"task" jsonschema:"the whole task for the sub-agent: it sees nothing of this conversation"`
	Profile string         `json:"profile,omitempty" jsonschema:"the agent profile of the sub-agent; default: this agent's"`
	Tools   []string       `json:"tools,omitempty" jsonschema:"restrict the sub-agent to these tools; default: every tool of its profile except delegate"`
	Seed    map[string]any `json:"seed,omitempty" jsonschema:"initial values of the sub-agent's state keys (only keys its profile registers)"`
}

var delegateSchema = lazySchema[delegateArgs](nil)

const delegateDescription = `Delegate a self-contained task to a sub-agent and wait for its answer. The ` +
	`sub-agent starts fresh (give it everything it needs in task), works in the same workspace under the ` +
	`same approvals, cannot delegate further, and its text streams as this call's output. The result is JSON: ` +
	`childRunId, childStatus (Completed, Failed or Cancelled), response (its last text), failure, and state ` +
	`(the keys it recorded, only when it Completed). A failed sub-agent is a result, not an error.`

// delegate starts a sub-agent run (run-model.md §10) through the runtime's
// [backend.Delegator]. It has no gated action of its own: every action of
// the child goes through the gate as the child's.
type delegate struct{}

func (delegate) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: Delegate, Description: delegateDescription, Schema: delegateSchema.Raw()}
}

func (delegate) Action(_ context.Context, _ backend.ToolEnv, args json.RawMessage) (*backend.GatedAction, error) {
	if _, err := decode[delegateArgs](Delegate, delegateSchema, args); err != nil {
		return nil, err
	}
	return nil, nil
}

// Execute runs the child to its end. The child's text is re-emitted as
// run.tool.delta of this call (SA7); cancelling this call cancels the child
// (SA4). The result is the pass-through form (SA5): a non-Completed child
// is reported, not turned into an error.
func (delegate) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[delegateArgs](Delegate, delegateSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	if a.Task == "" {
		return failure(env, "%s: task must not be empty", Delegate), nil
	}
	d, ok := backend.DelegatorFrom(ctx)
	if !ok {
		return failure(env, "%s: this runtime cannot start sub-agents", Delegate), nil
	}
	seed := map[string]json.RawMessage{}
	for k, v := range a.Seed {
		if seed[k], err = json.Marshal(v); err != nil {
			return failure(env, "%s: seed %s: %v", Delegate, k, err), nil
		}
	}
	var mu sync.Mutex // the child streams on its own goroutine
	res, err := d.Delegate(ctx, backend.DelegateRequest{ParentRunID: env.RunID, ParentCallID: in.CallID,
		Profile: a.Profile, Task: a.Task, Tools: a.Tools, Seed: seed,
		Delta: func(text string) {
			if env.Emit == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			env.Emit(backend.EvToolDelta, map[string]string{"toolCallId": in.CallID, "text": text})
		}})
	if err != nil {
		if ctx.Err() != nil {
			return backend.ToolResult{}, ctx.Err()
		}
		return failure(env, "%s: %s", Delegate, toolMessage(err)), nil
	}
	out, err := json.Marshal(res)
	if err != nil {
		return backend.ToolResult{}, fmt.Errorf("%s: encode the result: %w", Delegate, err)
	}
	return success(env, string(out)), nil
}

// toolMessage is the safe message of a backend error, else the error text.
func toolMessage(err error) string {
	if be, ok := err.(*backend.Error); ok {
		return be.Message
	}
	return err.Error()
}
