package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/store"
)

// This file is the tool executors (run-model.md §5, seed 002). Sequential
// is step.go's runTools and wait.go's wait. The parallel executors gate
// every call serially (GT1), then execute the allowed calls concurrently
// against one frozen snapshot and commit their results in call order (EX2);
// a failure or a suspension stops no other call. They differ only in how
// decisions are replayed (EX3, replay.go).

// Executor is a profile's tool execution mode (EX1).
type Executor string

const (
	ExecSequential        Executor = "sequential"
	ExecParallelBatch     Executor = "parallel_batch_approval"
	ExecParallelStreaming Executor = "parallel_streaming"
)

// conflictResult starts the result of a call that lost a conflict (EX2).
const conflictResult = "conflict: "

// Valid reports whether e names an executor; empty means sequential.
func (e Executor) Valid() bool {
	return e == "" || e == ExecSequential || e == ExecParallelBatch || e == ExecParallelStreaming
}

func (e Executor) parallel() bool { return e == ExecParallelBatch || e == ExecParallelStreaming }

// runBatch is stage 1 to 3 of the pipeline for the step's new calls, under
// the profile's executor.
func (rc *runCtl) runBatch() *ending {
	if !rc.p.Executor.parallel() {
		return rc.runTools(nil)
	}
	var plans []*plan
	for _, c := range rc.cur.Calls {
		if c.Status != backend.CallNew {
			continue
		}
		p, end := rc.gateOnly(c)
		if end != nil {
			return end
		}
		if p != nil {
			plans = append(plans, p)
		}
	}
	return rc.executeAll(plans)
}

// waitAll waits for the step's suspended calls under the profile's replay
// policy (EX3).
func (rc *runCtl) waitAll() *ending {
	switch rc.p.Executor {
	case ExecParallelBatch:
		return rc.waitBatch(false)
	case ExecParallelStreaming:
		return rc.waitStreaming(false)
	}
	for rc.suspended() {
		if end := rc.wait(); end != nil {
			return end
		}
	}
	return nil
}

// plan is a call that will execute: allowed by the gate, or approved and
// replayed.
type plan struct {
	c      *callState
	tool   backend.Tool
	action *backend.GatedAction // nil: nothing to gate
	resume json.RawMessage
	// verify re-computes the action right before execution and compares it
	// with the approved subject (AP10).
	verify bool
	// before runs after the check, before the execution (grants, SR4).
	before func(*backend.GatedAction) *ending
	// conflict, when set, is why this call lost to an earlier one of the
	// batch (EX2): it does not execute, and fails in its place in order.
	conflict string
}

func (p *plan) gated() bool { return p.action != nil && p.action.Kind != backend.ActionRead }

// gateOnly is ToolGate for one call without executing it: unknown tools and
// bad arguments fail the call (GT6), Deny blocks the run (GT4), Ask
// suspends the call, Allow returns its plan. A nil plan and a nil ending
// mean the call is settled (failed or suspended).
func (rc *runCtl) gateOnly(c *callState) (*plan, *ending) {
	tool, ok := rc.tool(c.Req.Name)
	if !ok || !contains(rc.toolNames(), c.Req.Name) {
		return nil, rc.finish(c, backend.CallFailed, fmt.Sprintf("tool '%s' not found", c.Req.Name), true)
	}
	if !json.Valid(c.Req.Arguments) {
		return nil, rc.finish(c, backend.CallFailed, "invalid arguments: not valid JSON", true)
	}
	action, err := tool.Action(rc.ctx, rc.env(), c.Req.Arguments)
	if err != nil {
		return nil, rc.finish(c, backend.CallFailed, toolError(err), true)
	}
	if end, done, _ := rc.hookGate(c, action); done { // hooks.go
		return nil, end
	}
	p := &plan{c: c, tool: tool, action: action}
	if action == nil {
		return p, nil
	}
	req := backend.GateRequest{RunID: rc.rec.ID, WorkspaceID: rc.rec.WorkspaceID, Tool: c.Req.Name, Action: *action}
	res := rc.policy(req) // overrides.go
	var by map[string]any
	switch res.Verdict {
	case backend.Deny:
		return nil, rc.block(c, action, res)
	case backend.Allow:
		if res.Kind == backend.ActionRead || strings.HasPrefix(res.RuleID, "default:") {
			return p, nil
		}
		by = map[string]any{"ruleId": res.RuleID}
	default:
		g, ok := rc.coveringGrant(req, res)
		if !ok {
			return nil, rc.ask(c, *action, res)
		}
		by = map[string]any{"grantId": g.id, "decision": backend.ApproveForRun}
	}
	if end, ok := rc.resolveByPolicy(c, *action, by); !ok {
		return nil, end
	}
	p.verify = true
	return p, nil
}

