package engine

import (
	"fmt"
	"slices"

	"agenthub/backend"
	"agenthub/backend/store"
)

// hookState is what the hooks of a run changed for the current step.
type hookState struct {
	removed   map[string]bool // tools a BeforeInference hook removed
	terminate bool            // an AfterInference hook requested termination
	// annotated holds the AfterInference hooks' annotations, committed with
	// the response as run.inference.annotated (one event per hook).
	annotated []backend.InferenceAnnotated
}

// hooks are the engine's hooks, then the profile's, in registration order.
func (rc *runCtl) hooks() []backend.Hook {
	return append(slices.Clip(rc.e.cfg.Hooks), rc.p.Hooks...)
}

func (rc *runCtl) hookRunStart(recovered bool) {
	v := backend.RunView{RunID: rc.rec.ID, SessionID: rc.rec.SessionID, WorkspaceID: rc.rec.WorkspaceID,
		Profile: rc.p.Name, Recovered: recovered}
	for _, h := range rc.hooks() {
		if h, ok := h.(backend.RunStartHook); ok {
			h.RunStart(rc.ctx, v)
		}
	}
}

func (rc *runCtl) stepView(step int, tools []backend.ToolSpec) backend.StepView {
	v := backend.StepView{RunID: rc.rec.ID, Step: step, Messages: slices.Clone(rc.transcript)}
	for _, t := range tools {
		v.Tools = append(v.Tools, t.Name)
	}
	return v
}

// hookBeforeInference is StepStart's and BeforeInference's hooks: removed
// tools leave the request and are remembered for the step's gate; added
// context goes into the request only (the model appends it to its system
// text), never into the transcript.
func (rc *runCtl) hookBeforeInference(req *backend.ModelRequest) {
	rc.hk = hookState{}
	hs := rc.hooks()
	if len(hs) == 0 {
		return
	}
	for _, h := range hs {
		if h, ok := h.(backend.StepStartHook); ok {
			h.StepStart(rc.ctx, rc.stepView(req.Step, req.Tools))
		}
	}
	for _, h := range hs {
		if h, ok := h.(backend.BeforeInferenceHook); ok {
			out := h.BeforeInference(rc.ctx, rc.stepView(req.Step, req.Tools))
			for _, name := range out.RemoveTools {
				if rc.hk.removed == nil {
					rc.hk.removed = map[string]bool{}
				}
				rc.hk.removed[name] = true
			}
			req.Context = append(req.Context, out.Context...)
		}
	}
	if rc.hk.removed != nil {
		req.Tools = slices.DeleteFunc(slices.Clone(req.Tools), func(t backend.ToolSpec) bool {
			return rc.hk.removed[t.Name]
		})
	}
}

// hookAfterInference drops the calls hooks dropped, or all of them when a
// hook requested termination, before any is recorded, and keeps the hooks'
// annotations for the step's commit.
func (rc *runCtl) hookAfterInference(resp *backend.ModelResponse, step int, msgID string) {
	for _, hook := range rc.hooks() {
		h, ok := hook.(backend.AfterInferenceHook)
		if !ok {
			continue
		}
		out := h.AfterInference(rc.ctx, backend.InferenceView{RunID: rc.rec.ID, Step: step, Text: resp.Text,
			Calls: slices.Clone(resp.Calls), Usage: resp.Usage})
		if len(out.Annotations) > 0 {
			rc.hk.annotated = append(rc.hk.annotated, backend.InferenceAnnotated{MessageID: msgID, Step: step,
				Hook: hook.HookName(), Annotations: slices.Clone(out.Annotations)})
		}
		if len(out.DropCalls) > 0 {
			resp.Calls = slices.DeleteFunc(slices.Clone(resp.Calls), func(c backend.ToolCallRequest) bool {
				return slices.Contains(out.DropCalls, c.ID)
			})
		}
		rc.hk.terminate = rc.hk.terminate || out.Terminate
	}
	if rc.hk.terminate {
		resp.Calls = nil
	}
}

// naturalEnd is the ending of a step without calls: Completed, natural
// unless a hook requested termination (GT7, §3 AfterInference).
func (rc *runCtl) naturalEnd() *ending {
	reason := backend.DoneNatural
	if rc.hk.terminate {
		reason = backend.DoneBehaviorRequested
	}
	return &ending{state: backend.RunCompleted, end: store.End{DoneReason: reason}}
}

