package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"agenthub/backend"
	"agenthub/backend/store"
)

// This file is sub-agents (run-model.md §10): a tool call of a parent run
// starts a child run with its own run id, session and events, linked to the
// parent in run.created (SA1). The child runs in the sub-agent lane, never
// the session or global lane, so a parent that holds its slots cannot
// deadlock on it (SA9). It works in the parent's workspace under the same
// gate; its approvals are its own tickets, shown in the inbox with the run
// that asks (SA8), while the parent's call stays Running.

// subagentLimit is the capacity of the sub-agent lane (SA9).
const subagentLimit = 8

// errParentCancel ends a child whose parent call was cancelled (SA4).
var errParentCancel = errors.New("parent_cancelled")

// delegateTool is the name of the delegation tool, which children are
// never offered: one level of sub-agents.
const delegateTool = "delegate"

// noTools stands for "no tool at all" in Profile.Tools, where an empty list
// means every tool. No tool has this name, so nothing is offered.
const noTools = "-"

// subRun is what makes a run a child: its parent and its state keys.
type subRun struct {
	parentRunID  string
	parentCallID string
	keys         []string                   // the keys the child's profile registers
	seed         map[string]json.RawMessage // applied before the first step
	state        *childState
}

// Delegate implements backend.Delegator for the run's tools: the parent is
// this run.
func (rc *runCtl) Delegate(ctx context.Context, req backend.DelegateRequest) (backend.DelegateResult, error) {
	req.ParentRunID = rc.rec.ID
	return rc.e.delegate(ctx, rc, req)
}

// delegate starts a child of parent and waits for its end. Cancelling ctx
// (the parent's call) cancels the child (SA4). A child that fails is a
// result, not an error: errors are for a request that cannot start a child.
func (e *Engine) delegate(ctx context.Context, parent *runCtl, req backend.DelegateRequest) (backend.DelegateResult, error) {
	name := req.Profile
	if name == "" {
		name = parent.rec.Profile
	}
	p, ok := e.profile(name)
	if !ok {
		return backend.DelegateResult{}, backend.Errorf(backend.CodeInvalidInput, "unknown profile %q", name)
	}
	p.Name = name
	cp, err := e.childProfile(parent, p, req)
	if err != nil {
		return backend.DelegateResult{}, err
	}
	rc, err := e.startChild(ctx, parent, cp, req)
	if err != nil {
		return backend.DelegateResult{}, err
	}
	select {
	case <-rc.done:
	case <-ctx.Done():
		rc.stop(errParentCancel)
		<-rc.done
	}
	return e.childResult(rc)
}

// childProfile is the child's profile: the tools restricted to the request
// (never delegation), its text forwarded to the parent, a set_state tool
// for its registered keys.
func (e *Engine) childProfile(parent *runCtl, p Profile, req backend.DelegateRequest) (Profile, error) {
	offered := parent.toolNamesOf(p)
	allowed := offered
	if len(req.Tools) > 0 {
		for _, t := range req.Tools {
			if !slices.Contains(offered, t) || t == delegateTool {
				return p, backend.Errorf(backend.CodeInvalidInput, "tool %q is not available to sub-agents of profile %s", t, p.Name)
			}
		}
		allowed = req.Tools
	}
	allowed = slices.DeleteFunc(slices.Clone(allowed), func(t string) bool { return t == delegateTool })
	cp := p
	cp.Tools = []string{noTools}
	var own []string
	if p.Source != nil {
		for _, t := range p.Source.Tools(parent.ctx) {
			own = append(own, t.Spec().Name)
		}
	}
	for _, t := range allowed {
		if !slices.Contains(own, t) {
			cp.Tools = append(cp.Tools, t)
		}
	}
	cp.Source = &childSource{inner: p.Source, allowed: allowed}
	if req.Delta != nil {
		cp.Model = &forwardModel{Model: p.Model, forward: req.Delta}
	}
	return cp, nil
}

