package approval

import (
	"slices"
	"strings"

	"agenthub/backend"
)

// Gates reports whether p asks or denies some action of kind, whatever its
// subject: the question a runtime's advisory gating must answer before a
// run starts (AD2). Reads are gated (secret files and paths outside the
// workspace are denied); writes and patches always are (.agenthub/ is
// denied, and no rule allows every path without a deny beside it); shell
// always is (sudo, redirections and unparsable commands ask, and no rule
// matches every command); commit, push, publish, deploy and secrets always
// are; network is not when an allow rule matches every host and method and
// no ask or deny rule narrows it. An unknown kind asks, so it is gated.
func (p *Policy) Gates(kind backend.ActionKind) bool {
	if p == nil {
		p = DefaultPolicy()
	}
	if kind != backend.ActionNetwork {
		return true
	}
	open := false
	for _, r := range p.Network {
		if r.Verdict != backend.Allow {
			return true
		}
		open = open || r.Method == "" && strings.Trim(r.Host, "*") == ""
	}
	return !open
}

// Gates implements [backend.KindGate]: the workspace policy's [Policy.Gates].
// A policy file that cannot be used makes every action ask, so every kind
// is gated (fail closed).
func (g *Gate) Gates(workspaceID string, kind backend.ActionKind) bool {
	p, err := g.Policy(workspaceID)
	if err != nil {
		return true
	}
	return p.Gates(kind)
}

// Restricts reports whether p, a profile's overrides ([Tighten]), holds an
// ask or deny rule for some action of kind: the overrides then gate that
// kind, whatever the workspace policy allows. Overrides have no read rules.
func (p *Policy) Restricts(kind backend.ActionKind) bool {
	if p == nil {
		return false
	}
	restricts := func(v backend.Verdict) bool { return v != backend.Allow }
	switch kind {
	case backend.ActionWrite, backend.ActionPatch:
		return slices.ContainsFunc(p.Write, func(r WriteRule) bool { return restricts(r.Verdict) })
	case backend.ActionShell:
		return slices.ContainsFunc(p.Shell, func(r ShellRule) bool { return restricts(r.Verdict) })
	case backend.ActionNetwork:
		return slices.ContainsFunc(p.Network, func(r NetworkRule) bool { return restricts(r.Verdict) })
	case backend.ActionCommit, backend.ActionPush:
		return slices.ContainsFunc(p.Git, func(r GitRule) bool { return r.Action == string(kind) && restricts(r.Verdict) })
	case backend.ActionMCP:
		return slices.ContainsFunc(p.MCP, func(r MCPRule) bool { return restricts(r.Verdict) })
	}
	return false
}
