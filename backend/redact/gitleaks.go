package redact

import (
	_ "embed"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// gitleaksConfig is gitleaks' default rule set (gitleaks.toml, copied
// unchanged from github.com/zricethezav/gitleaks/v8 v8.30.1; MIT License,
// see GITLEAKS-LICENSE). It is the maintained part of our rules: to update
// it, copy the newer upstream file over it and run this package's tests,
// which check the shared corpus in testdata/.
//
// gitleaks itself is not linked: as a library it was 6 to 30 times slower
// per text than this interpreter of its rules and pulled in its CLI's
// dependencies (docs/PERFORMANCE.md, "Secret redactor"). The interpreter
// follows gitleaks' detect.Detector: keywords as a prefilter, the rule's
// regexp, its secret group, its entropy threshold, and its allow-lists and
// the global one. What differs, on purpose:
//   - there is no file path: rules limited to paths apply everywhere, and
//     path-only rules (a .p12 file's name) do not apply;
//   - rules run line by line, except the few whose expression can cross a
//     line (see [crossesLines]), which run on the whole text;
//   - no decoding pass (gitleaks' --max-decode-depth is 0 by default too).
//
//go:embed gitleaks.toml
var gitleaksConfig []byte

// gitleaksFile is the part of gitleaks.toml this package reads.
type gitleaksFile struct {
	Allowlist gitleaksAllowlist `toml:"allowlist"`
	Rules     []struct {
		ID          string              `toml:"id"`
		Regex       string              `toml:"regex"`
		SecretGroup int                 `toml:"secretGroup"`
		Entropy     float64             `toml:"entropy"`
		Keywords    []string            `toml:"keywords"`
		Allowlists  []gitleaksAllowlist `toml:"allowlists"`
	} `toml:"rules"`
}

type gitleaksAllowlist struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
}

// allowlist is a compiled gitleaks allow-list: a finding it matches is not
// a secret.
type allowlist struct {
	target    string         // "" (the secret), "match" or "line"
	regexes   *regexp.Regexp // gitleaks' regexes as one alternation, or nil
	stopWords wordIndex
	hasStops  bool
	and       bool // every criterion must hold, not one
	// unmet: an AND list with a path or commit criterion, which never holds
	// here, so the list never allows anything.
	unmet bool
}

// allows reports whether the list exempts secret, found in match on line.
func (a *allowlist) allows(secret, match, line string) bool {
	if a.unmet {
		return false
	}
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	byRegex := a.regexes != nil && target != "" && a.regexes.MatchString(target)
	byStop := a.hasStops && secret != "" && a.stopWords.any(secret)
	if a.and {
		return (a.regexes == nil || byRegex) && (!a.hasStops || byStop) && (a.regexes != nil || a.hasStops)
	}
	return byRegex || byStop
}

func compileAllowlist(in gitleaksAllowlist) (allowlist, error) {
	a := allowlist{target: in.RegexTarget, and: strings.EqualFold(in.Condition, "AND")}
	a.unmet = a.and && (len(in.Paths) > 0 || len(in.Commits) > 0)
	var alts []string
	for _, src := range in.Regexes {
		if _, err := regexp.Compile(src); err != nil {
			return a, fmt.Errorf("allow-list regexp %q: %w", src, err)
		}
		alts = append(alts, "(?:"+src+")")
	}
	if len(alts) > 0 {
		// One pass instead of one per expression, as gitleaks does too;
		// flags such as (?i) stay inside their group.
		re, err := regexp.Compile(strings.Join(alts, "|"))
		if err != nil {
			return a, fmt.Errorf("allow-list regexps: %w", err)
		}
		a.regexes = re
	}
	for _, w := range in.StopWords {
		a.stopWords.add(w, 0)
		a.hasStops = true
	}
	return a, nil
}

// gitleaksGlobal is gitleaks' global allow-list, applied to every finding
// of its rules.
var gitleaksGlobal allowlist

