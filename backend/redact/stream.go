package redact

import "strings"

// Stream cuts streamed text (a model's deltas) where no secret can
// straddle the cut, so that redacting each piece on its own finds every
// secret redacting the whole text would. Every rule but the private key
// block matches within one line, and the token formats hold no whitespace;
// so a piece ends at a line end, or at a space of a line that mentions no
// rule's keyword, and an unclosed private key block is held back whole.
// A piece may be held back at most [MaxHold] bytes; past that it is let go
// and redacted as it is.
//
// The zero value is ready to use; a Stream is not safe for concurrent use.
type Stream struct {
	held string
}

// MaxHold bounds what a Stream holds back.
const MaxHold = 16 << 10

// Push adds text and returns what can be shown now (possibly "").
func (s *Stream) Push(text string) string {
	s.held += text
	cut := safeCut(s.held)
	if len(s.held)-cut > MaxHold {
		cut = len(s.held)
	}
	out := s.held[:cut]
	s.held = s.held[cut:]
	return out
}

// Flush returns everything still held: the stream has ended.
func (s *Stream) Flush() string {
	out := s.held
	s.held = ""
	return out
}

// safeCut is the end of the longest prefix of b after which no secret can
// continue.
func safeCut(b string) int {
	base := 0
	if i := strings.LastIndex(b, "-----BEGIN"); i >= 0 {
		e := blockEnd(b[i:])
		if e < 0 { // hold the whole block, from its line on
			return strings.LastIndexByte(b[:i], '\n') + 1
		}
		base = i + e // the block goes as one piece
	}
	start := max(base, strings.LastIndexByte(b, '\n')+1)
	line := b[start:]
	if mentionsKeyword(line) {
		return start
	}
	return start + strings.LastIndexAny(line, " \t") + 1
}

// blockEnd is the end of a block's whole -----END …----- marker in b, which
// starts with -----BEGIN, or -1.
func blockEnd(b string) int {
	j := strings.Index(b, "-----END")
	if j < 0 {
		return -1
	}
	j += len("-----END")
	k := strings.Index(b[j:], "-----")
	if k < 0 {
		return -1
	}
	return j + k + len("-----")
}

// streamKeywords are the lower-cased keywords of every rule: a line that
// holds one may carry a secret after a space ("Authorization: Bearer x").
var streamKeywords = func() []string {
	var out []string
	for _, r := range rules {
		for _, k := range r.keywords {
			out = append(out, strings.ToLower(k))
		}
	}
	return out
}()

func mentionsKeyword(line string) bool {
	lower := strings.ToLower(line)
	for _, k := range streamKeywords {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}
