package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/store"
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
	// Site is where the rule is written: backend.RuleSiteRepository (the
	// workspace's .agenthub/policy.toml) or RuleSiteData (the data
	// directory's policy/<workspace-id>.toml); File is that file, relative
	// to the workspace or to the data directory.
	Site string `json:"site"`
	File string `json:"file"`
	// Scope is what the rule applies to: every run of this workspace.
	Scope string `json:"scope"`
	// Key names the rule for Revoke: a digest of the workspace, the file,
	// the rule's name and its content, so that a key from another
	// workspace, or for a rule edited since, revokes nothing.
	Key string `json:"key"`
	// AddedBy, AddedVia, AddedAt and AddedInRun say who added the rule by
	// "always allow", from which surface, when, and in which run; empty
	// for a rule written by hand.
	AddedBy    string          `json:"addedBy,omitempty"`
	AddedVia   backend.Surface `json:"addedVia,omitempty"`
	AddedAt    string          `json:"addedAt,omitempty"`
	AddedInRun string          `json:"addedInRun,omitempty"`
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

// PolicyAPI shows workspace policies and revokes their rules. Rules are
// added only by an "always allow" decision, or by editing a file.
type PolicyAPI struct{ core *Core }

// NewPolicyAPI returns the facade.
func NewPolicyAPI(c *Core) *PolicyAPI { return &PolicyAPI{core: c} }

// rules is where the data directory's workspace rules live and which site
// new ones go to (the rule_location setting; the data directory unless the
// user chose the repository).
func (c *Core) rules() *approval.Rules {
	return &approval.Rules{Dir: filepath.Join(c.cfg.Home, approval.DataPolicyDir), Site: func() (string, error) {
		db, err := c.db()
		if err != nil {
			return "", err
		}
		v, _, err := db.Setting(context.Background(), approval.RuleSiteSetting)
		return v, err
	}}
}

// Rules is where the data directory's workspace rules live (the CLI's
// policy commands read them as the gate does).
func (c *Core) Rules() *approval.Rules { return c.rules() }

// Get returns the effective policy of an allowlisted workspace, read the
// way the approval gate reads it (through the workspace root, never through
// a symbolic link, bounded in size): the repository's rules, then those in
// the data directory, each with its file and, for a rule added by "always
// allow", who added it and when.
func (p *PolicyAPI) Get(workspaceID string) (PolicyView, error) {
	db, err := p.core.db()
	if err != nil {
		return PolicyView{}, err
	}
	if _, err := p.core.workspaceRoot(workspaceID); err != nil {
		return PolicyView{}, err
	}
	view := PolicyView{WorkspaceID: workspaceID, File: approval.PolicyPath, Source: PolicyDefault,
		Rules: []PolicyRule{}, Defaults: DefaultGate()}
	gate := approval.NewGate(p.core.workspaceRoot).WithRules(p.core.rules())
	origins, err := db.RuleOrigins(context.Background(), workspaceID)
	if err != nil {
		return PolicyView{}, err
	}
	var problems []string
	if pol, err := gate.RepoPolicy(workspaceID); err != nil {
		problems = append(problems, err.Error())
	} else {
		view.Rules = append(view.Rules, policyRules(pol, workspaceID, backend.RuleSiteRepository, approval.PolicyPath, origins)...)
	}
	if dataFile, err := approval.DataFile(workspaceID); err == nil {
		if pol, err := gate.DataPolicy(workspaceID); err != nil {
			problems = append(problems, err.Error())
		} else {
			view.Rules = append(view.Rules, policyRules(pol, workspaceID, backend.RuleSiteData, dataFile, origins)...)
		}
	}
	switch {
	case len(problems) > 0:
		view.Source, view.Problem, view.Rules = PolicyBroken, strings.Join(problems, "; "), []PolicyRule{}
	case len(view.Rules) > 0:
		// A file without rules behaves as no file, and shows as one.
		view.Source = PolicyFile
	}
	return view, nil
}

// Revoke removes the rule that key names from its file and audits it
// (policy.rule_revoked). The key must name a rule of this workspace as it
// is now: a key listed for another workspace, a crafted one, or one for a
// rule changed since fails with not_found and changes nothing. Only the
// data directory's engine revokes, as only it decides.
func (p *PolicyAPI) Revoke(workspaceID, key string) (PolicyView, error) {
	if err := p.core.writable(); err != nil {
		return PolicyView{}, err
	}
	db, err := p.core.db()
	if err != nil {
		return PolicyView{}, err
	}
	root, err := p.core.workspaceRoot(workspaceID)
	if err != nil {
		return PolicyView{}, err
	}
	view, err := p.Get(workspaceID)
	if err != nil {
		return PolicyView{}, err
	}
	var rule *PolicyRule
	for i := range view.Rules {
		if view.Rules[i].Key == key {
			rule = &view.Rules[i]
		}
	}
	if rule == nil {
		return PolicyView{}, backend.Errorf(backend.CodeNotFound,
			"this workspace has no such rule (it was changed or removed since the list was read)")
	}
	change, err := p.core.rules().Remove(rule.Site, root, workspaceID, rule.ID)
	if err != nil {
		var be *backend.Error
		if errors.As(err, &be) {
			return PolicyView{}, err
		}
		return PolicyView{}, &backend.Error{Code: backend.CodeConflict, Err: err,
			Message: "the rule could not be removed from " + rule.File + ": " + err.Error(),
			Next:    "Edit " + rule.File + " by hand to remove it."}
	}
	by := p.core.By()
	if _, err := db.Do(context.Background(), func(tx *store.Tx) error {
		return tx.RevokeRule(workspaceID, rule.Site, rule.ID, by, map[string]any{"path": rule.File,
			"class": rule.Class, "pattern": rule.Pattern, "verdict": string(rule.Verdict),
			"beforeSha256": digest(change.Before), "afterSha256": digest(change.After)})
	}); err != nil {
		return PolicyView{}, fmt.Errorf("audit the revocation of %s: %w", rule.ID, err)
	}
	p.core.changed("policy")
	return p.Get(workspaceID)
}

// ruleKey is PolicyRule.Key.
func ruleKey(workspaceID string, r PolicyRule) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{workspaceID, r.Site, r.File, r.Class, r.ID, r.Pattern,
		string(r.Verdict), r.Cwd, r.Method}, "\x00")))
	return hex.EncodeToString(sum[:16])
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func ruleCount(p *approval.Policy) int {
	return len(p.Write) + len(p.Shell) + len(p.Network) + len(p.Git)
}

// policyRules lists the rules of one file class by class, in file order
// within a class (the order traces show them in).
func policyRules(p *approval.Policy, workspaceID, site, file string, origins map[string]store.RuleOrigin) []PolicyRule {
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
	for i := range out {
		out[i].Site, out[i].File, out[i].Scope = site, file, "workspace"
		out[i].Key = ruleKey(workspaceID, out[i])
		if o, ok := origins[site+"/"+out[i].ID]; ok {
			out[i].AddedBy, out[i].AddedVia, out[i].AddedAt, out[i].AddedInRun = o.Actor, o.Surface, o.CreatedAt, o.RunID
		}
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
