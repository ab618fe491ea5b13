package redact

import (
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
)

// ruleSet is every rule, ours first, compiled once: a secret two rules
// find is marked with the kind of the earlier one.
type ruleSet struct {
	rules  []rule
	index  wordIndex // keyword → rule number
	global allowlist // gitleaks' global allow-list
	// whole are the rules run on the whole text; the rest run line by line.
	whole, always []int
	// context indexes the keywords of rules whose match may hold a blank
	// (a name or a header before the value): see Stream.
	context wordIndex
}

// compiledRules compiles every rule once, on first use: about 30 ms of CPU
// that a process which never redacts (most CLI commands) does not pay.
var compiledRules = sync.OnceValue(func() *ruleSet {
	gl, global, err := loadGitleaks(gitleaksConfig)
	if err != nil {
		// The file is embedded and checked by the tests; a bad copy must
		// not start a binary that would store secrets in clear.
		panic("redact: " + err.Error())
	}
	rs := &ruleSet{rules: append(ourRules(), gl...), global: global}
	rs.rules[0].wholeText = true // the private key block: see ourRules
	for i, r := range rs.rules {
		if r.wholeText {
			rs.whole = append(rs.whole, i)
		}
		if len(r.keywords) == 0 {
			rs.always = append(rs.always, i)
		}
		blank := admitsBlank(r.re)
		for _, k := range r.keywords {
			rs.index.add(k, i)
			if blank {
				rs.context.add(k, i)
			}
		}
	}
	return rs
})

// admitsBlank reports whether a match of re may hold a space or a tab.
func admitsBlank(re *regexp.Regexp) bool {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(r *syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			return true
		case syntax.OpLiteral:
			return strings.ContainsAny(string(r.Rune), " \t")
		case syntax.OpCharClass:
			for i := 0; i+1 < len(r.Rune); i += 2 {
				if (r.Rune[i] <= ' ' && ' ' <= r.Rune[i+1]) || (r.Rune[i] <= '\t' && '\t' <= r.Rune[i+1]) {
					return true
				}
			}
			return false
		}
		for _, sub := range r.Sub {
			if walk(sub) {
				return true
			}
		}
		return false
	}
	return walk(parsed)
}

// extents are the whole matches (name, separator and value, not only the
// secret) of every rule in s, which may hold several lines: where a cut
// would split a secret from what identifies it.
func (rs *ruleSet) extents(s string) []span {
	var out []span
	add := func(text string, off int, which int) {
		hit := make([][]int, len(rs.rules))
		rs.index.each(text, func(w wordRef, at int) bool {
			hit[w.id] = append(hit[w.id], at)
			return true
		})
		for _, i := range rs.always {
			hit[i] = []int{0}
		}
		for i, at := range hit {
			r := &rs.rules[i]
			if at == nil || (which == wholeRules) != r.wholeText || (r.pre != nil && !r.pre(text)) {
				continue
			}
			wins := [][2]int{{0, len(text)}}
			if len(text) > longLine && !r.wholeText && len(r.keywords) > 0 {
				wins = windows(text, at)
			}
			for _, w := range wins {
				for _, m := range r.re.FindAllStringIndex(text[w[0]:w[1]], -1) {
					out = append(out, span{start: off + widen(text, w[0]+m[0], r.lead), end: off + w[0] + m[1], rule: i})
				}
			}
		}
	}
	add(s, 0, wholeRules)
	off := 0
	for _, ln := range strings.SplitAfter(s, "\n") {
		add(ln, off, lineRules)
		off += len(ln)
	}
	return out
}

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
	// hit[i]: where rule i's keywords occur (a nil entry: none).
	var hit [][]int
	rs.index.each(s, func(w wordRef, at int) bool {
		if runs(&rs.rules[w.id]) {
			if hit == nil {
				hit = make([][]int, len(rs.rules))
			}
			hit[w.id] = append(hit[w.id], at)
		}
		return true
	})
	var spans []span
	for _, i := range rs.always {
		if r := &rs.rules[i]; runs(r) && (r.pre == nil || r.pre(s)) {
			spans = rs.find(spans, i, s, 0, len(s))
		}
	}
	for i, at := range hit {
		switch {
		case at == nil:
		case len(s) <= longLine || rs.rules[i].wholeText:
			spans = rs.find(spans, i, s, 0, len(s))
		default:
			for _, w := range windows(s, at) {
				spans = rs.find(spans, i, s, w[0], w[1])
			}
		}
	}
	return replaceSpans(s, spans, rs.rules)
}

// On a line longer than longLine a rule runs only on windows around its
// keywords (from keywordBefore bytes before one to keywordAfter after),
// each widened to a character no token holds (a blank, a quote, a comma)
// when there is one within keywordSlack: Go's regexp costs 0.1 to 0.2 µs
// per byte of input, and a keyword in a 32 KiB line of output would
// otherwise cost milliseconds per rule. Every match of these rules holds
// its keyword and is far shorter than a window.
const (
	longLine      = 4 << 10
	keywordBefore = 512
	keywordAfter  = 4 << 10
	keywordSlack  = 256
)

// windows are the ranges of s around the keyword offsets at (ascending),
// merged where they overlap.
func windows(s string, at []int) [][2]int {
	var out [][2]int
	for _, k := range at {
		lo := max(0, k-keywordBefore)
		for i := lo; i > 0 && i > lo-keywordSlack; i-- {
			if !isTokenByte(s[i-1]) {
				lo = i
				break
			}
		}
		hi := min(len(s), k+keywordAfter)
		for i := hi; i < len(s) && i < hi+keywordSlack; i++ {
			if !isTokenByte(s[i]) {
				hi = i
				break
			}
		}
		if n := len(out); n > 0 && lo <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], hi)
			continue
		}
		out = append(out, [2]int{lo, hi})
	}
	return out
}

// isTokenByte: the characters of tokens (base64 of both alphabets, hex,
// the separators of JWTs and prefixed keys).
func isTokenByte(c byte) bool {
	return isWordByte(c) || c == '+' || c == '/' || c == '=' || c == '.' || c == '-' || c == '~'
}

// find appends the secrets rule i finds in s[lo:hi] (offsets into s).
func (rs *ruleSet) find(spans []span, i int, s string, lo, hi int) []span {
	r := &rs.rules[i]
	for _, m := range r.re.FindAllStringSubmatchIndex(s[lo:hi], -1) {
		for j := range m {
			if m[j] >= 0 {
				m[j] += lo
			}
		}
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
		if r.near != nil && !r.near(s[:m[0]]) {
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
