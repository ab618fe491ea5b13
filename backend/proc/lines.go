package proc

import "bytes"

// lineWriter frames a byte stream into lines for [Spec.Lines]. It holds at
// most max bytes of an unfinished line: past that the line is delivered cut,
// once, and the rest of it up to the next line break is skipped.
type lineWriter struct {
	emit     func(line []byte, truncated bool)
	max      int
	buf      []byte
	skipping bool // inside an over-long line already delivered
}

func newLineWriter(emit func([]byte, bool), max int) *lineWriter {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &lineWriter{emit: emit, max: max}
}

func (l *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		l.add(chunk)
		if i < 0 {
			break
		}
		l.end()
		p = p[i+1:]
	}
	return n, nil
}

// add appends part of the current line, delivering it cut when it grows
// past max.
func (l *lineWriter) add(b []byte) {
	if l.skipping {
		return
	}
	room := l.max - len(l.buf)
	if len(b) <= room {
		l.buf = append(l.buf, b...)
		return
	}
	l.buf = append(l.buf, b[:room]...)
	l.emit(l.buf, true)
	l.buf, l.skipping = l.buf[:0], true
}

// end finishes the current line at a line break.
func (l *lineWriter) end() {
	if !l.skipping {
		l.emit(bytes.TrimSuffix(l.buf, []byte{'\r'}), false)
	}
	l.buf, l.skipping = l.buf[:0], false
}

// flush delivers a last line that had no line break.
func (l *lineWriter) flush() {
	if len(l.buf) > 0 && !l.skipping {
		l.emit(l.buf, false)
	}
	l.buf, l.skipping = nil, false
}
