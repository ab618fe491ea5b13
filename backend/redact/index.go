package redact

import "strings"

// wordIndex finds which of many lower-case words occur in a text, in one
// pass over it: the prefilter of the rules (a rule's regexp runs only on
// lines that hold one of its keywords) and the stop-word check of gitleaks'
// allow-lists. Words are found by their first two bytes, looked up in a
// 64 Ki-bit table, then compared whole; a text without any candidate pair
// costs one table lookup per byte. Words shorter than two bytes are not
// indexed (gitleaks' keywords are at least two).
type wordIndex struct {
	pairs [1 << 16 / 64]uint64 // bit set: some word starts with this pair
	words map[uint16][]wordRef
}

// wordRef is one indexed word and what it stands for (a rule number, or
// nothing for stop words).
type wordRef struct {
	word string
	id   int
}

func pairOf(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

// add indexes word (lower-cased) for id.
func (x *wordIndex) add(word string, id int) {
	word = strings.ToLower(word)
	if len(word) < 2 {
		return
	}
	if x.words == nil {
		x.words = map[uint16][]wordRef{}
	}
	p := pairOf(word[0], word[1])
	x.pairs[p/64] |= 1 << (p % 64)
	x.words[p] = append(x.words[p], wordRef{word: word, id: id})
}

// each calls fn for every occurrence of an indexed word in lower, which
// must be lower-cased already, with its offset; fn returns false to stop.
func (x *wordIndex) each(lower string, fn func(wordRef, int) bool) {
	if x.words == nil {
		return
	}
	for i := 0; i+1 < len(lower); i++ {
		p := pairOf(lower[i], lower[i+1])
		if x.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, w := range x.words[p] {
			if strings.HasPrefix(lower[i:], w.word) && !fn(w, i) {
				return
			}
		}
	}
}

// eachAt calls fn with the offset of every occurrence of an indexed word
// in lower (lower-cased already).
func (x *wordIndex) eachAt(lower string, fn func(int)) {
	if x.words == nil {
		return
	}
	for i := 0; i+1 < len(lower); i++ {
		p := pairOf(lower[i], lower[i+1])
		if x.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, w := range x.words[p] {
			if strings.HasPrefix(lower[i:], w.word) {
				fn(i)
				break
			}
		}
	}
}

// any reports whether lower holds an indexed word.
func (x *wordIndex) any(lower string) bool {
	found := false
	x.each(lower, func(wordRef, int) bool { found = true; return false })
	return found
}

// toLowerASCII lower-cases ASCII letters only: keywords and stop words are
// ASCII, and byte offsets must not move.
func toLowerASCII(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
