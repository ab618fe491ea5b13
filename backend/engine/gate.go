package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/backend/canon"
	"agenthub/backend/store"
)

// DefaultGate is run-model §9.1 with no rules: reads are allowed, secret
// access is denied, every other gated action asks. The approval package
// provides the full policy.
type DefaultGate struct{}

// Evaluate implements backend.Gate.
func (DefaultGate) Evaluate(_ context.Context, req backend.GateRequest) backend.PolicyResult {
	k := req.Action.Kind
	v := backend.Ask
	switch k {
	case backend.ActionRead:
		v = backend.Allow
	case backend.ActionSecret:
		v = backend.Deny
	}
	rule := "default:" + string(k)
	return backend.PolicyResult{Verdict: v, Kind: k, RuleID: rule, Reason: "default for " + string(k),
		Trace: []backend.TraceStep{{Rule: rule, Matched: true, Verdict: v}}}
}

// driftResult is what the agent reads when an approved action changed
// before it could execute (AP10, detail approval_drift).
const driftResult = "permission_denied: approval_drift: the action is no longer what was approved " +
	"(a file or the command changed after it was shown); nothing was executed. Look at the current " +
	"state and propose the change again."

// gate puts a call's action to the policy (GT1). Deny blocks the run (GT4,
// AP3). Ask suspends the call, unless a grant of this run covers it. Allow
// executes; when a rule (not a class default) allowed a side effect, or a
// grant covered it, the call is recorded as resolved by policy and verified
// like any approval (AP11). A verdict the engine does not know asks.
func (rc *runCtl) gate(tool backend.Tool, c *callState, action *backend.GatedAction) (*ending, bool) {
	req := backend.GateRequest{RunID: rc.rec.ID, WorkspaceID: rc.rec.WorkspaceID, Tool: c.Req.Name,
		Action: *action}
	res := rc.policy(req) // overrides.go
	switch res.Verdict {
	case backend.Deny:
		return rc.block(c, action, res), true
	case backend.Allow:
		if res.Kind == backend.ActionRead || strings.HasPrefix(res.RuleID, "default:") {
			return rc.execute(tool, c, action, nil)
		}
		return rc.byPolicy(tool, c, *action, map[string]any{"ruleId": res.RuleID})
	}
	if g, ok := rc.coveringGrant(req, res); ok {
		return rc.byPolicy(tool, c, *action, map[string]any{"grantId": g.id, "decision": backend.ApproveForRun})
	}
	return rc.ask(c, *action, res), false
}

// block fails the denied call, backfills the step and ends the run
// Failed(permission_denied) (GT4); nothing executes.
func (rc *runCtl) block(c *callState, action *backend.GatedAction, res backend.PolicyResult) *ending {
	if end := rc.finish(c, backend.CallFailed, "permission_denied: "+res.Reason, true); end != nil {
		return end
	}
	if end := rc.backfill(0, "interrupted"); end != nil {
		return end
	}
	return failed(backend.FailPermissionDenied, "the policy denied "+string(action.Kind))
}

// byPolicy runs a call that a rule or a grant approves without a ticket:
// run.approval.resolved{resolver:"policy"} and its audit entry are
// committed first, then the action is verified and executed (AP11).
func (rc *runCtl) byPolicy(tool backend.Tool, c *callState, a backend.GatedAction,
	by map[string]any) (*ending, bool) {
	if end, ok := rc.resolveByPolicy(c, a, by); !ok {
		return end, end != nil
	}
	return rc.verified(tool, c, nil, nil)
}

