package api

import (
	"encoding/json"
	"fmt"

	"agenthub/backend"
	"agenthub/backend/patch"
	"agenthub/diffview"
)

// ValidateHunks checks a per-hunk selection against the patch approval a
// shows: a patch with text hunks, each reference naming its file and one
// of its hunks (indexes from 0) at most once, and at least one hunk. The
// decide endpoint and the CLI's --hunks both use it, so neither accepts a
// selection of hunks that do not exist (issue 14 item 12: such a decision
// was accepted, consumed the approval and wrote nothing).
func ValidateHunks(a backend.ApprovalRequest, refs []backend.HunkRef) error {
	whole := "Approve or reject it whole, without a selection of hunks."
	var pv patch.Preview
	if a.Kind != backend.ActionPatch || json.Unmarshal(a.Preview, &pv) != nil || pv.Path == "" {
		return &backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("approval %s is a %s, not a patch: a selection of hunks applies only to a patch", a.ID, a.Kind),
			Next:    whole}
	}
	total := len(pv.Diff.Hunks)
	if total == 0 {
		return &backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("the patch to %s has no hunks to choose from (binary, too large, or a file "+
				"created or deleted empty)", pv.Path),
			Next: whole}
	}
	if len(refs) == 0 {
		return &backend.Error{Code: backend.CodeInvalidInput, Message: "the selection names no hunk",
			Next: "To approve none of the patch, reject it instead."}
	}
	next := fmt.Sprintf("Select hunks of %s by index, 0 to %d.", pv.Path, total-1)
	seen := map[int]bool{}
	for _, h := range refs {
		switch {
		case h.Path != pv.Path:
			return &backend.Error{Code: backend.CodeInvalidInput,
				Message: fmt.Sprintf("the selection names %q, which is not the file of this patch (%s)", h.Path, pv.Path),
				Next:    next}
		case h.Index < 0 || h.Index >= total:
			return &backend.Error{Code: backend.CodeInvalidInput,
				Message: fmt.Sprintf("there is no hunk with index %d: the patch to %s has %d hunks (indexes 0 to %d)",
					h.Index, pv.Path, total, total-1),
				Next: next}
		case seen[h.Index]:
			return &backend.Error{Code: backend.CodeInvalidInput,
				Message: fmt.Sprintf("the selection names hunk %d of %s twice", h.Index, pv.Path), Next: next}
		}
		seen[h.Index] = true
		if h.Lines != nil && len(h.Lines) == 0 {
			return &backend.Error{Code: backend.CodeInvalidInput,
				Message: fmt.Sprintf("the selection of hunk %d of %s names no line", h.Index, pv.Path),
				Next:    "Leave the hunk out of the selection, or omit its lines to approve it whole."}
		}
	}
	// Lines are checked by the code that applies them, on the diff the
	// reviewer saw: a line outside its hunk, named twice, unchanged context
	// or one that would be joined to a line without newline is refused
	// here, before the approval is consumed.
	if _, err := diffview.SelectLines(pv.Diff, patch.LineRefs(pv.Path, refs)); err != nil {
		return &backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("the selection of lines of %s cannot be applied: %v", pv.Path, err),
			Next: "Choose added (+) or removed (-) lines of the hunk by their index in the hunk, each once: " +
				"agenthub approvals show " + a.ID + " numbers them."}
	}
	return nil
}

// checkSelection validates a decision's selection of hunks, if it has
// one, against the pending approval it decides; an approval no longer
// pending is left to the engine, which answers its first outcome or a
// conflict.
func (a *ApprovalsAPI) checkSelection(d backend.Decision) error {
	if d.Hunks == nil {
		return nil
	}
	if !d.Kind.Approves() {
		return &backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("a selection of hunks chooses what to approve; %s turns down the whole patch", d.Kind),
			Next:    "Send the rejection without hunks."}
	}
	// A partial approval applies once. Remembered for the run or the
	// workspace, its grant would approve the whole request the next time
	// (issue 18: "a partial approval cannot be always allow").
	if d.Kind != backend.ApproveOnce {
		return &backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("a selection of hunks or lines is approved once; %s would remember the whole request", d.Kind),
			Next:    "Send the selection with approve_once, or approve the whole patch with the wider scope."}
	}
	pending, err := a.ForRun("")
	if err != nil {
		return err
	}
	for _, p := range pending {
		if p.ID == d.ApprovalID {
			return ValidateHunks(p, d.Hunks)
		}
	}
	return nil
}
