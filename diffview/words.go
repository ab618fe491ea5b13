package diffview

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

const (
	maxWordLine = 2000 // bytes; longer lines get no spans
	// minShared is the share of non-space text two lines must have in
	// common before spans are worth showing; below it the lines are
	// unrelated and highlighting everything is noise.
	minShared = 0.3
)

// addWordSpans pairs the i-th deleted with the i-th added line of every
// change block and marks what differs between them. It returns false when
// the deadline stopped it (the remaining lines keep no spans).
func addWordSpans(hunks []Hunk, deadline time.Time) bool {
	w := newWorder()
	pairs := 0
	for h := range hunks {
		if !w.hunk(hunks[h].Lines, &pairs, deadline) {
			return false
		}
	}
	return true
}

// WordSpans returns a copy of h whose modified line pairs carry their word
// spans, computed within timeout; complete is false when the budget stopped
// it (the remaining lines keep no spans). It is the lazy form of the spans
// Diff adds to every hunk: a caller that diffs with [Options.NoWords] asks
// for them only for the hunks it shows, which on a large rewrite is most of
// the diff's cost (issue 17 §7). h itself is not changed.
func WordSpans(h Hunk, timeout time.Duration) (out Hunk, complete bool) {
	out = h
	out.Lines = append([]Line(nil), h.Lines...)
	for i := range out.Lines {
		out.Lines[i].Spans = nil
	}
	pairs := 0
	return out, newWorder().hunk(out.Lines, &pairs, time.Now().Add(timeout))
}

// changeBlock returns where the additions of the change block starting at
// i begin (its deletions come first) and where the block ends.
func changeBlock(lines []Line, i int) (adds, end int) {
	for i < len(lines) && lines[i].Op == OpDelete {
		i++
	}
	adds = i
	for i < len(lines) && lines[i].Op == OpAdd {
		i++
	}
	return adds, i
}

func newWorder() *worder {
	w := &worder{dmp: diffmatchpatch.New(), ids: map[string]rune{}}
	w.dmp.DiffTimeout = 0 // lines are short; the deadline is checked per pair
	return w
}

// hunk marks the spans of one hunk's line pairs; pairs counts across hunks
// so the clock is read once per 64 pairs of the whole file.
func (w *worder) hunk(lines []Line, pairs *int, deadline time.Time) bool {
	for i := 0; i < len(lines); {
		if lines[i].Op != OpDelete {
			i++
			continue
		}
		d0 := i
		var a0 int
		a0, i = changeBlock(lines, i)
		for k := 0; k < a0-d0 && a0+k < i; k++ {
			// Reading the clock per pair costs more than most pairs.
			if *pairs++; *pairs%64 == 1 && time.Now().After(deadline) {
				return false
			}
			lines[d0+k].Spans, lines[a0+k].Spans = w.spans(lines[d0+k].Text, lines[a0+k].Text)
		}
	}
	return true
}

// worder diffs line pairs token by token, reusing its buffers across pairs.
type worder struct {
	dmp    *diffmatchpatch.DiffMatchPatch
	ids    map[string]rune
	ta, tb []string
	ops    []tokOp
	table  []uint16
}

// tokOp is one step of a token edit script: n tokens equal, deleted or inserted.
type tokOp struct {
	op diffmatchpatch.Operation
	n  int
}