// loadGitleaks compiles the embedded rule set.
func loadGitleaks(data []byte) ([]rule, allowlist, error) {
	var f gitleaksFile
	if err := toml.Unmarshal(data, &f); err != nil {
		return nil, allowlist{}, fmt.Errorf("read gitleaks.toml: %w", err)
	}
	global, err := compileAllowlist(f.Allowlist)
	if err != nil {
		return nil, global, fmt.Errorf("gitleaks.toml global allow-list: %w", err)
	}
	var out []rule
	for _, r := range f.Rules {
		if r.Regex == "" {
			continue // a path-only rule
		}
		expr, lead := stripLead(r.Regex)
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, global, fmt.Errorf("gitleaks rule %s: %w", r.ID, err)
		}
		if r.SecretGroup > re.NumSubexp() {
			return nil, global, fmt.Errorf("gitleaks rule %s: secret group %d of %d", r.ID, r.SecretGroup, re.NumSubexp())
		}
		g := rule{kind: r.ID, keywords: r.Keywords, re: re, group: r.SecretGroup, autoGroup: r.SecretGroup == 0,
			entropy: r.Entropy, gitleaks: true, lead: lead, wholeText: crossesLines(r.Regex)}
		for _, al := range r.Allowlists {
			a, err := compileAllowlist(al)
			if err != nil {
				return nil, global, fmt.Errorf("gitleaks rule %s: %w", r.ID, err)
			}
			g.allow = append(g.allow, a)
		}
		out = append(out, g)
	}
	return out, global, nil
}

// The keyword rules of gitleaks start with a lazy run of name characters
// before the keyword ([\w.-]{0,50}?), which only moves the start of the
// match to the start of the name (POSTGRES_ in POSTGRES_PASSWORD) and
// leaves the secret group alone. It also keeps Go's regexp from skipping
// ahead, which made these rules 10 to 30 times slower; so it is removed,
// and the match is widened back over those characters (lead of them at
// most) for the allow-lists that look at the match.
var leads = []struct{ prefix, keep string }{
	{`(?i)[\w.-]{0,50}?`, `(?i)`},
	{`[\w.-]{0,50}?(?i:[\w.-]{0,50}?`, `(?i:`},
}

func stripLead(expr string) (string, int) {
	for _, l := range leads {
		if rest, ok := strings.CutPrefix(expr, l.prefix); ok {
			return l.keep + rest, 50 * strings.Count(l.prefix, "{0,50}?")
		}
	}
	return expr, 0
}

// widen moves start left over at most n name characters ([\w.-]).
func widen(s string, start, n int) int {
	for ; n > 0 && start > 0; n-- {
		c := s[start-1]
		if !isWordByte(c) && c != '.' && c != '-' {
			break
		}
		start--
	}
	return start
}

// crossesLines reports whether a match of the expression can hold a line
// end beyond the few blanks allowed around an "=" (a private key block, a
// YAML document): such rules run on the whole text, not line by line.
func crossesLines(expr string) bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return false
	}
	var walk func(r *syntax.Regexp, repeated bool) bool
	walk = func(r *syntax.Regexp, repeated bool) bool {
		switch r.Op {
		case syntax.OpAnyChar:
			return repeated
		case syntax.OpCharClass:
			if !repeated {
				return false
			}
			for i := 0; i+1 < len(r.Rune); i += 2 {
				if r.Rune[i] <= '\n' && '\n' <= r.Rune[i+1] {
					return true
				}
			}
			return false
		case syntax.OpLiteral:
			for _, c := range r.Rune {
				if c == '\n' {
					return true
				}
			}
		case syntax.OpStar, syntax.OpPlus:
			repeated = true
		case syntax.OpRepeat:
			repeated = repeated || r.Max < 0 || r.Max > 8
		}
		for _, sub := range r.Sub {
			if walk(sub, repeated) {
				return true
			}
		}
		return false
	}
	return walk(re, false)
}
