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

// each calls fn for every occurrence of an indexed word in s, in any
// case, with its offset; fn returns false to stop. It does not allocate:
// most texts hold no keyword, and this is all they cost.
func (x *wordIndex) each(s string, fn func(wordRef, int) bool) {
	if x.words == nil {
		return
	}
	for i := 0; i+1 < len(s); i++ {
		p := pairOf(lowerByte[s[i]], lowerByte[s[i+1]])
		if x.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, w := range x.words[p] {
			if hasPrefixFold(s[i:], w.word) && !fn(w, i) {
				return
			}
		}
	}
}

// eachAt calls fn with the offset of every occurrence of an indexed word
// in s, in any case.
func (x *wordIndex) eachAt(s string, fn func(int)) {
	x.each(s, func(_ wordRef, i int) bool { fn(i); return true })
}

// lowerByte folds ASCII letters.
var lowerByte = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// hasPrefixFold reports whether s starts with word (lower-case) in any
// ASCII case.
func hasPrefixFold(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for j := 0; j < len(word); j++ {
		if lowerByte[s[j]] != word[j] {
			return false
		}
	}
	return true
}

// any reports whether s holds an indexed word, in any case.
func (x *wordIndex) any(s string) bool {
	found := false
	x.each(s, func(wordRef, int) bool { found = true; return false })
	return found
}