// spans diffs two lines token by token (words, runs of spaces, single other
// characters) and returns the changed spans of each.
func (w *worder) spans(a, b string) ([]Span, []Span) {
	if len(a) > maxWordLine || len(b) > maxWordLine || a == b {
		return nil, nil
	}
	w.ta, w.tb = tokenize(w.ta[:0], a), tokenize(w.tb[:0], b)
	ta, tb := w.ta, w.tb
	p := 0
	for p < len(ta) && p < len(tb) && ta[p] == tb[p] {
		p++
	}
	q := 0
	for q < len(ta)-p && q < len(tb)-p && ta[len(ta)-1-q] == tb[len(tb)-1-q] {
		q++
	}
	w.ops = append(w.ops[:0], tokOp{diffmatchpatch.DiffEqual, p})
	midA, midB := ta[p:len(ta)-q], tb[p:len(tb)-q]
	if len(midA) == 0 || len(midB) == 0 || (len(midA) == 1 && len(midB) == 1) {
		// Only go-diff can align anything inside; here nothing is left to align.
		w.ops = append(w.ops, tokOp{diffmatchpatch.DiffDelete, len(midA)}, tokOp{diffmatchpatch.DiffInsert, len(midB)})
	} else if len(midA)*len(midB) <= maxTable {
		w.lcs(midA, midB)
	} else {
		clear(w.ids)
		ra, rb := tokenRunes(midA, w.ids), tokenRunes(midB, w.ids)
		for _, d := range w.dmp.DiffCleanupSemantic(w.dmp.DiffMainRunes(ra, rb, false)) {
			w.ops = append(w.ops, tokOp{d.Type, utf8.RuneCountInString(d.Text)})
		}
	}
	w.ops = append(w.ops, tokOp{diffmatchpatch.DiffEqual, q})
	absorbSpaces(w.ops, ta)
	return spansOf(w.ops, ta, tb, a, b)
}

// maxTable bounds the LCS table; larger middles go to go-diff. Most changed
// lines have a few dozen tokens, where a table beats go-diff's string-based
// machinery by an order of magnitude.
const maxTable = 64 * 64

