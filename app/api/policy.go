package api

import (
	"strconv"
	"strings"

	"agenthub/backend"
	"agenthub/backend/approval"
)

// Policy sources: where a workspace's effective rules come from.
const (
	PolicyDefault = "default" // no policy file: the default gate alone
	PolicyFile    = "file"    // the rules of the file, then the default gate
	PolicyBroken  = "broken"  // a file that cannot be used: every gated action asks
)

// PolicyView is the effective policy of one workspace, read-only, as the
// settings view shows it: the rules of its policy file in file order and
// the default gate that applies where no rule matches.
type PolicyView struct {
	WorkspaceID string `json:"workspaceId"`
	// File is the policy file's workspace-relative path.
	File string `json:"file"`
	// Source is default, file or broken.
	Source string `json:"source"`
	// Problem says why a broken file cannot be used; it names only
	// workspace-relative paths.
	Problem  string       `json:"problem,omitempty"`
	Rules    []PolicyRule `json:"rules"`
	Defaults []GateRow    `json:"defaults"`
}

// PolicyRule is one rule of a policy file.
type PolicyRule struct {
	// Class is write, shell, network or git.
	Class string `json:"class"`
	// ID is the name traces use: the rule's id, or class[n] by position.
	ID string `json:"id"`
	// Pattern is what the rule matches: a glob, an exact command, an argv
	// prefix followed by "…", a host glob or a git action.
	Pattern string          `json:"pattern"`
	Verdict backend.Verdict `json:"verdict"`
	Cwd     string          `json:"cwd,omitempty"`
	Method  string          `json:"method,omitempty"`
	// Ignored marks an allow rule the gate never applies (an allow for
	// push: no rule may switch the gate off for it).
	Ignored bool `json:"ignored,omitempty"`
	// Examples counts the rule's match and not_match examples.
	Examples int `json:"examples"`
}

// GateRow is one row of the default gate (docs/POLICY.md), computed by
// evaluating a sample action under the default policy, so the table shows
// what the gate does rather than what a document says.
type GateRow struct {
	// Action names the row: read_inside, read_outside, write, shell,
	// network, commit, push, publish, deploy, secret, agenthub_write.
	Action  string          `json:"action"`
	Verdict backend.Verdict `json:"verdict"`
	// Rule is the deciding rule of the sample, as approval traces name it.
	Rule string `json:"rule"`
	// Fixed rows cannot be loosened by any rule or grant.
	Fixed bool `json:"fixed"`
}

// PolicyAPI shows workspace policies. It never writes them: rules are added
// only by an "always allow" decision, or by editing the file.
type PolicyAPI struct{ core *Core }

// NewPolicyAPI returns the facade.
func NewPolicyAPI(c *Core) *PolicyAPI { return &PolicyAPI{core: c} }

// Get returns the effective policy of an allowlisted workspace, read the
// way the approval gate reads it (through the workspace root, never through
// a symbolic link, bounded in size).
func (p *PolicyAPI) Get(workspaceID string) (PolicyView, error) {
	if _, err := p.core.db(); err != nil {
		return PolicyView{}, err
	}
	if _, err := p.core.workspaceRoot(workspaceID); err != nil {
		return PolicyView{}, err
	}
	view := PolicyView{WorkspaceID: workspaceID, File: approval.PolicyPath, Source: PolicyDefault,
		Rules: []PolicyRule{}, Defaults: DefaultGate()}
	pol, err := approval.NewGate(p.core.workspaceRoot).Policy(workspaceID)
	switch {
	case err != nil:
		view.Source, view.Problem = PolicyBroken, err.Error()
	case ruleCount(pol) > 0:
		// A file without rules behaves as no file, and shows as one.
		view.Source, view.Rules = PolicyFile, policyRules(pol)
	}
	return view, nil
}

func ruleCount(p *approval.Policy) int {
	return len(p.Write) + len(p.Shell) + len(p.Network) + len(p.Git)
}

// policyRules lists the rules class by class, in file order within a class
// (the order traces show them in).
func policyRules(p *approval.Policy) []PolicyRule {
	out := make([]PolicyRule, 0, ruleCount(p))
	for i, r := range p.Write {
		out = append(out, PolicyRule{Class: "write", ID: name("write", i, r.ID), Pattern: r.Glob, Verdict: r.Verdict,
			Examples: len(r.Match) + len(r.NotMatch)})
	}
	for i, r := range p.Shell {
		pattern := r.Command
		if pattern == "" {
			pattern = strings.Join(r.Prefix, " ") + " …"
		}
		out = append(out, PolicyRule{Class: "shell", ID: name("shell", i, r.ID), Pattern: pattern, Verdict: r.Verdict,
			Cwd: r.Cwd, Examples: len(r.Match) + len(r.NotMatch)})
	}
	for i, r := range p.Network {
		out = append(out, PolicyRule{Class: "network", ID: name("network", i, r.ID), Pattern: r.Host,
			Verdict: r.Verdict, Method: strings.ToUpper(r.Method), Examples: len(r.Match) + len(r.NotMatch)})
	}
	for i, r := range p.Git {
		ignored := r.Verdict == backend.Allow && backend.ActionKind(r.Action).AlwaysAsks()
		out = append(out, PolicyRule{Class: "git", ID: name("git", i, r.ID), Pattern: r.Action, Verdict: r.Verdict,
			Ignored: ignored, Examples: len(r.Match) + len(r.NotMatch)})
	}
	return out
}

// name mirrors the approval package's trace names: the id, or class[n].
func name(class string, i int, id string) string {
	if id != "" {
		return id
	}
	return class + "[" + strconv.Itoa(i+1) + "]"
}

// gateSamples are the default gate's rows and a sample action for each.
var gateSamples = []struct {
	row    string
	action approval.Action
}{
	{"read_inside", approval.Action{Kind: backend.ActionRead, Path: "README.md"}},
	{"read_outside", approval.Action{Kind: backend.ActionRead, Path: "../outside.txt"}},
	{"write", approval.Action{Kind: backend.ActionWrite, Path: "src/main.go"}},
	{"shell", approval.Action{Kind: backend.ActionShell, Command: "make test"}},
	{"network", approval.Action{Kind: backend.ActionNetwork, Method: "GET", URL: "https://example.com/"}},
	{"commit", approval.Action{Kind: backend.ActionCommit}},
	{"push", approval.Action{Kind: backend.ActionPush}},
	{"publish", approval.Action{Kind: backend.ActionPublish}},
	{"deploy", approval.Action{Kind: backend.ActionDeploy}},
	{"secret", approval.Action{Kind: backend.ActionRead, Path: ".env"}},
	{"agenthub_write", approval.Action{Kind: backend.ActionWrite, Path: approval.PolicyPath}},
}

// DefaultGate evaluates each sample under the default policy.
func DefaultGate() []GateRow {
	def := approval.DefaultPolicy()
	rows := make([]GateRow, 0, len(gateSamples))
	for _, s := range gateSamples {
		r := def.Evaluate(s.action)
		rule := r.RuleID
		for _, step := range r.Trace {
			if step.Matched && step.Verdict == r.Verdict && strings.HasPrefix(step.Rule, "builtin:") {
				rule = step.Rule // the built-in denial, not the tally's summary
				break
			}
		}
		fixed := r.Verdict == backend.Deny && strings.HasPrefix(rule, "builtin:") || s.action.Kind.AlwaysAsks()
		rows = append(rows, GateRow{Action: s.row, Verdict: r.Verdict, Rule: rule, Fixed: fixed})
	}
	return rows
}
