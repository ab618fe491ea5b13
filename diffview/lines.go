package diffview

import (
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

// interner gives equal lines equal ids, so the diff compares integers.
type interner struct {
	ids   map[string]int32
	count int32
}

func newInterner(sizeHint int) *interner {
	return &interner{ids: make(map[string]int32, sizeHint)}
}

func (in *interner) intern(lines []string) []int32 {
	out := make([]int32, len(lines))
	for i, l := range lines {
		id, ok := in.ids[l]
		if !ok {
			id = in.count
			in.count++
			in.ids[l] = id
		}
		out[i] = id
	}
	return out
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