// resolveByPolicy commits run.approval.resolved{resolver:"policy"} and its
// audit entry for a call a rule or grant approves. ok is false when the
// call cannot proceed (its result, or the run's ending, is recorded).
func (rc *runCtl) resolveByPolicy(c *callState, a backend.GatedAction, by map[string]any) (end *ending, ok bool) {
	hash, err := subjectHash(a)
	if err != nil {
		return rc.finish(c, backend.CallFailed, "invalid action subject", true), false
	}
	c.Subject, c.Gate = hash, a.Kind
	payload := map[string]any{"toolCallId": c.Req.ID, "resolver": "policy", "subjectHash": hash, "kind": a.Kind}
	data := map[string]any{"resolver": "policy", "kind": string(a.Kind)}
	for k, v := range by {
		payload[k], data[k] = v, v
	}
	err = rc.commit(func(tx *store.Tx) error {
		if err := rc.proposalTx(tx, c, a, hash, ""); err != nil { // changeset.go
			return err
		}
		if _, err := tx.Append(rc.rec.ID, backend.EvApprovalResolved, payload); err != nil {
			return err
		}
		_, err := tx.Audit(backend.AuditEntry{Actor: "policy", Surface: backend.SurfaceEngine,
			Kind: "approval.resolved", RunID: rc.rec.ID, ToolCallID: c.Req.ID, SubjectHash: hash, Data: data})
		return err
	})
	if err != nil {
		return failed(backend.FailInternal, "could not record the policy approval"), false
	}
	return nil, true
}

// verified executes an approved call only while its action is exactly what
// was approved: the action is computed again from the live workspace right
// before execution and compared by subject hash (AP10). before runs between
// the check and the execution (it records grants).
func (rc *runCtl) verified(tool backend.Tool, c *callState, resume json.RawMessage,
	before func(*backend.GatedAction) *ending) (*ending, bool) {
	if tool == nil { // a recovered run whose tool is no longer configured
		return rc.finish(c, backend.CallFailed, fmt.Sprintf("tool '%s' not found", c.Req.Name), true), false
	}
	action, err := tool.Action(rc.ctx, rc.env(), c.Req.Arguments)
	if err != nil {
		return rc.finish(c, backend.CallFailed, toolError(err), true), false
	}
	// Calls resumed from an input ticket carry no approved action; an
	// approved call whose action vanished has drifted too.
	if c.Gate != "" || (action != nil && c.ResumeMode == backend.ResumeReplayToolCall) {
		if action == nil {
			return rc.drift(c), false
		}
		if hash, err := subjectHash(*action); err != nil || hash != c.Subject {
			return rc.drift(c), false
		}
	}
	if before != nil {
		if end := before(action); end != nil {
			return end, true
		}
	}
	return rc.execute(tool, c, action, resume)
}

// drift fails a call whose approved action changed: nothing executes, the
// agent is told, patches get run.patch.rejected{reason:"drift"}, and an
// audit entry records it (AP10). The run continues.
func (rc *runCtl) drift(c *callState) *ending {
	err := rc.commit(func(tx *store.Tx) error {
		if err := rc.setCall(tx, c, backend.CallFailed, driftResult, true); err != nil {
			return err
		}
		if c.Gate == backend.ActionPatch || c.Gate == backend.ActionWrite {
			if _, err := tx.Append(rc.rec.ID, backend.EvPatchRejected, map[string]any{"toolCallId": c.Req.ID,
				"approvalId": c.TicketID, "reason": "drift"}); err != nil {
				return err
			}
		}
		_, err := tx.Audit(backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine,
			Kind: "approval.drift", RunID: rc.rec.ID, ToolCallID: c.Req.ID, SubjectHash: c.Subject,
			Data: map[string]any{"approvalId": c.TicketID, "kind": string(c.Gate)}})
		return err
	})
	if err != nil {
		return failed(backend.FailInternal, "could not record the tool result")
	}
	return nil
}

// subjectHash binds an action to what the reviewer is shown (AP9).
func subjectHash(a backend.GatedAction) (string, error) {
	return canon.SHA256(json.RawMessage(orNull(a.Subject)))
}

// Gates implements backend.KindGate: reads are allowed and every other
// kind asks (or, for secrets, is denied).
func (DefaultGate) Gates(_ string, kind backend.ActionKind) bool {
	return kind != backend.ActionRead
}