// executeAll is BeforeToolExecute, the concurrent execution and
// AfterToolExecute of plans: approved actions are verified (AP10), calls
// that conflict with an earlier one are failed (EX2), the rest run
// together and their results are committed in call order.
func (rc *runCtl) executeAll(plans []*plan) *ending {
	var run []*plan
	for _, p := range plans {
		ok, end := rc.check(p)
		if end != nil {
			return end
		}
		if ok {
			run = append(run, p)
		}
	}
	markConflicts(run)
	if len(run) == 0 {
		return nil
	}
	applying := false
	for _, p := range run {
		applying = applying || p.gated() && p.conflict == ""
	}
	if err := rc.commit(func(tx *store.Tx) error { return rc.startTx(tx, run, applying) }); err != nil {
		return failed(backend.FailInternal, "could not record the calls")
	}
	outs := make([]execOut, len(run))
	var wg sync.WaitGroup
	for i, p := range run {
		if p.conflict == "" {
			rc.hookBeforeExecute(p.c)
			wg.Go(func() { outs[i] = rc.run(p) })
		}
	}
	wg.Wait()
	if err := rc.commit(func(tx *store.Tx) error { return rc.finishTx(tx, run, outs, applying) }); err != nil {
		return failed(backend.FailInternal, "could not record the tool results")
	}
	for _, o := range outs {
		if o.abandoned { // hostile.go: the run was stopped and a tool did not return
			return rc.endFor(context.Cause(rc.ctx))
		}
	}
	for _, p := range run {
		if p.conflict == "" {
			rc.hookAfterExecute(p.c)
		}
	}
	return nil
}

// check verifies an approved plan against the live action (AP10) and runs
// its before hook. ok is false when the call was settled instead.
func (rc *runCtl) check(p *plan) (ok bool, end *ending) {
	if p.tool == nil {
		return false, rc.finish(p.c, backend.CallFailed, fmt.Sprintf("tool '%s' not found", p.c.Req.Name), true)
	}
	if p.verify {
		action, err := p.tool.Action(rc.ctx, rc.env(), p.c.Req.Arguments)
		if err != nil {
			return false, rc.finish(p.c, backend.CallFailed, toolError(err), true)
		}
		if p.c.Gate != "" || (action != nil && p.c.ResumeMode == backend.ResumeReplayToolCall) {
			if action == nil {
				return false, rc.drift(p.c)
			}
			if hash, err := subjectHash(*action); err != nil || hash != p.c.Subject {
				return false, rc.drift(p.c)
			}
		}
		p.action = action
	}
	if p.before != nil {
		if end := p.before(p.action); end != nil {
			return false, end
		}
	}
	return true, nil
}

// markConflicts marks every call that changes a file an earlier call of
// the same batch changes or runs, and every command that runs a file an
// earlier call changes (EX2): the later one in call order loses, whatever
// would have finished first. A command's approval binds the files it runs
// (approval.ExecFiles), which a concurrent write would change under it.
func markConflicts(run []*plan) {
	written := map[string]string{}  // path → the call that changes it
	executed := map[string]string{} // path → a command that runs it
	for _, p := range run {
		writes, runs := changedPaths(p), executedPaths(p)
		for _, path := range writes {
			if id, ok := written[path]; ok {
				p.conflict = fmt.Sprintf("%s%s is also changed by call %s of this batch; nothing was written. "+
					"Propose this change again after that one.", conflictResult, path, id)
				break
			}
			if id, ok := executed[path]; ok {
				p.conflict = fmt.Sprintf("%s%s is run by the command of call %s of this batch; nothing was written. "+
					"Propose this change again after that one.", conflictResult, path, id)
				break
			}
		}
		for _, path := range runs {
			if id, ok := written[path]; ok && p.conflict == "" {
				p.conflict = fmt.Sprintf("%s%s, which this command runs, is changed by call %s of this batch; "+
					"nothing was run. Run it again after that one.", conflictResult, path, id)
			}
		}
		if p.conflict == "" {
			for _, path := range writes {
				written[path] = p.c.Req.ID
			}
			for _, path := range runs {
				executed[path] = p.c.Req.ID
			}
		}
	}
}

