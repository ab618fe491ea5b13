package approval

import (
	"fmt"
	"path"
	"strings"

	"agenthub/backend"
)

// evalShell evaluates a command line part by part: a compound command is
// allowed only if every part is allowed, denied if any part is denied.
func (p *Policy) evalShell(a Action) backend.PolicyResult {
	line := a.commandLine()
	parsed := ParseShell(line)
	if parsed.Unsupported != "" {
		return evalUnparsed(line, parsed.Unsupported)
	}
	if len(parsed.Parts) == 0 {
		t := newTally()
		t.note("builtin:empty", line, backend.Ask)
		return backend.PolicyResult{Verdict: backend.Ask, Kind: backend.ActionShell, RuleID: "builtin:empty",
			Reason: "empty command: ask", Trace: t.trace}
	}
	results := make([]backend.PolicyResult, 0, len(parsed.Parts))
	for i, part := range parsed.Parts {
		label := ""
		if len(parsed.Parts) > 1 {
			label = fmt.Sprintf(" @ part %d", i+1)
		}
		results = append(results, p.evalPart(part, a.Cwd, label))
	}
	return combine(backend.ActionShell, results)
}

func (p *Policy) evalPart(part Part, cwd, at string) backend.PolicyResult {
	t := newTally()
	kind := classify(part)
	for _, w := range append(append(append([]string(nil), part.Argv...), part.Inputs...), part.Outputs...) {
		if secret, pat := SecretPath(w); secret {
			t.step("builtin:secret"+at, pat, true, backend.Deny, 0)
			kind = backend.ActionSecret
		}
	}
	if cred, pat := credentialCommand(part.Argv); cred {
		t.step("builtin:credential"+at, pat, true, backend.Deny, 0)
		kind = backend.ActionSecret
	}
	for _, o := range part.Outputs {
		if c, ok := cleanRel(o); ok && agentHubPath(c) {
			t.step("builtin:agenthub"+at, ".agenthub/**", true, backend.Deny, 0)
		}
	}
	for i, r := range p.Shell {
		name := ruleName("shell", i, r.ID) + at
		deny := r.Verdict == backend.Deny
		matched := shellRuleMatch(r, part, cwd, deny)
		if matched && r.Verdict == backend.Allow && (kind.AlwaysAsks() || kind == backend.ActionSecret) {
			t.note("ignored:"+name, rulePattern(r)+" (the gate cannot be switched off for "+string(kind)+")", backend.Allow)
			continue
		}
		t.step(name, rulePattern(r), matched, r.Verdict, shellScore(r))
	}
	if kind == backend.ActionCommit || kind == backend.ActionPush {
		p.gitRules(t, kind)
	}
	res := t.outcome(kind, backend.Ask)
	if res.Verdict == backend.Allow {
		if reason := allowCap(part); reason != "" {
			t.note("cap:"+reason+at, strings.Join(part.Argv, " "), backend.Ask)
			res.Verdict, res.Trace = backend.Ask, t.trace
			res.Reason = fmt.Sprintf("rule %s allows it, but %s always asks", res.RuleID, reason)
		}
	}
	return res
}

func rulePattern(r ShellRule) string {
	s := r.Command
	if s == "" {
		s = strings.Join(r.Prefix, " ") + " …"
	}
	if r.Cwd != "" {
		s += " (cwd " + r.Cwd + ")"
	}
	return s
}

func shellScore(r ShellRule) int {
	n := 10 * len(r.Prefix)
	if r.Command != "" {
		n = 1000 + len(r.Command)
	}
	if r.Cwd != "" {
		n += 5
	}
	return n
}

// shellRuleMatch compares a rule with one part. Only literal words match
// rule words; an allow rule needs argv[0] spelled exactly as in the rule
// (./git is not git), a deny rule also matches the base name (/usr/bin/rm).
func shellRuleMatch(r ShellRule, part Part, cwd string, deny bool) bool {
	if r.Cwd != "" && cleanCwd(r.Cwd) != cleanCwd(cwd) {
		return false
	}
	words := r.Prefix
	if r.Command != "" {
		w, err := ruleWords(r.Command)
		if err != nil || part.Dynamic || len(part.Argv) != len(w) {
			return false
		}
		words = w
	}
	if len(words) == 0 || len(part.Argv) < len(words) || part.staticPrefix() < len(words) {
		return false
	}
	for i, w := range words {
		if part.Argv[i] == w || (i == 0 && deny && path.Base(part.Argv[0]) == w) {
			continue
		}
		return false
	}
	return true
}

func cleanCwd(c string) string {
	if c == "" {
		return "."
	}
	return path.Clean(strings.ReplaceAll(c, `\`, "/"))
}

// allowCap names what keeps an allowed part at Ask: elevation, writes
// through redirection, or environment variables that change what runs.
func allowCap(part Part) string {
	if part.Elevated {
		return "sudo"
	}
	if part.Redirect {
		return "output redirection"
	}
	for _, name := range part.Env {
		if riskyEnv(name) {
			return "environment variable " + name
		}
	}
	return ""
}

func riskyEnv(name string) bool {
	for _, pre := range []string{"LD_", "DYLD_", "GIT_"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	switch name {
	case "PATH", "BASH_ENV", "ENV", "IFS", "PROMPT_COMMAND", "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP",
		"PERL5OPT", "RUBYOPT", "SHELLOPTS", "HOME":
		return true
	}
	return false
}

// evalUnparsed handles a command the parser does not model: never Allow;
// Deny when a secret path appears anywhere in its text.
func evalUnparsed(line, reason string) backend.PolicyResult {
	t := newTally()
	kind := backend.ActionShell
	tokens := strings.FieldsFunc(line, func(r rune) bool {
		return strings.ContainsRune(" \t\r\n;|&()<>`$\"'{}", r)
	})
	hasGit := false
	for _, tok := range tokens {
		if secret, pat := SecretPath(tok); secret {
			t.step("builtin:secret", pat, true, backend.Deny, 0)
			kind = backend.ActionSecret
		}
		hasGit = hasGit || path.Base(tok) == "git"
		if k := wordKind(tok, hasGit); severity(k) > severity(kind) {
			kind = k
		}
	}
	t.note("builtin:unparsed", reason, backend.Ask)
	if _, denied := t.best[backend.Deny]; denied {
		return t.outcome(kind, backend.Ask)
	}
	return backend.PolicyResult{Verdict: backend.Ask, Kind: kind, RuleID: "builtin:unparsed", Trace: t.trace,
		Reason: "the command uses " + reason + ", which the policy cannot check: ask"}
}

func wordKind(tok string, afterGit bool) backend.ActionKind {
	switch {
	case tok == "deploy":
		return backend.ActionDeploy
	case tok == "publish":
		return backend.ActionPublish
	case tok == "push" && afterGit:
		return backend.ActionPush
	}
	return backend.ActionShell
}
