package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/patch"
	"agenthub/diffview"
)

// patchOf reads the preview of a patch approval; ok is false for any other
// kind of approval (a command, a commit, ...).
func patchOf(a backend.ApprovalRequest) (patch.Preview, bool) {
	var pv patch.Preview
	if a.Kind != backend.ActionPatch || json.Unmarshal(a.Preview, &pv) != nil || pv.Path == "" {
		return patch.Preview{}, false
	}
	return pv, true
}

// selectHunks turns `--hunks 1,3` (numbers as `approvals show` prints them,
// from 1; "2-4" is a range) into the API's selection of a.'s patch, whose
// indexes count from 0. Every mistake is an invalid_input error naming the
// next step, and nothing is decided.
func selectHunks(a backend.ApprovalRequest, spec string) ([]backend.HunkRef, error) {
	show := "See its hunks, numbered, with: agenthub approvals show " + a.ID
	pv, ok := patchOf(a)
	if !ok {
		return nil, &backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("approval %s is a %s, not a patch: --hunks selects hunks of a patch", a.ID, a.Kind),
			Next:    "Approve or reject it whole: agenthub approve " + a.ID + " (or agenthub reject " + a.ID + ")"}
	}
	total := len(pv.Diff.Hunks)
	if total == 0 {
		return nil, &backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("the patch to %s has no hunks to choose from (binary, too large, or a file "+
				"created or deleted empty)", pv.Path),
			Next: "Approve or reject it whole: agenthub approve " + a.ID + " (or agenthub reject " + a.ID + ")"}
	}
	nums, err := parseHunkList(spec)
	if err != nil {
		return nil, &backend.Error{Code: backend.CodeInvalidInput, Message: "--hunks " + strconv.Quote(spec) + ": " + err.Error(),
			Next: "Give hunk numbers separated by commas, e.g. --hunks 1,3 or --hunks 2-4. " + show}
	}
	refs := make([]backend.HunkRef, 0, len(nums))
	for _, n := range nums {
		if n > total {
			return nil, &backend.Error{Code: backend.CodeInvalidInput,
				Message: fmt.Sprintf("--hunks: there is no hunk %d: the patch to %s has %d hunks (1 to %d)", n, pv.Path, total, total),
				Next:    show}
		}
		refs = append(refs, backend.HunkRef{Path: pv.Path, Index: n - 1})
	}
	// The decide endpoint's own validator has the last word, so the CLI
	// and the API accept exactly the same selections.
	if err := api.ValidateHunks(a, refs); err != nil {
		return nil, err
	}
	return refs, nil
}

// parseHunkList reads "1,3" or "1-2,4": numbers from 1, each at most once.
func parseHunkList(spec string) ([]int, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("no hunk numbers (to approve none, reject the approval instead)")
	}
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(spec, ",") {
		lo, hi, err := hunkRange(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		for n := lo; n <= hi; n++ {
			if seen[n] {
				return nil, fmt.Errorf("hunk %d is given twice", n)
			}
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

func hunkRange(part string) (int, int, error) {
	a, b, isRange := strings.Cut(part, "-")
	lo, err := hunkNumber(a)
	if err != nil || !isRange {
		return lo, lo, err
	}
	hi, err := hunkNumber(b)
	if err != nil {
		return 0, 0, err
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("range %q runs backwards", part)
	}
	return lo, hi, nil
}

func hunkNumber(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a hunk number (they count from 1)", s)
	}
	return n, nil
}

// printApproval shows one approval for `approvals show`: a patch as its
// hunks, numbered as --hunks takes them; anything else as its preview.
func printApproval(w io.Writer, a backend.ApprovalRequest) {
	fmt.Fprintf(w, "Approval %s (run %s): %s\nkind %s, risk %s\n", a.ID, a.RunID, a.Title, a.Kind, a.Risk)
	pv, ok := patchOf(a)
	if !ok {
		fmt.Fprintln(w, preview(a.Preview))
		return
	}
	total := len(pv.Diff.Hunks)
	fmt.Fprintf(w, "%s %s: %d hunk(s)\n", pv.Operation, pv.Path, total)
	if total == 0 {
		fmt.Fprintln(w, "(no text hunks: binary, too large or empty; it can only be approved or rejected whole)")
		return
	}
	for i, h := range pv.Diff.Hunks {
		fmt.Fprintf(w, "\nhunk %d of %d  @@ -%d,%d +%d,%d @@\n", i+1, total, h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		writeHunkLines(w, h)
	}
	fmt.Fprintf(w, "\nApprove some hunks with: agenthub approve %s --hunks 1", a.ID)
	if total > 1 {
		fmt.Fprintf(w, ",%d", total)
	}
	fmt.Fprintln(w)
}

func writeHunkLines(w io.Writer, h diffview.Hunk) {
	mark := map[diffview.Op]string{diffview.OpContext: " ", diffview.OpDelete: "-", diffview.OpAdd: "+"}
	for _, l := range h.Lines {
		fmt.Fprintf(w, "%s%s\n", mark[l.Op], l.Text)
		if l.EOL == diffview.EOLNone {
			fmt.Fprintln(w, `\ No newline at end of file`)
		}
	}
}
