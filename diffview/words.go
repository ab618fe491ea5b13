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
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // lines are short; the file deadline is checked per pair
	for h := range hunks {
		lines := hunks[h].Lines
		for i := 0; i < len(lines); {
			if lines[i].Op != OpDelete {
				i++
				continue
			}
			d0 := i
			for i < len(lines) && lines[i].Op == OpDelete {
				i++
			}
			a0 := i
			for i < len(lines) && lines[i].Op == OpAdd {
				i++
			}
			for k := 0; k < a0-d0 && a0+k < i; k++ {
				if time.Now().After(deadline) {
					return false
				}
				lines[d0+k].Spans, lines[a0+k].Spans = wordSpans(dmp, lines[d0+k].Text, lines[a0+k].Text)
			}
		}
	}
	return true
}

// wordSpans diffs two lines token by token (words, runs of spaces, single
// other characters) and returns the changed spans of each.
func wordSpans(dmp *diffmatchpatch.DiffMatchPatch, a, b string) ([]Span, []Span) {
	if len(a) > maxWordLine || len(b) > maxWordLine || a == b {
		return nil, nil
	}
	ta, tb := tokenize(a), tokenize(b)
	ids := map[string]rune{}
	ra, rb := tokenRunes(ta, ids), tokenRunes(tb, ids)
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMainRunes(ra, rb, false))
	var sa, sb []Span
	var shared int
	i, j := 0, 0   // token indexes
	ua, ub := 0, 0 // UTF-16 offsets
	for _, d := range diffs {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for k := 0; k < n; k++ {
				shared += len(strings.TrimSpace(ta[i+k]))
				ua += utf16Len(ta[i+k])
				ub += utf16Len(tb[j+k])
			}
			i, j = i+n, j+n
		case diffmatchpatch.DiffDelete:
			start := ua
			for k := 0; k < n; k++ {
				ua += utf16Len(ta[i+k])
			}
			sa = addSpan(sa, start, ua)
			i += n
		case diffmatchpatch.DiffInsert:
			start := ub
			for k := 0; k < n; k++ {
				ub += utf16Len(tb[j+k])
			}
			sb = addSpan(sb, start, ub)
			j += n
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

func tokenize(s string) []string {
	var toks []string
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		n := size
		switch {
		case isWord(r):
			n = runLen(s, isWord)
		case unicode.IsSpace(r):
			n = runLen(s, unicode.IsSpace)
		}
		toks = append(toks, s[:n])
		s = s[n:]
	}
	return toks
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func runLen(s string, in func(rune) bool) int {
	for i, r := range s {
		if !in(r) {
			return i
		}
	}
	return len(s)
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
