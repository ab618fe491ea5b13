package approval

import (
	"fmt"
	"net/url"
	"strings"

	"agenthub/backend"

	"github.com/bmatcuk/doublestar/v4"
)

// Action is a gated request as the policy sees it. Paths are
// workspace-relative with "/"; only the fields of its Kind matter.
type Action struct {
	Kind      backend.ActionKind `json:"kind"`
	Tool      string             `json:"tool,omitempty"`
	Workspace string             `json:"workspace,omitempty"` // workspace id, bound into patch subjects
	Path      string             `json:"path,omitempty"`      // read, write
	Paths     []string           `json:"paths,omitempty"`     // patch: every file it touches
	Patch     []byte             `json:"-"`                   // the exact patch (or new content) shown
	Preimages []Preimage         `json:"preimages,omitempty"` // current state of Path/Paths, see HashPreimages
	Command   string             `json:"command,omitempty"`   // shell command line
	Argv      []string           `json:"argv,omitempty"`      // argv exactly as it will execute
	Cwd       string             `json:"cwd,omitempty"`       // workspace-relative
	Env       map[string]string  `json:"env,omitempty"`       // the environment allow-list only
	Method    string             `json:"method,omitempty"`
	URL       string             `json:"url,omitempty"`
	Server    string             `json:"server,omitempty"`    // mcp: the server's name
	ReadOnly  bool               `json:"read_only,omitempty"` // mcp: the server annotates the tool readOnlyHint
	// TrustReadOnly (mcp) is the profile's allow_read_only for the server:
	// a read-only call no rule matches is allowed instead of asking.
	TrustReadOnly bool   `json:"allow_read_only,omitempty"`
	Remote        string `json:"remote,omitempty"` // commit, push, publish, deploy
	Ref           string `json:"ref,omitempty"`
	Target        string `json:"target,omitempty"`
	// Network (shell): the command asks for network access with its
	// approval; only an allow rule that says network = true allows it.
	Network bool `json:"network,omitempty"`
}

// paths returns every path an action touches.
func (a Action) paths() []string {
	if len(a.Paths) > 0 {
		return a.Paths
	}
	if a.Path != "" {
		return []string{a.Path}
	}
	return nil
}