// toolNamesOf is every tool a run of p is offered.
func (rc *runCtl) toolNamesOf(p Profile) []string {
	var names []string
	if p.Source != nil {
		for _, t := range p.Source.Tools(rc.ctx) {
			names = append(names, t.Spec().Name)
		}
	}
	if len(p.Tools) > 0 {
		return append(names, p.Tools...)
	}
	for n := range rc.e.cfg.Tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// startChild records the child through Created → Planned → Accepted, linked
// to its parent, and starts it in the sub-agent lane.
func (e *Engine) startChild(ctx context.Context, parent *runCtl, p Profile, req backend.DelegateRequest) (*runCtl, error) {
	rec := store.RunRecord{ID: backend.NewID(backend.PrefixRun), SessionID: backend.NewID(backend.PrefixSession),
		WorkspaceID: parent.rec.WorkspaceID, Profile: p.Name, AgentID: p.Name, Runtime: p.Runtime,
		Task: childTask(req, p.StateKeys), Scripted: p.Scripted, Actor: parent.rec.Actor, Surface: backend.SurfaceEngine}
	_, err := e.store.Do(ctx, func(tx *store.Tx) error {
		if err := tx.CreateSession(rec.SessionID, rec.WorkspaceID, ""); err != nil {
			return err
		}
		var err error
		if rec, err = tx.CreateRun(rec, map[string]any{"task": rec.Task, "profile": p.Name,
			"workspaceId": rec.WorkspaceID, "scripted": p.Scripted, "parentRunId": parent.rec.ID,
			"parentToolCallId": req.ParentCallID}); err != nil {
			return err
		}
		for _, to := range []backend.RunState{backend.RunPlanned, backend.RunAccepted} {
			if _, err := tx.Transition(rec.ID, to, "sub-agent of "+parent.rec.ID, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("start sub-agent: %w", err)
	}
	rc := e.newCtl(rec, p)
	rc.sub = &subRun{parentRunID: parent.rec.ID, parentCallID: req.ParentCallID, keys: p.StateKeys,
		seed: req.Seed, state: newChildState(p.StateKeys)}
	rc.p.Source.(*childSource).state = rc.sub.state
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.draining {
		return nil, backend.Errorf(backend.FailInternal, "AgentHub is shutting down")
	}
	e.spawn(rc, rc.activateChild)
	return rc, nil
}

// childTask is the child's only input (SA2): the task, and the state it
// was seeded with, which it can change with set_state.
func childTask(req backend.DelegateRequest, keys []string) string {
	var b strings.Builder
	b.WriteString(req.Task)
	if len(req.Seed) > 0 {
		seed, _ := json.Marshal(req.Seed)
		fmt.Fprintf(&b, "\n\nState seeded by the parent agent: %s", seed)
	}
	if len(keys) > 0 {
		fmt.Fprintf(&b, "\nRecord results for the parent with %s; its keys are: %s.", setStateTool, strings.Join(keys, ", "))
	}
	return b.String()
}

// activateChild is a child's whole life: the sub-agent lane, the seed
// check, then the same Preparing, loop and RunEnd as any run.
func (rc *runCtl) activateChild() {
	defer close(rc.done)
	lane := rc.e.subLane
	select {
	case lane <- struct{}{}:
	case <-rc.ctx.Done():
		rc.runEnd(rc.endFor(context.Cause(rc.ctx)))
		return
	}
	defer func() { <-lane }()
	if err := rc.sub.state.seed(rc.sub.seed); err != nil {
		// SA3: the child fails before its first step; the parent sees a
		// failed child.
		rc.runEnd(failed(backend.CodeInvalidInput, err.Error()))
		return
	}
	rc.runEnd(rc.prepareAndLoop())
}

// reacquire takes a global slot again after a decision; a child stays in
// the sub-agent lane (SA9), which it never left.
func (rc *runCtl) reacquire() error {
	if rc.sub != nil {
		return nil
	}
	if err := rc.e.lanes.acquireGlobal(rc.ctx, rc.rec.ID, true); err != nil {
		return err
	}
	rc.holdsGlobal = true
	return nil
}

// childResult reads the child's end: status, last assistant text, failure,
// and its state when it Completed (SA5, SA6).
func (e *Engine) childResult(rc *runCtl) (backend.DelegateResult, error) {
	ctx := context.Background()
	r, err := e.store.Run(ctx, rc.rec.ID)
	if err != nil {
		return backend.DelegateResult{}, fmt.Errorf("read sub-agent %s: %w", rc.rec.ID, err)
	}
	s := r.Summary()
	out := backend.DelegateResult{ChildRunID: s.ID, Status: s.State, DoneReason: s.DoneReason, Failure: s.Failure}
	msgs, err := e.store.Messages(ctx, s.SessionID)
	if err != nil {
		return out, fmt.Errorf("read sub-agent %s transcript: %w", rc.rec.ID, err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == backend.RoleAssistant && msgs[i].Text != "" {
			out.Response = msgs[i].Text
			break
		}
	}
	if s.State == backend.RunCompleted {
		out.State = rc.sub.state.export()
	}
	return out, nil
}

// forwardModel passes the child's text to the parent as it streams (SA7).
type forwardModel struct {
	backend.Model
	forward func(string)
}

func (m *forwardModel) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	return m.Model.Stream(ctx, req, func(s string) {
		delta(s)
		m.forward(s)
	})
}

// ContextWindow keeps the wrapped model's window for the precheck.
func (m *forwardModel) ContextWindow() (window, reserve int) {
	if cw, ok := m.Model.(contextWindowed); ok {
		return cw.ContextWindow()
	}
	return 0, 0
}

// unwrapped is the model without forwarding, for requests whose text is not
// the child's (compaction summaries).
func unwrapped(m backend.Model) backend.Model {
	if f, ok := m.(*forwardModel); ok {
		return f.Model
	}
	return m
}

// withChildTickets adds the pending tickets of a run's live sub-agents to
// its own: a reviewer looking at the parent sees what its delegated work
// waits for. Each ticket still names the child run that asks.
func (e *Engine) withChildTickets(ctx context.Context, parentID string, tks []store.Ticket) ([]store.Ticket, error) {
	e.mu.Lock()
	var children []string
	for id, rc := range e.runs {
		if rc.sub != nil && rc.sub.parentRunID == parentID {
			children = append(children, id)
		}
	}
	e.mu.Unlock()
	sort.Strings(children) // ids are time-ordered: oldest child first
	for _, id := range children {
		more, err := e.store.Tickets(ctx, id, true)
		if err != nil {
			return nil, fmt.Errorf("tickets of sub-agent %s: %w", id, err)
		}
		tks = append(tks, more...)
	}
	return tks, nil
}
