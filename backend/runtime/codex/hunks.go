package codex

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"agenthub/backend/scrub"
)

// This file computes the post-image of a Codex file update. Codex's
// approval request carries no content, only the item's diff: hunks ("@@
// -a,b +c,d @@" and their lines) computed from the file as Codex read it.
// Applied to the file as it is now they give the content the reviewer
// approves, and any difference from what Codex read is a refusal, never a
// guess.

// hunk is one parsed hunk: the old side it replaces and the new side.
type hunk struct {
	oldStart, oldLines int
	old, new           []string
	oldNoEOL, newNoEOL bool // "\ No newline at end of file" after the side's last line
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// errNoHunks is a diff with nothing to apply.
var errNoHunks = errors.New("the change has no hunks")

// parseHunks reads the hunks of a diff (file headers, if any, are skipped).
func parseHunks(diff string) ([]hunk, error) {
	lines := strings.Split(diff, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out []hunk
	var cur *hunk
	last := byte(0) // the side of the previous body line: ' ', '-' or '+'
	for _, l := range lines {
		if m := hunkHeader.FindStringSubmatch(l); m != nil {
			out = append(out, hunk{oldStart: atoi(m[1], 0), oldLines: atoi(m[2], 1)})
			cur, last = &out[len(out)-1], 0
			continue
		}
		if cur == nil {
			if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "diff ") ||
				strings.HasPrefix(l, "index ") {
				continue
			}
			return nil, fmt.Errorf("a diff line outside a hunk: %q", scrub.Clip(l, 40))
		}
		if err := cur.add(l, &last); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, errNoHunks
	}
	for _, h := range out {
		if len(h.old) != h.oldLines {
			return nil, fmt.Errorf("a hunk at line %d has %d old lines, its header says %d", h.oldStart, len(h.old), h.oldLines)
		}
	}
	return out, nil
}

// add reads one body line of a hunk.
func (h *hunk) add(l string, last *byte) error {
	switch {
	case l == "":
		h.old, h.new = append(h.old, ""), append(h.new, "") // an empty context line whose space was lost
		*last = ' '
	case l[0] == ' ':
		h.old, h.new = append(h.old, l[1:]), append(h.new, l[1:])
		*last = ' '
	case l[0] == '-':
		h.old, *last = append(h.old, l[1:]), '-'
	case l[0] == '+':
		h.new, *last = append(h.new, l[1:]), '+'
	case l[0] == '\\':
		h.oldNoEOL = h.oldNoEOL || *last == '-' || *last == ' '
		h.newNoEOL = h.newNoEOL || *last == '+' || *last == ' '
	default:
		return fmt.Errorf("not a diff line: %q", scrub.Clip(l, 40))
	}
	return nil
}

func atoi(s string, def int) int {
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// applyHunks applies a diff's hunks to cur, strictly: each hunk's old side
// must be at its line (or, if the file moved, found once after the
// previous hunk).
func applyHunks(cur []byte, diff string) ([]byte, error) {
	hunks, err := parseHunks(diff)
	if err != nil {
		return nil, err
	}
	text := string(cur)
	noEOL := text != "" && !strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	var out []string
	pos := 0
	for _, h := range hunks {
		at := h.oldStart - 1
		if h.oldLines == 0 {
			at = h.oldStart
		}
		if !matchAt(lines, at, h.old) || at < pos {
			at = findOnce(lines, pos, h.old)
			if at < 0 {
				return nil, fmt.Errorf("the hunk at line %d does not match the file as it is now", h.oldStart)
			}
		}
		out = append(out, lines[pos:at]...)
		out = append(out, h.new...)
		pos = at + len(h.old)
		if pos == len(lines) {
			noEOL = h.newNoEOL
		}
	}
	out = append(out, lines[pos:]...)
	if len(out) == 0 {
		return []byte{}, nil
	}
	res := strings.Join(out, "\n")
	if !noEOL {
		res += "\n"
	}
	return []byte(res), nil
}

func matchAt(lines []string, at int, want []string) bool {
	return at >= 0 && at+len(want) <= len(lines) && slices.Equal(lines[at:at+len(want)], want)
}

// findOnce finds want in lines at or after from, when it occurs exactly once.
func findOnce(lines []string, from int, want []string) int {
	found := -1
	for i := from; i+len(want) <= len(lines); i++ {
		if slices.Equal(lines[i:i+len(want)], want) {
			if found >= 0 || len(want) == 0 {
				return -1
			}
			found = i
		}
	}
	return found
}
