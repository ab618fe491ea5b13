package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"agenthub/backend"
	"agenthub/diffview"
)

// Selection is the reviewer's choice of hunks, or of lines within hunks,
// for one file, from the decision the engine passes as the call's resume
// input.
type Selection struct {
	Chosen   bool  // the reviewer chose hunks; false means the whole patch
	Keep     []int // hunk indexes applied, whole or in part
	Total    int
	Rejected []diffview.Hunk // hunks left out whole
	// Narrowed are the hunks applied in part, each with the lines left out.
	Narrowed []NarrowedHunk
	Reason   string
}

// NarrowedHunk is a hunk the reviewer approved some lines of.
type NarrowedHunk struct {
	Hunk    diffview.Hunk   `json:"hunk"`
	LeftOut []diffview.Line `json:"leftOut"`
}

// Partial reports whether the reviewer turned some hunks or lines down.
func (s Selection) Partial() bool { return s.Chosen && (len(s.Rejected) > 0 || len(s.Narrowed) > 0) }

// ErrNothingApproved means the reviewer approved the call but none of its
// hunks: nothing is written.
var ErrNothingApproved = errors.New("the reviewer approved none of the hunks")

// resumeDecision is the part of the engine's resume input a patch reads.
type resumeDecision struct {
	Hunks  *[]backend.HunkRef `json:"hunks"`
	Reason string             `json:"reason"`
}

// LineRefs turns the references to one file into diffview's selection.
func LineRefs(path string, refs []backend.HunkRef) []diffview.LineRef {
	var out []diffview.LineRef
	for _, h := range refs {
		if h.Path == path {
			out = append(out, diffview.LineRef{Hunk: h.Index, Lines: h.Lines})
		}
	}
	return out
}

// Narrow applies a selection of hunks or lines to a proposal: the result
// writes only what was approved, computed from the same pre-image. Without a
// selection the proposal is returned as it is. A malformed selection (a
// hunk or line that does not exist, or named twice) is refused whole.
func Narrow(pr Proposal, resume json.RawMessage) (Proposal, Selection, error) {
	var d resumeDecision
	if len(resume) > 0 {
		_ = json.Unmarshal(resume, &d) // a resume input without hunks means the whole patch
	}
	sel := Selection{Reason: d.Reason}
	if d.Hunks == nil {
		return pr, sel, nil
	}
	fd, err := pr.Diff()
	if err != nil {
		return pr, sel, fmt.Errorf("diff %s: %w", pr.Path, err)
	}
	sel.Chosen, sel.Total = true, len(fd.Hunks)
	refs := LineRefs(pr.Path, *d.Hunks)
	// A bad index is refused before anything counts as rejected.
	part, err := diffview.SelectLines(fd, refs)
	if err != nil {
		return pr, sel, fmt.Errorf("select the approved lines of %s: %w", pr.Path, err)
	}
	byHunk := map[int][]int{}
	for _, r := range refs {
		sel.Keep = append(sel.Keep, r.Hunk)
		byHunk[r.Hunk] = r.Lines
	}
	slices.Sort(sel.Keep)
	for i, h := range fd.Hunks {
		lines, kept := byHunk[i]
		switch {
		case !kept:
			sel.Rejected = append(sel.Rejected, h)
		case len(lines) > 0:
			if left := leftOut(h, lines); len(left) > 0 {
				sel.Narrowed = append(sel.Narrowed, NarrowedHunk{Hunk: h, LeftOut: left})
			}
		}
	}
	if !sel.Partial() {
		return pr, sel, nil
	}
	if part.Status == diffview.StatusUnchanged || len(sel.Keep) == 0 {
		return pr, sel, ErrNothingApproved
	}
	next, err := diffview.Apply(pr.Old, part)
	if err != nil {
		return pr, sel, fmt.Errorf("apply the approved lines of %s: %w", pr.Path, err)
	}
	pr.Next, pr.Delete = next, false
	return pr, sel, nil
}

// leftOut lists the changed lines of h that are not chosen.
func leftOut(h diffview.Hunk, chosen []int) []diffview.Line {
	var out []diffview.Line
	for i, l := range h.Lines {
		if l.Op != diffview.OpContext && !slices.Contains(chosen, i) {
			out = append(out, l)
		}
	}
	return out
}

// maxDescribed bounds the left-out lines quoted to the agent; the rest are
// counted.
const maxDescribed = 40

// Describe says exactly what the reviewer left out, for the agent: the
// hunks rejected whole and, of the hunks approved in part, each line not
// applied (a removal not made, an addition not written). Empty when the
// whole change was applied.
func (s Selection) Describe() string {
	if !s.Partial() {
		return ""
	}
	var parts []string
	if len(s.Rejected) > 0 {
		heads := make([]string, len(s.Rejected))
		for i, h := range s.Rejected {
			heads[i] = header(h)
		}
		parts = append(parts, fmt.Sprintf("the reviewer approved %d of %d hunks and rejected %s", len(s.Keep), s.Total,
			strings.Join(heads, ", ")))
	}
	quoted := 0
	for _, n := range s.Narrowed {
		var lines []string
		for _, l := range n.LeftOut {
			if quoted == maxDescribed {
				break
			}
			quoted++
			if l.Op == diffview.OpDelete {
				lines = append(lines, fmt.Sprintf("old line %d %s was kept (its removal was not approved)", l.Old, quote(l.Text)))
			} else {
				lines = append(lines, fmt.Sprintf("%s was not added (proposed as new line %d)", quote(l.Text), l.New))
			}
		}
		if more := len(n.LeftOut) - len(lines); more > 0 {
			lines = append(lines, fmt.Sprintf("%d more line(s) not applied", more))
		}
		parts = append(parts, fmt.Sprintf("of %s the reviewer approved only some lines: %s", header(n.Hunk),
			strings.Join(lines, "; ")))
	}
	msg := "; " + strings.Join(parts, "; ")
	if s.Reason != "" {
		msg += " (reason: " + s.Reason + ")"
	}
	return msg
}

func header(h diffview.Hunk) string {
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
}

// quote shows a line to the agent, shortened when long.
func quote(s string) string {
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return strconv.Quote(s)
}

// EmitRejected records the hunks, and the lines of hunks approved in part,
// the reviewer turned down.
func (s Selection) EmitRejected(env backend.ToolEnv, tool, path string) {
	if env.Emit == nil || !s.Partial() {
		return
	}
	payload := map[string]any{"tool": tool, "path": path, "reason": "reviewer", "comment": s.Reason,
		"hunks": nonNil(s.Rejected)}
	if len(s.Narrowed) > 0 {
		payload["lines"] = s.Narrowed
	}
	env.Emit(backend.EvPatchRejected, payload)
}

func nonNil(h []diffview.Hunk) []diffview.Hunk {
	if h == nil {
		return []diffview.Hunk{}
	}
	return h
}
