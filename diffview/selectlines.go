package diffview

import (
	"fmt"
	"slices"
)

// LineRef chooses one hunk, or some of its changed lines. Lines are indexes
// into [Hunk.Lines] (from 0) of the added and deleted lines to keep; nil or
// empty keeps the whole hunk.
type LineRef struct {
	Hunk  int   `json:"hunk"`
	Lines []int `json:"lines,omitempty"`
}

// SelectLines keeps the chosen hunks and, within a hunk chosen by lines, only
// the chosen added and deleted lines, exactly as `git add -p` does when a
// hunk is split or edited: a deleted line left out stays in the file (it
// becomes context) and an added line left out is dropped. Hunks not named
// are left out whole, as in [Select]. The result is a valid patch of the same
// old file: applied, it yields the old file with only the chosen lines
// removed and inserted.
//
// Refused with [ErrInvalid], so that nothing half-chosen is ever applied: a
// hunk index out of range or named twice, a line index outside its hunk,
// named twice or naming a context line, and a choice that would keep the
// old last line when it has no final newline and insert chosen lines after
// it (they would be joined to it, a change nobody chose).
func SelectLines(fd FileDiff, refs []LineRef) (FileDiff, error) {
	if !fd.IsText() {
		return FileDiff{}, fmt.Errorf("select lines of %s: %w", displayPath(fd), ErrNotText)
	}
	refs = slices.Clone(refs)
	slices.SortFunc(refs, func(a, b LineRef) int { return a.Hunk - b.Hunk })
	hunks := make([]int, len(refs))
	for i, r := range refs {
		hunks[i] = r.Hunk
	}
	// Select checks the hunk indexes and renumbers; the hunks chosen by
	// lines are narrowed after, keeping the same shift bookkeeping.
	out, err := Select(fd, hunks)
	if err != nil {
		return FileDiff{}, err
	}
	partial := false
	narrowed := make([]Hunk, 0, len(refs))
	for _, r := range refs {
		h := fd.Hunks[r.Hunk]
		if len(r.Lines) == 0 {
			narrowed = append(narrowed, h)
			continue
		}
		nh, err := narrowHunk(h, r)
		if err != nil {
			return FileDiff{}, fmt.Errorf("select lines of %s: %w", displayPath(fd), err)
		}
		partial = partial || !sameHunk(nh, h)
		narrowed = append(narrowed, nh)
	}
	if !partial {
		return out, nil
	}
	// A narrowed hunk always keeps a change, so out has hunks.
	out = withHunks(fd, narrowed)
	if fd.Status == StatusDeleted {
		// Some old lines stay: the file is kept, changed.
		out.Status = StatusModified
		out.New = FileInfo{Path: fd.Old.Path, Mode: fd.Old.Mode, Exists: true, Lines: out.New.Lines}
	}
	return out, nil
}

// narrowHunk keeps the chosen changed lines of h: an unchosen deletion
// becomes context, an unchosen addition is dropped. Counts are recomputed;
// the new side is renumbered by the caller.
func narrowHunk(h Hunk, r LineRef) (Hunk, error) {
	keep := make(map[int]bool, len(r.Lines))
	for _, i := range r.Lines {
		switch {
		case i < 0 || i >= len(h.Lines):
			return Hunk{}, fmt.Errorf("hunk %d has lines 0 to %d, not %d: %w", r.Hunk, len(h.Lines)-1, i, ErrInvalid)
		case keep[i]:
			return Hunk{}, fmt.Errorf("line %d of hunk %d is named twice: %w", i, r.Hunk, ErrInvalid)
		case h.Lines[i].Op == OpContext:
			return Hunk{}, fmt.Errorf("line %d of hunk %d is unchanged context, not a change to choose: %w", i, r.Hunk, ErrInvalid)
		}
		keep[i] = true
	}
	out := Hunk{OldStart: h.OldStart, OldLines: h.OldLines, Lines: make([]Line, 0, len(h.Lines))}
	lastNew := -1 // index in h of the last line the new side has so far
	for i, l := range h.Lines {
		switch {
		case l.Op == OpContext || keep[i]:
		case l.Op == OpDelete:
			l.Op, l.New, l.Spans = OpContext, 0, nil
		default: // an unchosen addition
			continue
		}
		if l.Op == OpDelete {
			out.Lines = append(out.Lines, l)
			continue
		}
		// A line without newline may only end the file: one after it
		// would be joined to it.
		if lastNew >= 0 && h.Lines[lastNew].EOL == EOLNone {
			return Hunk{}, fmt.Errorf("line %d of hunk %d would be joined to line %d, which has no newline at the "+
				"end of the file; choose that line's change too: %w", i, r.Hunk, lastNew, ErrInvalid)
		}
		lastNew = i
		out.Lines = append(out.Lines, l)
	}
	for _, l := range out.Lines {
		if l.Op != OpDelete {
			out.NewLines++
		}
	}
	return out, nil
}

// sameHunk reports that narrowing kept every line as it was.
func sameHunk(a, b Hunk) bool {
	if len(a.Lines) != len(b.Lines) {
		return false
	}
	for i := range a.Lines {
		if a.Lines[i].Op != b.Lines[i].Op {
			return false
		}
	}
	return true
}