// executedPaths are the workspace files a command plan runs, as its subject
// binds them.
func executedPaths(p *plan) []string {
	if p.action == nil || p.action.Kind != backend.ActionShell {
		return nil
	}
	var subj struct {
		Files []approval.Preimage `json:"files"`
	}
	if json.Unmarshal(p.action.Subject, &subj) != nil {
		return nil
	}
	out := make([]string, len(subj.Files))
	for i, f := range subj.Files {
		out[i] = f.Path
	}
	return out
}

// changedPaths are the workspace files a write or patch plan changes.
func changedPaths(p *plan) []string {
	if p.action == nil || (p.action.Kind != backend.ActionWrite && p.action.Kind != backend.ActionPatch) {
		return nil
	}
	a, err := approval.ActionOf(backend.GateRequest{Tool: p.c.Req.Name, Action: *p.action})
	if err != nil {
		return nil
	}
	if len(a.Paths) > 0 {
		return a.Paths
	}
	if a.Path != "" {
		return []string{a.Path}
	}
	return nil
}

// execOut is what one execution returned.
type execOut struct {
	res backend.ToolResult
	err error
	// abandoned: the run was stopped and the tool did not return (hostile.go).
	abandoned bool
}

// run executes one plan on its own goroutine; it commits nothing.
func (rc *runCtl) run(p *plan) execOut {
	return rc.callTool(backend.WithDelegator(rc.ctx, rc), p.tool, rc.envFor(p.c),
		backend.ToolInput{CallID: p.c.Req.ID, Arguments: p.c.Req.Arguments, ResumeInput: p.resume})
}

// startTx moves the plans to Running, entering Applying first when one of
// them is a gated action.
func (rc *runCtl) startTx(tx *store.Tx, run []*plan, applying bool) error {
	if applying {
		if _, err := tx.Transition(rc.rec.ID, backend.RunApplying, fmt.Sprintf("%d gated actions", len(run)), nil); err != nil {
			return err
		}
	}
	for _, p := range run {
		if p.conflict != "" {
			continue
		}
		if p.gated() {
			if err := rc.auditAction(tx, p.c, p.action, "action.started", nil); err != nil {
				return err
			}
		}
		if err := rc.setCall(tx, p.c, backend.CallRunning, "", false); err != nil {
			return err
		}
	}
	return nil
}

// finishTx records the results in call order and leaves Applying.
func (rc *runCtl) finishTx(tx *store.Tx, run []*plan, outs []execOut, applying bool) error {
	if applying {
		if _, err := tx.Transition(rc.rec.ID, backend.RunRunning, "gated actions finished", nil); err != nil {
			return err
		}
	}
	for i, p := range run {
		if err := rc.resultTx(tx, p, outs[i]); err != nil {
			return err
		}
	}
	return nil
}

// resultTx records one execution's result: a tool that suspends itself
// gets an input ticket and stops no other call.
func (rc *runCtl) resultTx(tx *store.Tx, p *plan, o execOut) error {
	if p.conflict != "" {
		if err := rc.setCall(tx, p.c, backend.CallFailed, p.conflict, true); err != nil {
			return err
		}
		if len(changedPaths(p)) == 0 { // a command: no patch was rejected
			return nil
		}
		_, err := tx.Append(rc.rec.ID, backend.EvPatchRejected, map[string]any{"toolCallId": p.c.Req.ID,
			"approvalId": p.c.TicketID, "reason": "conflict"})
		return err
	}
	if o.abandoned {
		if p.gated() {
			if err := rc.auditAction(tx, p.c, p.action, "action.finished", map[string]any{"outcome": "abandoned"}); err != nil {
				return err
			}
		}
		return rc.setCall(tx, p.c, backend.CallCancelled, abandonedResult, true)
	}
	p.c.Executed = true
	if p.gated() {
		if err := rc.auditAction(tx, p.c, p.action, "action.finished",
			map[string]any{"outcome": outcome(o.res, o.err)}); err != nil {
			return err
		}
	}
	switch {
	case o.err != nil:
		return rc.setCall(tx, p.c, backend.CallFailed, toolError(o.err), true)
	case o.res.Suspend != nil:
		return rc.suspendTx(tx, p.c, inputTicket(p.c, o.res.Suspend))
	case o.res.IsError:
		return rc.setCall(tx, p.c, backend.CallFailed, o.res.Content, true)
	}
	return rc.setCall(tx, p.c, backend.CallSucceeded, o.res.Content, false)
}