// commandLine is the shell text to parse: Command, or Argv quoted.
func (a Action) commandLine() string {
	if a.Command != "" || len(a.Argv) == 0 {
		return a.Command
	}
	q := make([]string, len(a.Argv))
	for i, w := range a.Argv {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}

func shellQuote(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@,+%") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// tally collects trace steps and the most specific match per verdict.
type tally struct {
	trace []backend.TraceStep
	best  map[backend.Verdict]scored
}

type scored struct {
	rule  string
	score int
}

func newTally() *tally { return &tally{best: map[backend.Verdict]scored{}} }

func (t *tally) step(rule, pattern string, matched bool, v backend.Verdict, score int) {
	s := backend.TraceStep{Rule: rule, Pattern: pattern, Matched: matched}
	if matched {
		s.Verdict = v
		id, _, _ := strings.Cut(rule, " @ ") // the trace names the path or part, the result the rule
		if b, ok := t.best[v]; !ok || score > b.score {
			t.best[v] = scored{rule: id, score: score}
		}
	}
	t.trace = append(t.trace, s)
}

// note records a matched step that does not take part in precedence (an
// ignored allow, a cap).
func (t *tally) note(rule, pattern string, v backend.Verdict) {
	t.trace = append(t.trace, backend.TraceStep{Rule: rule, Pattern: pattern, Matched: true, Verdict: v})
}

// outcome applies Deny > Allow > Ask, then the class default.
func (t *tally) outcome(kind backend.ActionKind, def backend.Verdict) backend.PolicyResult {
	for _, v := range []backend.Verdict{backend.Deny, backend.Allow, backend.Ask} {
		if b, ok := t.best[v]; ok {
			return backend.PolicyResult{Verdict: v, Kind: kind, RuleID: b.rule, Trace: t.trace,
				Reason: fmt.Sprintf("rule %s: %s", b.rule, v)}
		}
	}
	rule := "default:" + string(kind)
	t.note(rule, "", def)
	return backend.PolicyResult{Verdict: def, Kind: kind, RuleID: rule, Trace: t.trace,
		Reason: fmt.Sprintf("no rule matched: the default for %s is %s", kind, def)}
}

// Evaluate decides an action: Deny > Allow > Ask, the most specific rule
// within a tier, the class default without a match, Ask for an unknown
// class. The result always carries the full trace.
func (p *Policy) Evaluate(a Action) backend.PolicyResult {
	if p == nil {
		p = DefaultPolicy()
	}
	switch a.Kind {
	case backend.ActionRead:
		return p.evalRead(a)
	case backend.ActionWrite, backend.ActionPatch:
		return p.evalWrite(a)
	case backend.ActionShell:
		return p.evalShell(a)
	case backend.ActionNetwork:
		return p.evalNetwork(a)
	case backend.ActionMCP:
		return p.evalMCP(a)
	case backend.ActionCommit, backend.ActionPush:
		t := newTally()
		p.gitRules(t, a.Kind)
		return t.outcome(a.Kind, backend.Ask)
	case backend.ActionPublish, backend.ActionDeploy:
		return newTally().outcome(a.Kind, backend.Ask)
	case backend.ActionSecret:
		t := newTally()
		t.step("builtin:secret", "secret access", true, backend.Deny, 0)
		return t.outcome(a.Kind, backend.Deny)
	}
	t := newTally()
	t.note("default:unknown", string(a.Kind), backend.Ask)
	return backend.PolicyResult{Verdict: backend.Ask, Kind: a.Kind, RuleID: "default:unknown", Trace: t.trace,
		Reason: fmt.Sprintf("unknown action class %q: ask", a.Kind)}
}

func (p *Policy) evalRead(a Action) backend.PolicyResult {
	t := newTally()
	for _, raw := range a.paths() {
		clean, ok := cleanRel(raw)
		if !ok {
			t.step("builtin:outside", raw, true, backend.Deny, 0)
			continue
		}
		if secret, pat := SecretPath(clean); secret {
			t.step("builtin:secret", pat, true, backend.Deny, 0)
		}
	}
	if len(a.paths()) == 0 {
		t.step("builtin:outside", "(no path)", true, backend.Deny, 0)
	}
	return t.outcome(backend.ActionRead, backend.Allow)
}

// evalWrite evaluates every path a write or patch touches: any Deny denies,
// Allow needs every path allowed, anything else asks.
func (p *Policy) evalWrite(a Action) backend.PolicyResult {
	paths := a.paths()
	if len(paths) == 0 {
		t := newTally()
		t.step("builtin:outside", "(no path)", true, backend.Deny, 0)
		return t.outcome(a.Kind, backend.Ask)
	}
	results := make([]backend.PolicyResult, 0, len(paths))
	for _, raw := range paths {
		results = append(results, p.evalWritePath(a.Kind, raw, len(paths) > 1))
	}
	return combine(a.Kind, results)
}

func (p *Policy) evalWritePath(kind backend.ActionKind, raw string, label bool) backend.PolicyResult {
	t := newTally()
	clean, ok := cleanRel(raw)
	if !ok {
		t.step("builtin:outside", raw, true, backend.Deny, 0)
		return t.outcome(kind, backend.Ask)
	}
	at := ""
	if label {
		at = " @ " + clean
	}
	if agentHubPath(clean) {
		t.step("builtin:agenthub"+at, ".agenthub/**", true, backend.Deny, 0)
	}
	if secret, pat := SecretPath(clean); secret {
		t.step("builtin:secret"+at, pat, true, backend.Deny, 0)
	}
	for i, r := range p.Write {
		t.step(ruleName("write", i, r.ID)+at, r.Glob, globMatch(r.Glob, clean, r.Verdict == backend.Deny), r.Verdict, globScore(r.Glob))
	}
	return t.outcome(kind, backend.Ask)
}

// globMatch matches a workspace-relative path; deny rules also match
// case-insensitively, so case tricks only ever make a rule stricter.
func globMatch(glob, p string, foldCase bool) bool {
	if ok, _ := doublestar.Match(glob, p); ok {
		return true
	}
	if foldCase {
		ok, _ := doublestar.Match(strings.ToLower(glob), strings.ToLower(p))
		return ok
	}
	return false
}

// globScore ranks specificity: literal characters count, wildcards do not.
func globScore(glob string) int {
	n := 0
	for _, c := range glob {
		if !strings.ContainsRune("*?[]{}", c) {
			n++
		}
	}
	return n
}

// combine merges per-part results: Deny if any denies, Allow if all allow,
// else Ask. The kind is the most severe part kind.
func combine(kind backend.ActionKind, results []backend.PolicyResult) backend.PolicyResult {
	out := backend.PolicyResult{Verdict: backend.Allow, Kind: kind}
	var allowIDs []string
	for _, r := range results {
		out.Trace = append(out.Trace, r.Trace...)
		if severity(r.Kind) > severity(out.Kind) {
			out.Kind = r.Kind
		}
		switch {
		case r.Verdict == backend.Deny && out.Verdict != backend.Deny:
			out.Verdict, out.RuleID, out.Reason = backend.Deny, r.RuleID, r.Reason
		case r.Verdict == backend.Ask && out.Verdict == backend.Allow:
			out.Verdict, out.RuleID, out.Reason = backend.Ask, r.RuleID, r.Reason
		case r.Verdict == backend.Allow:
			allowIDs = append(allowIDs, r.RuleID)
		}
	}
	if out.Verdict == backend.Allow {
		out.RuleID = strings.Join(allowIDs, ",")
		out.Reason = "every part is allowed: " + out.RuleID
	}
	if len(results) == 0 {
		out.Verdict, out.Reason = backend.Ask, "nothing to evaluate: ask"
	}
	return out
}

// severity orders kinds for reporting a compound action.
func severity(k backend.ActionKind) int {
	switch k {
	case backend.ActionSecret:
		return 6
	case backend.ActionDeploy:
		return 5
	case backend.ActionPublish:
		return 4
	case backend.ActionPush:
		return 3
	case backend.ActionCommit:
		return 2
	case backend.ActionShell, backend.ActionWrite, backend.ActionPatch, backend.ActionNetwork:
		return 1
	}
	return 0
}

func (p *Policy) evalNetwork(a Action) backend.PolicyResult {
	t := newTally()
	host := hostOf(a.URL)
	u, err := url.Parse(a.URL)
	if err != nil || host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss") {
		t.note("builtin:invalid-url", a.URL, backend.Ask)
		return backend.PolicyResult{Verdict: backend.Ask, Kind: backend.ActionNetwork, RuleID: "builtin:invalid-url",
			Reason: "the URL cannot be parsed: ask", Trace: t.trace}
	}
	method := httpMethod(a.Method)
	for i, r := range p.Network {
		ok, _ := doublestar.Match(strings.ToLower(r.Host), host)
		if r.Method != "" && !strings.EqualFold(r.Method, method) {
			ok = false
		}
		score := globScore(r.Host)
		if r.Method != "" {
			score++
		}
		t.step(ruleName("network", i, r.ID), strings.TrimSpace(strings.ToUpper(r.Method)+" "+r.Host), ok, r.Verdict, score)
	}
	return t.outcome(backend.ActionNetwork, backend.Ask)
}

// gitRules adds the git rules for kind; an allow for push is ignored (AP6).
func (p *Policy) gitRules(t *tally, kind backend.ActionKind) {
	for i, r := range p.Git {
		name := ruleName("git", i, r.ID)
		matched := r.Action == string(kind)
		if matched && r.Verdict == backend.Allow && kind.AlwaysAsks() {
			t.note("ignored:"+name, "git "+r.Action+" (the gate cannot be switched off for "+string(kind)+")", backend.Allow)
			continue
		}
		t.step(name, "git "+r.Action, matched, r.Verdict, 1)
	}
}