func (rc *runCtl) callView(c *callState) backend.CallView {
	v := backend.CallView{RunID: rc.rec.ID, Call: c.Req}
	if rc.cur != nil {
		v.Step = rc.cur.Step
		v.Index = slices.Index(rc.cur.Calls, c)
	}
	return v
}

// gateDecision is the hooks' combined decision for a call (GT2): the
// strongest outcome, the first registered at equal rank.
func (rc *runCtl) gateDecision(c *callState) backend.GateDecision {
	var best backend.GateDecision
	for _, h := range rc.hooks() {
		if h, ok := h.(backend.ToolGateHook); ok {
			if d := h.ToolGate(rc.ctx, rc.callView(c)); d.Outcome > best.Outcome {
				best = d
			}
		}
	}
	return best
}

// hookGate runs the ToolGate hooks for a call before the policy gate.
// done is true when the hooks settled the call (end and stop as gate's);
// otherwise the policy gate decides. Hooks only make a call stricter: a
// Block always blocks; the policy's Deny stands over everything else; a
// Suspend under a policy that does not allow outright defers to the
// policy's own ticket (or the reviewer's grant); SetResult never executes.
func (rc *runCtl) hookGate(c *callState, action *backend.GatedAction) (end *ending, done, stop bool) {
	if rc.hk.removed[c.Req.Name] {
		return rc.finish(c, backend.CallFailed, fmt.Sprintf("tool '%s' not found", c.Req.Name), true), true, false
	}
	d := rc.gateDecision(c)
	if d.Outcome == backend.GateAllow {
		return nil, false, false
	}
	if d.Outcome == backend.GateBlock {
		return rc.hookBlock(c, d.Reason), true, true
	}
	verdict := backend.Allow
	if action != nil {
		verdict = rc.policy(backend.GateRequest{RunID: rc.rec.ID,
			WorkspaceID: rc.rec.WorkspaceID, Tool: c.Req.Name, Action: *action}).Verdict
	}
	switch {
	case verdict == backend.Deny:
		return nil, false, false
	case d.Outcome == backend.GateSetResult:
		return rc.finish(c, backend.CallSucceeded, d.Result, false), true, false
	case verdict != backend.Allow:
		return nil, false, false
	}
	s := backend.Suspension{}
	if d.Ticket != nil {
		s = *d.Ticket
	}
	if s.ResumeMode == backend.ResumeReplayToolCall { // an input ticket carries no action subject
		s.ResumeMode = backend.ResumePassDecisionToTool
	}
	if err := rc.commit(func(tx *store.Tx) error { return rc.suspendTx(tx, c, inputTicket(c, &s)) }); err != nil {
		return failed(backend.FailInternal, "could not record the approval request"), true, false
	}
	return nil, true, false
}

// hookBlock is GT4 for a hook's Block.
func (rc *runCtl) hookBlock(c *callState, reason string) *ending {
	if end := rc.finish(c, backend.CallFailed, "permission_denied: "+reason, true); end != nil {
		return end
	}
	if end := rc.backfill(0, "interrupted"); end != nil {
		return end
	}
	return failed(backend.FailPermissionDenied, "a hook blocked "+c.Req.Name)
}

func (rc *runCtl) hookBeforeExecute(c *callState) {
	for _, h := range rc.hooks() {
		if h, ok := h.(backend.BeforeToolExecuteHook); ok {
			h.BeforeToolExecute(rc.ctx, rc.callView(c))
		}
	}
}

func (rc *runCtl) hookAfterExecute(c *callState) {
	for _, h := range rc.hooks() {
		if h, ok := h.(backend.AfterToolExecuteHook); ok {
			h.AfterToolExecute(rc.ctx, rc.callView(c), backend.ResultView{Status: c.Status, Content: c.Result,
				IsError: c.IsError})
		}
	}
}

func (rc *runCtl) hookStepEnd() {
	step := rc.st.Steps
	for _, h := range rc.hooks() {
		if h, ok := h.(backend.StepEndHook); ok {
			h.StepEnd(rc.ctx, rc.stepView(step, nil))
		}
	}
}

// hookRunEnd runs at the terminal state only: a run detached by shutdown
// is not over, and its RunEnd comes with the activation that ends it.
func (rc *runCtl) hookRunEnd(end *ending) {
	if end == nil || end == detached {
		return
	}
	v := backend.RunEndView{RunID: rc.rec.ID, State: end.state, Code: end.end.Code}
	for _, h := range rc.hooks() {
		if h, ok := h.(backend.RunEndHook); ok {
			h.RunEnd(rc.ctx, v)
		}
	}
}
