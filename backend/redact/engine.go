package redact

import (
	"sort"
	"strings"
)

// ruleSet is every rule, ours first, compiled once: a secret two rules
// find is marked with the kind of the earlier one.
type ruleSet struct {
	rules  []rule
	index  wordIndex // keyword → rule number
	global allowlist // gitleaks' global allow-list
	// whole are the rules run on the whole text; the rest run line by line.
	whole, always []int
	// longest is the longest keyword, for the stream's look-back.
	longest int
}

var set = func() *ruleSet {
	gl, global, err := loadGitleaks(gitleaksConfig)
	if err != nil {
		// The file is embedded and checked by the tests; a bad copy must
		// not start a binary that would store secrets in clear.
		panic("redact: " + err.Error())
	}
	rs := &ruleSet{rules: append(append([]rule(nil), rules...), gl...), global: global}
	rs.rules[0].wholeText = true // the private key block: see rules
	for i, r := range rs.rules {
		if r.wholeText {
			rs.whole = append(rs.whole, i)
		}
		if len(r.keywords) == 0 {
			rs.always = append(rs.always, i)
		}
		for _, k := range r.keywords {
			rs.index.add(k, i)
			rs.longest = max(rs.longest, len(k))
		}
	}
	return rs
}()

// span is a secret found in a text: [start, end) is replaced by the marker
// of rule number rule.
type span struct{ start, end, rule int }

// Which rules redactText runs.
const (
	wholeRules = iota // those that can cross lines, on a whole text
	lineRules         // the others, on one line
	allRules          // both, on a text of one line
)

// redactText replaces what the rules of one kind (above) find in s.
func (rs *ruleSet) redactText(s string, which int) string {
	runs := func(r *rule) bool { return which == allRules || r.wholeText == (which == wholeRules) }
	lower := toLowerASCII(s)
	var hit []bool // rule numbers whose keyword occurs
	rs.index.each(lower, func(w wordRef) bool {
		if runs(&rs.rules[w.id]) {
			if hit == nil {
				hit = make([]bool, len(rs.rules))
			}
			hit[w.id] = true
		}
		return true
	})
	var spans []span
	for _, i := range rs.always {
		if r := &rs.rules[i]; runs(r) && (r.pre == nil || r.pre(s)) {
			spans = rs.find(spans, i, s)
		}
	}
	for i, ok := range hit {
		if ok {
			spans = rs.find(spans, i, s)
		}
	}
	return replaceSpans(s, spans, rs.rules)
}

// find appends the secrets rule i finds in s.
func (rs *ruleSet) find(spans []span, i int, s string) []span {
	r := &rs.rules[i]
	for _, m := range r.re.FindAllStringSubmatchIndex(s, -1) {
		start, end := m[2*r.group], m[2*r.group+1]
		if r.autoGroup {
			start, end = m[0], m[1]
			for g := 1; 2*g+1 < len(m); g++ {
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					start, end = m[2*g], m[2*g+1]
					break
				}
			}
		}
		if start < 0 || start == end {
			continue
		}
		secret := s[start:end]
		if !r.gitleaks && !r.anywhere && !boundaryBefore(s, m[0]) {
			continue
		}
		if r.check != nil && !r.check(secret) {
			continue
		}
		if r.gitleaks && !rs.gitleaksKeeps(r, secret, s[widen(s, m[0], r.lead):m[1]], lineAround(s, start)) {
			continue
		}
		spans = append(spans, span{start: start, end: end, rule: i})
	}
	return spans
}

// gitleaksKeeps applies a gitleaks rule's entropy threshold and
// allow-lists, and the global allow-list, as gitleaks' detector does.
func (rs *ruleSet) gitleaksKeeps(r *rule, secret, match, line string) bool {
	if r.entropy > 0 && shannon(secret) <= r.entropy {
		return false
	}
	if rs.global.allows(secret, match, line) {
		return false
	}
	for i := range r.allow {
		if r.allow[i].allows(secret, match, line) {
			return false
		}
	}
	return true
}

// lineAround is the line of s that holds byte i (for allow-lists that
// look at the line).
func lineAround(s string, i int) string {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		return s[start:]
	}
	return s[start : i+end]
}

// replaceSpans replaces every span of s by its marker; overlapping spans
// become one, marked with the kind of the earliest rule among them.
func replaceSpans(s string, spans []span, rules []rule) string {
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(a, b int) bool {
		if spans[a].start != spans[b].start {
			return spans[a].start < spans[b].start
		}
		return spans[a].rule < spans[b].rule
	})
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start < cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
			cur.rule = min(cur.rule, spans[i].rule)
		}
		b.WriteString(s[last:cur.start])
		b.WriteString(marker(rules[cur.rule].kind))
		last = cur.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// A leading \b would keep Go's regexp from scanning for the literal prefix
// (a 100x slowdown), so the word boundary before a match of our rules is
// checked here.
func boundaryBefore(s string, i int) bool {
	return i == 0 || !isWordByte(s[i-1])
}

func isWordByte(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
