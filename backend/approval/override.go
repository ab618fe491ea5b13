package approval

import (
	"fmt"
	"strings"

	"agenthub/backend"
)

// RuleProfilePrefix starts the trace steps of a profile's policy
// overrides.
const RuleProfilePrefix = "profile:"

// ValidateOverrides checks a profile's policy overrides: rules of the
// workspace file's classes (write, shell, network, git, mcp) with the same
// syntax, whose verdicts may only be ask or deny. Overrides can make the
// gate stricter, never looser.
func (p *Policy) ValidateOverrides() error {
	if p.Version != 0 && p.Version != PolicyVersion {
		return fmt.Errorf("policy: version = %d is not supported (leave it out, or write version = %d)", p.Version, PolicyVersion)
	}
	if err := p.validate(); err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	if len(p.Env) > 0 {
		return fmt.Errorf("policy: env: a profile may only tighten the workspace policy, not let commands set more variables")
	}
	for i, r := range p.Shell {
		if len(r.Env) > 0 {
			return fmt.Errorf("policy: shell rule %s: env: a profile may only tighten the workspace policy", ruleName("shell", i, r.ID))
		}
	}
	check := func(class string, i int, id string, v backend.Verdict) error {
		if v == backend.Allow {
			return fmt.Errorf("policy: %s rule %s: a profile may only tighten the workspace policy (ask or deny), not allow",
				class, ruleName(class, i, id))
		}
		return nil
	}
	var errs []error
	for i, r := range p.Write {
		errs = append(errs, check("write", i, r.ID, r.Verdict))
	}
	for i, r := range p.Shell {
		errs = append(errs, check("shell", i, r.ID, r.Verdict))
	}
	for i, r := range p.Network {
		errs = append(errs, check("network", i, r.ID, r.Verdict))
	}
	for i, r := range p.Git {
		errs = append(errs, check("git", i, r.ID, r.Verdict))
	}
	for i, r := range p.MCP {
		errs = append(errs, check("mcp", i, r.ID, r.Verdict))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Empty reports whether the policy has no rules.
func (p *Policy) Empty() bool {
	return p == nil || len(p.Write)+len(p.Shell)+len(p.Network)+len(p.Git)+len(p.MCP) == 0
}

// Tighten applies a profile's overrides to the workspace gate's result for
// req: when one of the overrides' rules asks or denies and that is
// stricter than res (deny > ask > allow), that verdict wins and names the
// rule as "profile:<id>". The overrides' steps are appended to the trace
// either way, so the trace shows every rule evaluated. Class defaults and
// built-in steps of the overrides' own evaluation never change res: the
// workspace gate already applied them.
func Tighten(res backend.PolicyResult, over *Policy, req backend.GateRequest) backend.PolicyResult {
	if over.Empty() {
		return res
	}
	a, err := ActionOf(req)
	if err != nil {
		return res // the workspace gate already asked (or denied) for an unreadable subject
	}
	o := over.Evaluate(a)
	for _, s := range o.Trace {
		if strings.HasPrefix(s.Rule, "default:") || strings.HasPrefix(s.Rule, "builtin:") {
			continue
		}
		s.Rule = RuleProfilePrefix + s.Rule
		res.Trace = append(res.Trace, s)
	}
	if strings.HasPrefix(o.RuleID, "default:") || strings.HasPrefix(o.RuleID, "builtin:") || o.RuleID == "" {
		return res
	}
	if strictness(o.Verdict) > strictness(res.Verdict) {
		res.Verdict, res.RuleID = o.Verdict, RuleProfilePrefix+o.RuleID
		res.Reason = fmt.Sprintf("the profile's rule %s: %s", o.RuleID, o.Verdict)
	}
	return res
}

// strictness orders verdicts for tightening; an unknown verdict asks.
func strictness(v backend.Verdict) int {
	switch v {
	case backend.Allow:
		return 0
	case backend.Deny:
		return 2
	}
	return 1
}
