package diffview

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
)

// Select keeps only the hunks at the given indexes (any order, no
// duplicates) and renumbers the new side of the kept hunks as if the others
// had never been proposed, so the result is a valid patch of the same old
// file. An added or deleted file has a single hunk, so it is selected whole
// or not at all; selecting nothing yields an unchanged file with no hunks
// (a rename or mode change stays). The new side's Size and SHA256 are
// cleared because they are no longer known; word spans are kept.
func Select(fd FileDiff, hunks []int) (FileDiff, error) {
	if !fd.IsText() {
		return FileDiff{}, fmt.Errorf("select hunks of %s: %w", displayPath(fd), ErrNotText)
	}
	keep := slices.Clone(hunks)
	slices.Sort(keep)
	for i, h := range keep {
		if h < 0 || h >= len(fd.Hunks) || (i > 0 && keep[i-1] == h) {
			return FileDiff{}, fmt.Errorf("hunk index %d of %s (%d hunks): %w", h, displayPath(fd), len(fd.Hunks), ErrInvalid)
		}
	}
	if len(keep) == len(fd.Hunks) {
		return fd, nil
	}
	hs := make([]Hunk, len(keep))
	for i, k := range keep {
		hs[i] = fd.Hunks[k]
	}
	return withHunks(fd, hs), nil
}

// withHunks is fd with only the given hunks, each a hunk of fd's old side
// (in order), the new side renumbered as if the others had never been
// proposed; with none left the file is unchanged.
func withHunks(fd FileDiff, hunks []Hunk) FileDiff {
	out := fd
	out.Hunks = make([]Hunk, 0, len(hunks))
	out.Stats = Stats{}
	out.New.Size, out.New.SHA256 = 0, ""
	shift := 0 // lines added minus deleted by the kept hunks so far
	for _, h := range hunks {
		h = renumber(h, shift)
		shift += h.NewLines - h.OldLines
		for _, l := range h.Lines {
			switch l.Op {
			case OpAdd:
				out.Stats.Added++
			case OpDelete:
				out.Stats.Deleted++
			}
		}
		out.Hunks = append(out.Hunks, h)
	}
	out.New.Lines = fd.Old.Lines + shift
	switch {
	case len(hunks) == 0 && fd.Status == StatusAdded:
		out.Status, out.New = StatusUnchanged, FileInfo{}
	case len(hunks) == 0 && (fd.Status == StatusDeleted || fd.Status == StatusModified):
		out.Status, out.New = StatusUnchanged, fd.Old
	}
	return out
}

// renumber moves a hunk's new side so that it starts shift lines after its
// old side, and renumbers its lines to match.
func renumber(h Hunk, shift int) Hunk {
	pos := rangeStart(h.OldStart, h.OldLines) + shift
	h.NewStart = headerStart(pos, h.NewLines)
	lines := make([]Line, len(h.Lines))
	n := pos
	for i, l := range h.Lines {
		if l.Op != OpDelete {
			n++
			l.New = n
		}
		lines[i] = l
	}
	h.Lines = lines
	return h
}

// Apply applies fd's hunks to old and returns the new content. It is strict:
// when fd.Old.SHA256 is set it must match old, and every context and deleted
// line must be byte-identical at the position its hunk names (no fuzz, no
// offset search). Any mismatch returns an error wrapping [ErrConflict] and no
// content. When fd.New.SHA256 is set the result is checked against it too.
// For a deleted file the result is empty; deleting it is the caller's job.
func Apply(old []byte, fd FileDiff) ([]byte, error) {
	name := displayPath(fd)
	if !fd.IsText() {
		if sameContent(fd) {
			return old, nil
		}
		return nil, fmt.Errorf("apply to %s: %w", name, ErrNotText)
	}
	if fd.Old.SHA256 != "" && hashHex(old) != fd.Old.SHA256 {
		return nil, fmt.Errorf("apply to %s: pre-image hash differs: %w", name, ErrConflict)
	}
	if !fd.Old.Exists && len(old) > 0 {
		return nil, fmt.Errorf("apply to %s: file is new but old content is not empty: %w", name, ErrConflict)
	}
	lines := splitLines(string(old))
	out := make([]byte, 0, len(old)+len(old)/8)
	cur := 0
	for hi, h := range fd.Hunks {
		pos := rangeStart(h.OldStart, h.OldLines)
		if pos < cur || pos > len(lines) {
			return nil, fmt.Errorf("apply to %s: hunk %d starts at line %d, outside %d..%d: %w", name, hi, pos+1, cur+1, len(lines), ErrConflict)
		}
		for ; cur < pos; cur++ {
			out = append(out, lines[cur]...)
		}
		var err error
		out, cur, err = applyHunk(out, lines, cur, h)
		if err != nil {
			return nil, fmt.Errorf("apply to %s: hunk %d: %w", name, hi, err)
		}
	}
	for ; cur < len(lines); cur++ {
		out = append(out, lines[cur]...)
	}
	if fd.New.SHA256 != "" && hashHex(out) != fd.New.SHA256 {
		return nil, fmt.Errorf("apply to %s: result differs from the expected post-image: %w", name, ErrConflict)
	}
	return out, nil
}

func applyHunk(out []byte, lines []string, cur int, h Hunk) ([]byte, int, error) {
	for _, l := range h.Lines {
		if l.Op == OpAdd {
			out = l.appendExact(out)
			continue
		}
		if cur >= len(lines) {
			return nil, 0, fmt.Errorf("line %d is past the end of the file: %w", cur+1, ErrConflict)
		}
		if lines[cur] != l.exact() {
			return nil, 0, fmt.Errorf("line %d differs from the patch: %w", cur+1, ErrConflict)
		}
		if l.Op == OpContext {
			out = append(out, lines[cur]...)
		}
		cur++
	}
	return out, cur, nil
}

// sameContent reports a binary or omitted diff whose content did not change
// (a pure rename or mode change), which applies as a no-op.
func sameContent(fd FileDiff) bool {
	return fd.Old.Exists && fd.New.Exists && fd.Old.SHA256 == fd.New.SHA256 && fd.Old.SHA256 != ""
}

func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func displayPath(fd FileDiff) string {
	if fd.New.Path != "" {
		return fd.New.Path
	}
	return fd.Old.Path
}
