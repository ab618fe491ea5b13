package engine

import (
	"context"

	"agenthub/backend"
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