// lcs appends the edit script of a longest common token subsequence of a and
// b to w.ops (deletions before insertions within a change).
func (w *worder) lcs(a, b []string) {
	n, m := len(a), len(b)
	if cap(w.table) < (n+1)*(m+1) {
		w.table = make([]uint16, (n+1)*(m+1))
	}
	t := w.table[:(n+1)*(m+1)]
	// t[i*(m+1)+j] is the LCS length of a[i:] and b[j:].
	for i := n; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			switch {
			case i == n || j == m:
				t[i*(m+1)+j] = 0
			case a[i] == b[j]:
				t[i*(m+1)+j] = t[(i+1)*(m+1)+j+1] + 1
			default:
				t[i*(m+1)+j] = max(t[(i+1)*(m+1)+j], t[i*(m+1)+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			w.push(diffmatchpatch.DiffEqual)
			i, j = i+1, j+1
		case j == m || (i < n && t[(i+1)*(m+1)+j] >= t[i*(m+1)+j+1]):
			w.push(diffmatchpatch.DiffDelete)
			i++
		default:
			w.push(diffmatchpatch.DiffInsert)
			j++
		}
	}
}

func (w *worder) push(op diffmatchpatch.Operation) {
	if n := len(w.ops); n > 0 && w.ops[n-1].op == op {
		w.ops[n-1].n++
		return
	}
	w.ops = append(w.ops, tokOp{op, 1})
}

// absorbSpaces turns an equal run made only of spaces between two changes
// into a change, so "a b" → "c d" shows one span instead of two with a
// highlighted gap; the edit script stays valid (n deleted, n inserted).
func absorbSpaces(ops []tokOp, ta []string) {
	i := 0
	for k, o := range ops {
		if o.op == diffmatchpatch.DiffEqual && k > 0 && k < len(ops)-1 && o.n > 0 && allSpace(ta[i:i+o.n]) &&
			ops[k-1].op != diffmatchpatch.DiffEqual && ops[k+1].op != diffmatchpatch.DiffEqual {
			ops[k].op = absorbed
		}
		if o.op != diffmatchpatch.DiffInsert {
			i += o.n
		}
	}
}

// absorbed marks an equal run shown as changed on both sides.
const absorbed diffmatchpatch.Operation = 100

func allSpace(toks []string) bool {
	for _, t := range toks {
		if strings.TrimSpace(t) != "" {
			return false
		}
	}
	return true
}

// spansOf walks a token edit script and converts it to UTF-16 spans, or to
// none when the lines share too little for highlighting to help.
func spansOf(ops []tokOp, ta, tb []string, a, b string) ([]Span, []Span) {
	var sa, sb []Span
	var shared int
	i, j := 0, 0   // token indexes
	ua, ub := 0, 0 // UTF-16 offsets
	for _, o := range ops {
		switch o.op {
		case diffmatchpatch.DiffEqual:
			for k := 0; k < o.n; k++ {
				shared += len(strings.TrimSpace(ta[i+k]))
				ua += utf16Len(ta[i+k])
				ub += utf16Len(tb[j+k])
			}
			i, j = i+o.n, j+o.n
		case absorbed:
			startA, startB := ua, ub
			for k := 0; k < o.n; k++ {
				ua += utf16Len(ta[i+k])
				ub += utf16Len(tb[j+k])
			}
			sa, sb = addSpan(sa, startA, ua), addSpan(sb, startB, ub)
			i, j = i+o.n, j+o.n
		case diffmatchpatch.DiffDelete:
			start := ua
			for k := 0; k < o.n; k++ {
				ua += utf16Len(ta[i+k])
			}
			sa = addSpan(sa, start, ua)
			i += o.n
		case diffmatchpatch.DiffInsert:
			start := ub
			for k := 0; k < o.n; k++ {
				ub += utf16Len(tb[j+k])
			}
			sb = addSpan(sb, start, ub)
			j += o.n
		}
	}
	if len(sa) == 0 || len(sb) == 0 {
		return sa, sb // one line only gained or lost text: always worth showing
	}
	longest := max(len(strings.TrimSpace(a)), len(strings.TrimSpace(b)))
	if longest == 0 || float64(shared) < minShared*float64(longest) {
		return nil, nil
	}
	return sa, sb
}

func addSpan(spans []Span, start, end int) []Span {
	if start == end {
		return spans
	}
	if n := len(spans); n > 0 && spans[n-1].End == start {
		spans[n-1].End = end
		return spans
	}
	return append(spans, Span{Start: start, End: end})
}

func tokenize(toks []string, s string) []string {
	for len(s) > 0 {
		n := 1
		if c := s[0]; c < utf8.RuneSelf {
			// ASCII, most of any source file: no rune decoding and no
			// Unicode table look-ups (the word diff's largest cost was here).
			switch {
			case asciiWord[c]:
				n = runLen(s, true)
			case asciiSpace[c]:
				n = runLen(s, false)
			}
		} else {
			r, size := utf8.DecodeRuneInString(s)
			n = size
			switch {
			case isWord(r):
				n = runLen(s, true)
			case unicode.IsSpace(r):
				n = runLen(s, false)
			}
		}
		toks = append(toks, s[:n])
		s = s[n:]
	}
	return toks
}

// asciiWord and asciiSpace are isWord and unicode.IsSpace for ASCII bytes.
var asciiWord, asciiSpace = func() (w, sp [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		w[c], sp[c] = isWord(rune(c)), unicode.IsSpace(rune(c))
	}
	return w, sp
}()

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// runLen is the length of the run of word runes (words) or space runes at
// the start of s; ASCII bytes are looked up in a table.
func runLen(s string, words bool) int {
	table, in := &asciiSpace, unicode.IsSpace
	if words {
		table, in = &asciiWord, isWord
	}
	i := 0
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if !table[c] {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !in(r) {
			return i
		}
		i += size
	}
	return i
}

func tokenRunes(toks []string, ids map[string]rune) []rune {
	out := make([]rune, len(toks))
	for i, t := range toks {
		r, ok := ids[t]
		if !ok {
			r = rune(len(ids))
			if r >= 0xD800 {
				r += 0x800
			}
			ids[t] = r
		}
		out[i] = r
	}
	return out
}

func utf16Len(s string) int {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return len(s)
	}
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
