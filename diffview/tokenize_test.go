package diffview

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// tokenizeRef is the tokenizer before its ASCII tables: every rune decoded
// and classified through the unicode package. The fast one must agree.
func tokenizeRef(toks []string, s string) []string {
	runLenRef := func(s string, in func(rune) bool) int {
		for i, r := range s {
			if !in(r) {
				return i
			}
		}
		return len(s)
	}
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		n := size
		switch {
		case isWord(r):
			n = runLenRef(s, isWord)
		case unicode.IsSpace(r):
			n = runLenRef(s, unicode.IsSpace)
		}
		toks = append(toks, s[:n])
		s = s[n:]
	}
	return toks
}

// TestTokenizeMatchesUnicode: the ASCII fast path splits exactly as the
// rune-by-rune tokenizer on text mixing ASCII with non-ASCII letters,
// digits and spaces (NBSP, NEL, U+2028, ideographic space), control bytes
// and invalid UTF-8; and utf16Len counts as the rune loop does.
func TestTokenizeMatchesUnicode(t *testing.T) {
	pieces := []string{"a", "Z", "_", "9", " ", "\t", "\n", "\v", "\f", "\r", "\x00", "\x7f", "(", ".", "é", "中",
		"٣", "\u00a0", "\u0085", "\u2028", "\u3000", "😀", "\xff", "\xc3", "ß", "x1", "é_2", "  ", "\u00a0a"}
	r := rand.New(rand.NewPCG(7, 11))
	for range 20_000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		if got, want := tokenize(nil, s), tokenizeRef(nil, s); !slices.Equal(got, want) {
			t.Fatalf("tokenize(%q) = %q, want %q", s, got, want)
		}
		n := 0
		for _, c := range s {
			n++
			if c >= 0x10000 {
				n++
			}
		}
		if got := utf16Len(s); got != n {
			t.Fatalf("utf16Len(%q) = %d, want %d", s, got, n)
		}
	}
}

// BenchmarkTokenize: the fast tokenizer against the rune-by-rune one on the
// lines of the 100,000-line benchmark file.
func BenchmarkTokenize(b *testing.B) {
	old, _, _ := benchPair(benchCases[1])
	lines := splitLines(string(old))
	for _, c := range []struct {
		name string
		f    func([]string, string) []string
	}{{"ascii-tables", tokenize}, {"rune-by-rune", tokenizeRef}} {
		b.Run(c.name, func(b *testing.B) {
			var toks []string
			for b.Loop() {
				for _, l := range lines {
					toks = c.f(toks[:0], l)
				}
			}
		})
	}
}
