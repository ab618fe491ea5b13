package redact

import "strings"

// Stream cuts streamed text (a model's deltas, a command's output) where
// no secret can straddle the cut, so that redacting each piece on its own
// finds every secret redacting the whole text would, whatever the length
// of the lines.
//
// A piece ends:
//   - at a line end, unless a private key block is open: every rule but a
//     few (a key block above all) matches within one line;
//   - or at a blank of the current line when no keyword of a rule whose
//     match may hold a blank ("password = x", "Authorization: Bearer x")
//     occurs in the [contextWindow] bytes before it: a token itself holds
//     no blank, so only a name or header before a blank can reach across;
//   - or, when the current line has grown past [MaxHold] with no such
//     place, [tailWindow] bytes (or the longest registered secret) before
//     its end, moved back to the start of any secret or assignment found
//     across that place: every secret is shorter than the tail, so one that
//     crosses the place lies whole inside the held text and is found.
//
// What is held back is bounded by [maxLine]: a single match growing past
// it (a secret-shaped run of a megabyte) is let go in pieces.
//
// The zero value is ready to use; a Stream is not safe for concurrent use.
type Stream struct {
	held string
}

const (
	// MaxHold is how long the current line may grow before a cut inside
	// it is forced.
	MaxHold = 16 << 10
	// tailWindow is held back at a forced cut: longer than any secret the
	// rules match (a JWT of a few KiB, a private key block of 4 KiB).
	tailWindow = 8 << 10
	// contextWindow bounds how far before a blank a secret's name or
	// header may start for the value after the blank to belong to it.
	contextWindow = 256
	// maxLine bounds what a Stream holds when no cut is safe.
	maxLine = 1 << 20
)

// Push adds text and returns what can be shown now (possibly "").
func (s *Stream) Push(text string) string {
	s.held += text
	cut := safeCut(s.held)
	if len(s.held)-cut > MaxHold {
		cut = forcedCut(s.held, cut)
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
// continue, found at line ends and blanks.
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
	return start + blankCut(b[start:])
}

// blankCut is the last place after a blank of line that no assignment can
// reach across (see [Stream]), or 0.
func blankCut(line string) int {
	var ctx []int // starts of keywords of rules that may hold a blank
	compiledRules().context.eachAt(line, func(i int) { ctx = append(ctx, i) })
	j := len(ctx) - 1 // the last keyword that starts before c
	for c := len(line); c > 0; c-- {
		for j >= 0 && ctx[j] >= c {
			j--
		}
		if line[c-1] != ' ' && line[c-1] != '\t' {
			continue
		}
		if j < 0 || ctx[j] < c-contextWindow {
			return c
		}
	}
	return 0
}

// forcedCut cuts a line held past MaxHold (it starts at cut in b): at
// tailWindow from its end, moved back before every secret or assignment
// that reaches across.
func forcedCut(b string, cut int) int {
	window := max(tailWindow, int(registry.longest.Load())+1)
	region := b[cut:]
	c := len(region) - window
	if c <= 0 {
		return cut
	}
	if len(region) > maxLine {
		return cut + c // give up holding: see maxLine
	}
	extents := compiledRules().extents(region)
	for moved := true; moved && c > 0; {
		moved = false
		for _, e := range extents {
			if e.start < c && c < e.end {
				c, moved = e.start, true
			}
		}
		if k := registry.crossing(region, c); k < c {
			c, moved = k, true
		}
	}
	return cut + c
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
