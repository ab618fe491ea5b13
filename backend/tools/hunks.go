package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/diffview"
)

// selection is the reviewer's per-hunk choice for one file, from the
// decision the engine passes as the call's resume input.
type selection struct {
	chosen   bool  // the reviewer chose hunks; false means the whole patch
	keep     []int // hunk indexes to apply
	total    int
	rejected []diffview.Hunk
	reason   string
}

// resumeDecision is the part of the engine's resume input a patch reads.
type resumeDecision struct {
	Hunks  *[]backend.HunkRef `json:"hunks"`
	Reason string             `json:"reason"`
}

// fileDiff is the diff the reviewer was shown: gatedPatch computes it the
// same way, so hunk indexes agree.
func fileDiff(pr proposal) (diffview.FileDiff, error) {
	var oldSide, newSide diffview.Side
	if pr.exists {
		oldSide = diffview.Side{Path: pr.path, Mode: pr.mode, Content: pr.old}
	}
	if !pr.delete {
		newSide = diffview.Side{Path: pr.path, Mode: pr.mode, Content: pr.next}
	}
	return diffview.Diff(oldSide, newSide, diffview.Options{})
}

// narrow applies a per-hunk selection to a proposal: the result writes only
// the approved hunks, computed from the same pre-image. Without a selection
// the proposal is returned as it is.
func narrow(pr proposal, resume json.RawMessage) (proposal, selection, error) {
	var d resumeDecision
	if len(resume) > 0 {
		_ = json.Unmarshal(resume, &d) // a resume input without hunks means the whole patch
	}
	sel := selection{reason: d.Reason}
	if d.Hunks == nil {
		return pr, sel, nil
	}
	fd, err := fileDiff(pr)
	if err != nil {
		return pr, sel, fmt.Errorf("diff %s: %w", pr.path, err)
	}
	sel.chosen, sel.total = true, len(fd.Hunks)
	for _, h := range *d.Hunks {
		if h.Path == pr.path {
			sel.keep = append(sel.keep, h.Index)
		}
	}
	part, err := diffview.Select(fd, sel.keep)
	if err != nil {
		return pr, sel, fmt.Errorf("select the approved hunks of %s: %w", pr.path, err)
	}
	kept := map[int]bool{}
	for _, i := range sel.keep {
		kept[i] = true
	}
	for i, h := range fd.Hunks {
		if !kept[i] {
			sel.rejected = append(sel.rejected, h)
		}
	}
	if len(sel.keep) == len(fd.Hunks) {
		return pr, sel, nil
	}
	out, err := partial(pr, part)
	return out, sel, err
}

// errNothingApproved means the reviewer approved the call but none of its
// hunks: nothing is written.
var errNothingApproved = errors.New("the reviewer approved none of the hunks")

// partial turns a selected diff back into a proposal of whole content.
func partial(pr proposal, part diffview.FileDiff) (proposal, error) {
	if part.Status == diffview.StatusUnchanged {
		return pr, errNothingApproved
	}
	next, err := diffview.Apply(pr.old, part)
	if err != nil {
		return pr, fmt.Errorf("apply the approved hunks of %s: %w", pr.path, err)
	}
	out := pr
	out.next, out.delete = next, false
	return out, nil
}

// describe names the hunks the reviewer rejected, for the agent.
func (s selection) describe() string {
	if !s.chosen || len(s.rejected) == 0 {
		return ""
	}
	heads := make([]string, len(s.rejected))
	for i, h := range s.rejected {
		heads[i] = fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
	}
	msg := fmt.Sprintf("; the reviewer approved %d of %d hunks and rejected %s", len(s.keep), s.total,
		strings.Join(heads, ", "))
	if s.reason != "" {
		msg += " (reason: " + s.reason + ")"
	}
	return msg
}

// emitRejected records the hunks the reviewer turned down.
func (s selection) emitRejected(env backend.ToolEnv, tool, path string) {
	if env.Emit == nil || !s.chosen || len(s.rejected) == 0 {
		return
	}
	env.Emit(backend.EvPatchRejected, map[string]any{"tool": tool, "path": path, "reason": "reviewer",
		"comment": s.reason, "hunks": s.rejected})
}
