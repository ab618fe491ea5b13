package diffview

import (
	"hash/maphash"
	"strings"
	"unicode/utf8"
)

// splitLines cuts s after every "\n"; the last element lacks it when s does
// not end in a newline. The pieces share s's memory.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// interner gives equal lines equal ids, so the diff compares integers. It
// is an open-addressing table of ids over the lines themselves: a Go map
// with string keys hashed each line twice when it was new (look up, then
// insert) and spread 200,000 keys over several megabytes; interning was 42 %
// of diffing a 100,000-line file (pprof). Here a line is hashed once and a
// slot is 4 bytes.
type interner struct {
	seed  maphash.Seed
	slots []int32  // id+1 of the line in the slot, 0 when empty
	first []string // the first line seen with each id
	mask  uint64
	count int32
}

func newInterner(sizeHint int) *interner {
	n := 16
	for n < 2*sizeHint {
		n <<= 1
	}
	return &interner{seed: maphash.MakeSeed(), slots: make([]int32, n), mask: uint64(n - 1),
		first: make([]string, 0, sizeHint)}
}

func (in *interner) intern(lines []string) []int32 {
	out := make([]int32, len(lines))
	for i, l := range lines {
		out[i] = in.id(l)
	}
	return out
}

func (in *interner) id(l string) int32 {
	if 2*len(in.first) >= len(in.slots) {
		in.grow()
	}
	for h := maphash.String(in.seed, l) & in.mask; ; h = (h + 1) & in.mask {
		s := in.slots[h]
		if s == 0 {
			id := in.count
			in.count++
			in.first = append(in.first, l)
			in.slots[h] = id + 1
			return id
		}
		if in.first[s-1] == l {
			return s - 1
		}
	}
}

// grow doubles the table when it is half full (a size hint that was too
// small); ids do not change.
func (in *interner) grow() {
	in.slots = make([]int32, 2*len(in.slots))
	in.mask = uint64(len(in.slots) - 1)
	for id, l := range in.first {
		h := maphash.String(in.seed, l) & in.mask
		for in.slots[h] != 0 {
			h = (h + 1) & in.mask
		}
		in.slots[h] = int32(id) + 1
	}
}

// makeLine turns one exact line (terminator included) into the JSON-ready
// form, keeping the exact bytes recoverable.
func makeLine(op Op, oldNo, newNo int, exact string) Line {
	body, eol := cutEOL(exact)
	l := Line{Op: op, Old: oldNo, New: newNo, Text: body, EOL: eol}
	if !utf8.ValidString(body) {
		l.Text = strings.ToValidUTF8(body, "\uFFFD")
		l.Raw = []byte(body)
	}
	return l
}

func cutEOL(s string) (string, EOL) {
	if body, ok := strings.CutSuffix(s, "\r\n"); ok {
		return body, EOLCRLF
	}
	if body, ok := strings.CutSuffix(s, "\n"); ok {
		return body, EOLLF
	}
	return s, EOLNone
}

// appendExact appends the line's exact bytes, terminator included.
func (l Line) appendExact(dst []byte) []byte {
	if l.Raw != nil {
		dst = append(dst, l.Raw...)
	} else {
		dst = append(dst, l.Text...)
	}
	switch l.EOL {
	case EOLCRLF:
		dst = append(dst, '\r', '\n')
	case EOLLF:
		dst = append(dst, '\n')
	}
	return dst
}

// exact returns the line's exact bytes as a string.
func (l Line) exact() string {
	return string(l.appendExact(make([]byte, 0, len(l.Text)+2)))
}
