package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/diffview"
)

// Selection is the reviewer's per-hunk choice for one file, from the
// decision the engine passes as the call's resume input.
type Selection struct {
	Chosen   bool  // the reviewer chose hunks; false means the whole patch
	Keep     []int // hunk indexes to apply
	Total    int
	Rejected []diffview.Hunk
	Reason   string
}

// Partial reports whether the reviewer turned some hunks down.
func (s Selection) Partial() bool { return s.Chosen && len(s.Rejected) > 0 }

// ErrNothingApproved means the reviewer approved the call but none of its
// hunks: nothing is written.
var ErrNothingApproved = errors.New("the reviewer approved none of the hunks")

// resumeDecision is the part of the engine's resume input a patch reads.
type resumeDecision struct {
	Hunks  *[]backend.HunkRef `json:"hunks"`
	Reason string             `json:"reason"`
}

// Narrow applies a per-hunk selection to a proposal: the result writes only
// the approved hunks, computed from the same pre-image. Without a selection
// the proposal is returned as it is.
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
	kept := map[int]bool{}
	for _, h := range *d.Hunks {
		if h.Path == pr.Path && !kept[h.Index] {
			sel.Keep = append(sel.Keep, h.Index)
			kept[h.Index] = true
		}
	}
	// A bad index is refused before anything counts as rejected.
	part, err := diffview.Select(fd, sel.Keep)
	if err != nil {
		return pr, sel, fmt.Errorf("select the approved hunks of %s: %w", pr.Path, err)
	}
	for i, h := range fd.Hunks {
		if !kept[i] {
			sel.Rejected = append(sel.Rejected, h)
		}
	}
	if len(sel.Rejected) == 0 {
		return pr, sel, nil
	}
	if part.Status == diffview.StatusUnchanged || len(sel.Keep) == 0 {
		return pr, sel, ErrNothingApproved
	}
	next, err := diffview.Apply(pr.Old, part)
	if err != nil {
		return pr, sel, fmt.Errorf("apply the approved hunks of %s: %w", pr.Path, err)
	}
	pr.Next, pr.Delete = next, false
	return pr, sel, nil
}

// Describe names the hunks the reviewer rejected, for the agent; empty when
// none were.
func (s Selection) Describe() string {
	if !s.Partial() {
		return ""
	}
	heads := make([]string, len(s.Rejected))
	for i, h := range s.Rejected {
		heads[i] = fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
	}
	msg := fmt.Sprintf("; the reviewer approved %d of %d hunks and rejected %s", len(s.Keep), s.Total,
		strings.Join(heads, ", "))
	if s.Reason != "" {
		msg += " (reason: " + s.Reason + ")"
	}
	return msg
}

// EmitRejected records the hunks the reviewer turned down.
func (s Selection) EmitRejected(env backend.ToolEnv, tool, path string) {
	if env.Emit == nil || !s.Partial() {
		return
	}
	env.Emit(backend.EvPatchRejected, map[string]any{"tool": tool, "path": path, "reason": "reviewer",
		"comment": s.Reason, "hunks": s.Rejected})
}
