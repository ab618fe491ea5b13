package backend

import (
	"context"
	"encoding/json"
)

// This file is the vocabulary of sub-agents (run-model.md §10): what a tool
// asks for when it delegates a task to a child run, and what comes back.

// Delegator starts a child run for a tool call and waits for its end. The
// engine implements it and hands it to tools through the context of their
// Execute ([DelegatorFrom]).
type Delegator interface {
	Delegate(ctx context.Context, req DelegateRequest) (DelegateResult, error)
}

// DelegateRequest is one delegation. Its input is fresh (SA2): the child
// sees the task and the seed, never the parent's transcript.
type DelegateRequest struct {
	ParentRunID  string
	ParentCallID string
	// Profile names the child's agent profile; empty means the parent's.
	Profile string
	Task    string
	// Tools restricts the child's tools to these names (within what the
	// profile offers); empty means every tool the profile offers except
	// delegation itself.
	Tools []string
	// Seed sets the child's state keys before its first step; a key the
	// child's profile does not register fails the child (SA3).
	Seed map[string]json.RawMessage
	// Delta receives the child's text as it streams (SA7); it must not block.
	Delta func(text string)
}

// DelegateResult is a child's end, returned to the parent tool (SA5).
type DelegateResult struct {
	ChildRunID string   `json:"childRunId"`
	Status     RunState `json:"childStatus"`
	DoneReason string   `json:"doneReason,omitempty"`
	// Response is the child's last assistant text.
	Response string   `json:"response,omitempty"`
	Failure  *Failure `json:"failure,omitempty"`
	// State is exported only from a Completed child (SA6).
	State map[string]json.RawMessage `json:"state,omitempty"`
}

type delegatorKey struct{}

// WithDelegator returns ctx carrying d, for a tool's Execute.
func WithDelegator(ctx context.Context, d Delegator) context.Context {
	return context.WithValue(ctx, delegatorKey{}, d)
}

// DelegatorFrom returns the delegator of a tool's context, if the runtime
// offers one.
func DelegatorFrom(ctx context.Context) (Delegator, bool) {
	d, ok := ctx.Value(delegatorKey{}).(Delegator)
	return d, ok && d != nil
}
