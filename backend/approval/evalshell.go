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
		return p.evalUnparsed(line, parsed.Unsupported)
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
		for name := range a.Env {
			part.Env = append(part.Env, name) // the tool's own env argument counts as an assignment
		}
		results = append(results, p.evalPart(part, a.Cwd, label, a.Network))
	}
	return combine(backend.ActionShell, results)
}

// evalPart decides one simple command. network is whether the command
// asks for network access: an allow rule that does not say network = true
// is then ignored (the command asks), as the network is a capability of
// its own that the rule's author did not grant.
func (p *Policy) evalPart(part Part, cwd, at string, network bool) backend.PolicyResult {
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
	if part.Opaque != "" {
		t.note("builtin:opaque"+at, part.Opaque, backend.Ask)
	}
	var envLists = map[string][]string{}
	for i, r := range p.Shell {
		name := ruleName("shell", i, r.ID) + at
		deny := r.Verdict == backend.Deny
		matched := shellRuleMatch(r, part, cwd, deny)
		if matched && r.Verdict == backend.Allow && (kind.AlwaysAsks() || kind == backend.ActionSecret || part.Opaque != "" ||
			(network && !r.Network)) {
			why := "the gate cannot be switched off for " + string(kind)
			switch {
			case part.Opaque != "":
				why = "what it runs cannot be seen: " + part.Opaque
			case network && !r.Network && !kind.AlwaysAsks() && kind != backend.ActionSecret:
				why = "the command asks for network access, which the rule does not allow (network = true)"
			}
			t.note("ignored:"+name, rulePattern(r)+" ("+why+")", backend.Allow)
			continue
		}
		envLists[ruleName("shell", i, r.ID)] = r.Env
		t.step(name, rulePattern(r), matched, r.Verdict, shellScore(r))
	}
	if kind == backend.ActionCommit || kind == backend.ActionPush {
		p.gitRules(t, kind)
	}
	res := t.outcome(kind, backend.Ask)
	if res.Verdict == backend.Allow {
		if reason := allowCap(part, p.Env, envLists[res.RuleID]); reason != "" {
			t.note("cap:"+reason+at, strings.Join(part.Argv, " "), backend.Ask)
			res.Verdict, res.Trace = backend.Ask, t.trace
			res.Reason = fmt.Sprintf("rule %s allows it, but %s always asks", res.RuleID, reason)
		}
	}
	if part.Opaque != "" && res.Verdict == backend.Ask && res.RuleID == "default:"+string(kind) {
		res.RuleID = "builtin:opaque"
		res.Reason = "the policy cannot see what this command runs (" + part.Opaque + "): ask"
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
		if err != nil {
			return false
		}
		if deny && (len(part.Wrappers) > 0 || part.Opaque != "") && containsRun(part.seen, w) {
			return true
		}
		if part.Dynamic || len(part.Argv) != len(w) {
			return false
		}
		words = w
	}
	if len(words) == 0 {
		return false
	}
	// A deny rule also matches its words anywhere in the words the
	// wrappers around the part consumed, or in an opaque part's program:
	// what cannot be seen through may still not run a denied command.
	if deny && (len(part.Wrappers) > 0 || part.Opaque != "") && containsRun(part.seen, words) {
		return true
	}
	// A glob as the command word (/bin/r? x) may name the denied program.
	if deny && part.Opaque != "" && len(part.Argv) > 0 && globNames(part.Argv[0], words[0]) {
		return true
	}
	if len(part.Argv) < len(words) || part.staticPrefix() < len(words) {
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

// containsRun reports whether words appear one after the other in seen
// (the first also by base name: /usr/bin/rm is rm).
func containsRun(seen, words []string) bool {
	for i := 0; i+len(words) <= len(seen); i++ {
		ok := true
		for j, w := range words {
			if seen[i+j] != w && (j != 0 || path.Base(seen[i]) != w) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func cleanCwd(c string) string {
	if c == "" {
		return "."
	}
	return path.Clean(strings.ReplaceAll(c, `\`, "/"))
}

// allowCap names what keeps an allowed part at Ask: elevation, writes
// through redirection, a part the parser cannot see through, or an
// environment variable that is not on the allow-list ([SafeEnv] plus the
// policy's and the rule's own env lists).
func allowCap(part Part, envLists ...[]string) string {
	if part.Elevated {
		return "sudo"
	}
	if part.Redirect {
		return "output redirection"
	}
	if part.Opaque != "" {
		return part.Opaque
	}
	for _, name := range part.Env {
		if !envListed(name, append([][]string{SafeEnv}, envLists...)...) {
			return "environment variable " + name + " (not on the environment allow-list)"
		}
	}
	return ""
}

// evalUnparsed handles a command the parser cannot parse: never Allow;
// Deny when a secret path, or the words of a deny rule, appear anywhere in
// its text.
func (p *Policy) evalUnparsed(line, reason string) backend.PolicyResult {
	t := newTally()
	kind := backend.ActionShell
	tokens := strings.FieldsFunc(line, func(r rune) bool {
		return strings.ContainsRune(" \t\r\n;|&()<>`$\"'{}", r)
	})
	opaque := Part{Opaque: reason, seen: programTokens([]string{line})}
	for i, r := range p.Shell {
		if r.Verdict == backend.Deny && shellRuleMatch(r, opaque, r.Cwd, true) {
			t.step(ruleName("shell", i, r.ID), rulePattern(r), true, backend.Deny, shellScore(r))
		}
	}
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

// globNames reports whether a command word that is a glob pattern could
// name the program word (by base name, as deny rules match).
func globNames(pattern, word string) bool {
	if !strings.ContainsAny(pattern, "*?[") {
		return false
	}
	ok, err := path.Match(path.Base(pattern), path.Base(word))
	return err == nil && ok
}
