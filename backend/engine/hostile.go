package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"agenthub/backend"
	"agenthub/backend/store"
)

// Bounds on a model's tool-call arguments, checked when the response is
// decoded, before anything is stored: SQLite's JSON functions refuse
// nesting past 1,000 levels, so deeper arguments failed the step's insert
// and left the run idling. No tool schema nests anywhere near these.
const (
	maxArgumentDepth = 64
	maxArgumentBytes = 8 << 20
)

// refusedArguments replaces the arguments of a refused call in the
// transcript and the store: the model reads the refusal as the result.
var refusedArguments = json.RawMessage(`{}`)

// argumentProblem says why raw cannot be a call's arguments, or "".
func argumentProblem(raw json.RawMessage) string {
	if len(raw) > maxArgumentBytes {
		return fmt.Sprintf("the arguments are %d bytes, more than the limit of %d", len(raw), maxArgumentBytes)
	}
	if len(raw) > 0 && !json.Valid(raw) {
		return "the arguments are not valid JSON"
	}
	if d := jsonDepth(raw); d > maxArgumentDepth {
		return fmt.Sprintf("the arguments are nested %d levels deep, more than the limit of %d", d, maxArgumentDepth)
	}
	return ""
}

// jsonDepth is the deepest nesting of objects and arrays in valid JSON.
func jsonDepth(raw []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, b := range raw {
		switch {
		case inString && escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case inString && b == '"':
			inString = false
		case inString:
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
			deepest = max(deepest, depth)
		case b == '}' || b == ']':
			depth--
		}
	}
	return deepest
}

// refuseArguments replaces, in place, the arguments of every call that
// breaks the bounds with {} and returns the refusal of each by call id,
// before hooks or the store see them.
func refuseArguments(calls []backend.ToolCallRequest) map[string]string {
	var refused map[string]string
	for i := range calls {
		if why := argumentProblem(calls[i].Arguments); why != "" {
			if refused == nil {
				refused = map[string]string{}
			}
			calls[i].Arguments = refusedArguments
			refused[calls[i].ID] = fmt.Sprintf("%s: %s: %s; nothing was run. Call %s again with flat arguments "+
				"that match its schema", backend.CodeInvalidInput, calls[i].Name, why, calls[i].Name)
		}
	}
	return refused
}

// callStates are the states of a response's calls: a refused call is
// settled at once as failed, so it is stored, shown to the model as its
// result and never gated or executed; the run goes on.
func callStates(calls []backend.ToolCallRequest, refused map[string]string) []*callState {
	out := make([]*callState, len(calls))
	for i, c := range calls {
		out[i] = &callState{Req: c, Status: backend.CallNew}
		if why, ok := refused[c.ID]; ok && string(c.Arguments) == string(refusedArguments) {
			out[i].Status, out[i].Result, out[i].IsError = backend.CallFailed, why, true
		}
	}
	return out
}

// abandonAfter is how long, after the run's context ends, the engine still
// waits for a tool before it records the call cancelled and ends the run
// without it. Tools that honour their context (run_shell stops its process
// group) return within it.
const abandonAfter = 2 * time.Second

// callTool runs tool.Execute on its own goroutine so that cancel and the
// run's timeout always win over a tool that ignores its context (one
// blocked in a system call, say): abandoned is true when the run's context
// ended and the tool did not return within abandonAfter (or the cancel
// grace, if shorter). Its late result is discarded.
func (rc *runCtl) callTool(ctx context.Context, tool backend.Tool, env backend.ToolEnv, in backend.ToolInput) execOut {
	done := make(chan execOut, 1)
	go func() {
		res, err := tool.Execute(ctx, env, in)
		done <- execOut{res: res, err: err}
	}()
	select {
	case o := <-done:
		return o
	case <-rc.ctx.Done():
	}
	wait := time.NewTimer(min(abandonAfter, rc.e.cfg.Grace))
	defer wait.Stop()
	select {
	case o := <-done:
		return o
	case <-wait.C:
		rc.e.log.Warn("a tool did not return after the run was stopped; its call is recorded cancelled",
			"run_id", rc.rec.ID, "call_id", in.CallID)
		return execOut{abandoned: true}
	}
}

// abandonedResult is the result of a call the engine stopped waiting for.
const abandonedResult = "cancelled: the run was stopped and the tool did not return; its result, if any, is discarded"

// abandon records a call the engine stopped waiting for as cancelled (and
// its gated action as finished, outcome abandoned) and returns the run's
// ending for the cause that stopped it.
func (rc *runCtl) abandon(c *callState, action *backend.GatedAction, gated bool) *ending {
	err := rc.commit(func(tx *store.Tx) error {
		if gated {
			if _, err := tx.Transition(rc.rec.ID, backend.RunRunning, "gated action abandoned", nil); err != nil {
				return err
			}
			if err := rc.auditAction(tx, c, action, "action.finished", map[string]any{"outcome": "abandoned"}); err != nil {
				return err
			}
		}
		return rc.setCall(tx, c, backend.CallCancelled, abandonedResult, true)
	})
	if err != nil {
		return failed(backend.FailInternal, "could not record the tool result")
	}
	return rc.endFor(context.Cause(rc.ctx))
}
