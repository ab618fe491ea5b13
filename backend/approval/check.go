package approval

import (
	"fmt"
	"strings"

	"agenthub/backend"
)

// ExampleFailure is a rule example that does not behave as declared.
type ExampleFailure struct {
	Rule    string `json:"rule"`
	Example string `json:"example"`
	Want    string `json:"want"` // "match" or "not_match"
	Problem string `json:"problem"`
}

func (f ExampleFailure) String() string {
	return fmt.Sprintf("rule %s: %q should %s: %s", f.Rule, f.Example, strings.ReplaceAll(f.Want, "_", " "), f.Problem)
}

// Check verifies every rule's match / not_match examples against the rule's
// own pattern (it backs `agenthub policy check`). Write examples are paths,
// shell and git examples command lines, network examples "URL" or
// "METHOD URL". A shell allow or ask rule matches a command when it matches
// every part, a deny rule when it matches any part, as in evaluation.
func (p *Policy) Check() []ExampleFailure {
	var out []ExampleFailure
	run := func(rule string, match, notMatch []string, test func(string) (bool, string)) {
		for _, want := range []struct {
			name string
			list []string
			is   bool
		}{{"match", match, true}, {"not_match", notMatch, false}} {
			for _, ex := range want.list {
				got, problem := test(ex)
				if problem == "" && got != want.is {
					problem = "it does not"
					if got {
						problem = "it does"
					}
				}
				if problem != "" {
					out = append(out, ExampleFailure{Rule: rule, Example: ex, Want: want.name, Problem: problem})
				}
			}
		}
	}
	for i, r := range p.Write {
		run(ruleName("write", i, r.ID), r.Match, r.NotMatch, func(ex string) (bool, string) {
			clean, ok := cleanRel(ex)
			if !ok {
				return false, "not a workspace-relative path"
			}
			return globMatch(r.Glob, clean, r.Verdict == backend.Deny), ""
		})
	}
	for i, r := range p.Shell {
		run(ruleName("shell", i, r.ID), r.Match, r.NotMatch, func(ex string) (bool, string) {
			return shellExample(ex, func(part Part) bool {
				if r.Verdict == backend.Allow && part.Opaque != "" {
					return false // evaluation ignores an allow for what it cannot see through
				}
				return shellRuleMatch(r, part, r.Cwd, r.Verdict == backend.Deny)
			}, r.Verdict == backend.Deny)
		})
	}
	for i, r := range p.Network {
		run(ruleName("network", i, r.ID), r.Match, r.NotMatch, func(ex string) (bool, string) {
			a := networkExample(ex)
			if hostOf(a.URL) == "" {
				return false, "not a URL"
			}
			single := &Policy{Version: PolicyVersion, Network: []NetworkRule{r}}
			return single.Evaluate(a).RuleID == ruleName("network", 0, r.ID), ""
		})
	}
	for i, r := range p.Git {
		run(ruleName("git", i, r.ID), r.Match, r.NotMatch, func(ex string) (bool, string) {
			return shellExample(ex, func(part Part) bool { return string(classify(part)) == r.Action }, true)
		})
	}
	for i, r := range p.MCP {
		run(ruleName("mcp", i, r.ID), r.Match, r.NotMatch, func(ex string) (bool, string) {
			a, ok := mcpExample(ex)
			if !ok {
				return false, `write "server/tool" or "server/tool read-only"`
			}
			return mcpRuleMatch(r, a.Server, strings.TrimPrefix(a.Tool, MCPToolPrefix+a.Server+"__"), a.ReadOnly), ""
		})
	}
	return out
}

// shellExample applies match to the parts of a command line: any part when
// anyPart, else every part.
func shellExample(ex string, match func(Part) bool, anyPart bool) (bool, string) {
	parsed := ParseShell(ex)
	if parsed.Unsupported != "" {
		return false, "the example cannot be parsed: " + parsed.Unsupported
	}
	if len(parsed.Parts) == 0 {
		return false, "empty example"
	}
	for _, part := range parsed.Parts {
		if m := match(part); m == anyPart {
			return m, ""
		}
	}
	return !anyPart, ""
}

func networkExample(ex string) Action {
	a := Action{Kind: backend.ActionNetwork, URL: strings.TrimSpace(ex)}
	if f := strings.Fields(ex); len(f) == 2 {
		a.Method, a.URL = f[0], f[1]
	}
	return a
}

// ActionFromText turns the argument of `agenthub policy explain` into an
// action: an explicit "read:", "write:", "shell:" or "network:" prefix; else
// a URL (optionally after an HTTP method) is network, text with spaces is a
// shell command, and a single word is a write to that path. "mcp:server/tool"
// (optionally followed by "read-only") is a call of an MCP tool.
func ActionFromText(s string) Action {
	if rest, ok := strings.CutPrefix(s, string(backend.ActionMCP)+":"); ok {
		if a, ok := mcpExample(rest); ok {
			return a
		}
		return Action{Kind: backend.ActionMCP}
	}
	for _, k := range []backend.ActionKind{backend.ActionRead, backend.ActionWrite, backend.ActionShell, backend.ActionNetwork} {
		if rest, ok := strings.CutPrefix(s, string(k)+":"); ok {
			return textAction(k, strings.TrimSpace(rest))
		}
	}
	f := strings.Fields(s)
	switch {
	case len(f) >= 1 && strings.Contains(f[len(f)-1], "://") && len(f) <= 2:
		return networkExample(s)
	case len(f) > 1:
		return textAction(backend.ActionShell, s)
	}
	return textAction(backend.ActionWrite, strings.TrimSpace(s))
}

func textAction(k backend.ActionKind, s string) Action {
	switch k {
	case backend.ActionShell:
		return Action{Kind: k, Command: s, Cwd: "."}
	case backend.ActionNetwork:
		return networkExample(s)
	}
	return Action{Kind: k, Path: s}
}

// Explain renders a decision and its rule trace for people (it backs
// `agenthub policy explain`).
func (p *Policy) Explain(a Action) string { return ExplainResult(p.Evaluate(a), a) }

// ExplainResult renders a decision (from [Gate.Decide] or
// [Policy.Evaluate]) and its trace for people.
func ExplainResult(r backend.PolicyResult, a Action) string {
	var b strings.Builder
	fmt.Fprintf(&b, "decision: %s\nkind: %s\nrule: %s\nreason: %s\n", r.Verdict, r.Kind, r.RuleID, r.Reason)
	if g, err := GrantPattern(a); err == nil && r.Verdict == backend.Ask && r.RuleID != RuleBrokenPolicy {
		fmt.Fprintf(&b, "grant offered: %s\n", g.Preview())
	}
	b.WriteString("trace:\n")
	for i, s := range r.Trace {
		mark := "  no match"
		if s.Matched {
			mark = "  => " + string(s.Verdict)
		}
		fmt.Fprintf(&b, "  %2d. %-28s %-40q%s\n", i+1, s.Rule, s.Pattern, mark)
	}
	return b.String()
}
