package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
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
// indexes count from 0. `H:L` or `H:L-M` chooses lines of hunk H instead of
// all of it, numbered as `approvals show` prints them within the hunk;
// `1:2-3,1:7` adds up to lines 2, 3 and 7 of hunk 1. Every mistake is an
// invalid_input error naming the next step, and nothing is decided.
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
	picks, err := parseHunkList(spec)
	if err != nil {
		return nil, &backend.Error{Code: backend.CodeInvalidInput, Message: "--hunks " + strconv.Quote(spec) + ": " + err.Error(),
			Next: "Give hunk numbers separated by commas, e.g. --hunks 1,3 or --hunks 2-4, or lines of a hunk as " +
				"--hunks 1:3-5. " + show}
	}
	refs := make([]backend.HunkRef, 0, len(picks))
	for _, p := range picks {
		if p.hunk > total {
			return nil, &backend.Error{Code: backend.CodeInvalidInput,
				Message: fmt.Sprintf("--hunks: there is no hunk %d: the patch to %s has %d hunks (1 to %d)", p.hunk, pv.Path, total, total),
				Next:    show}
		}
		ref := backend.HunkRef{Path: pv.Path, Index: p.hunk - 1}
		h := pv.Diff.Hunks[p.hunk-1]
		for _, n := range p.lines {
			switch {
			case n > len(h.Lines):
				return nil, &backend.Error{Code: backend.CodeInvalidInput,
					Message: fmt.Sprintf("--hunks: hunk %d has %d lines (1 to %d), not %d", p.hunk, len(h.Lines), len(h.Lines), n),
					Next:    show}
			case h.Lines[n-1].Op == diffview.OpContext:
				return nil, &backend.Error{Code: backend.CodeInvalidInput,
					Message: fmt.Sprintf("--hunks: line %d of hunk %d is unchanged context, not a change to choose", n, p.hunk),
					Next:    "Choose lines marked + or -. " + show}
			}
			ref.Lines = append(ref.Lines, n-1)
		}
		refs = append(refs, ref)
	}
	// The decide endpoint's own validator has the last word, so the CLI
	// and the API accept exactly the same selections.
	if err := api.ValidateHunks(a, refs); err != nil {
		return nil, err
	}
	return refs, nil
}

// hunkPick is one hunk of --hunks: whole (no lines) or some of its lines,
// numbers from 1.
type hunkPick struct {
	hunk  int
	lines []int
}

// parseHunkList reads "1,3", "1-2,4" or "1:3-5,1:8,2": hunks and lines
// numbered from 1, each at most once, a hunk either whole or by lines.
func parseHunkList(spec string) ([]hunkPick, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("no hunk numbers (to approve none, reject the approval instead)")
	}
	var out []hunkPick
	at := map[int]int{} // hunk -> its index in out
	for _, part := range strings.Split(spec, ",") {
		hunkPart, linePart, byLines := strings.Cut(strings.TrimSpace(part), ":")
		if byLines {
			h, err := hunkNumber(hunkPart)
			if err != nil {
				return nil, err
			}
			lo, hi, err := hunkRange(linePart)
			if err != nil {
				return nil, fmt.Errorf("lines of hunk %d: %w", h, err)
			}
			i, seen := at[h]
			if seen && out[i].lines == nil {
				return nil, fmt.Errorf("hunk %d is given whole and by lines", h)
			}
			if !seen {
				at[h], i = len(out), len(out)
				out = append(out, hunkPick{hunk: h, lines: []int{}})
			}
			for n := lo; n <= hi; n++ {
				if slices.Contains(out[i].lines, n) {
					return nil, fmt.Errorf("line %d of hunk %d is given twice", n, h)
				}
				out[i].lines = append(out[i].lines, n)
			}
			continue
		}
		lo, hi, err := hunkRange(hunkPart)
		if err != nil {
			return nil, err
		}
		for n := lo; n <= hi; n++ {
			if i, seen := at[n]; seen {
				if out[i].lines != nil {
					return nil, fmt.Errorf("hunk %d is given whole and by lines", n)
				}
				return nil, fmt.Errorf("hunk %d is given twice", n)
			}
			at[n] = len(out)
			out = append(out, hunkPick{hunk: n})
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
	fmt.Fprintf(w, "\nor some lines of a hunk (+ and - lines, numbered as above) with: agenthub approve %s --hunks 1:%s\n",
		a.ID, exampleLines(pv.Diff.Hunks[0]))
}

func writeHunkLines(w io.Writer, h diffview.Hunk) {
	mark := map[diffview.Op]string{diffview.OpContext: " ", diffview.OpDelete: "-", diffview.OpAdd: "+"}
	// Rows are numbered as --hunks H:L chooses them.
	for i, l := range h.Lines {
		fmt.Fprintf(w, "%4d %s%s\n", i+1, mark[l.Op], l.Text)
		if l.EOL == diffview.EOLNone {
			fmt.Fprintln(w, `\ No newline at end of file`)
		}
	}
}

// exampleLines names the changed lines of a hunk for the hint, e.g. "2-3".
func exampleLines(h diffview.Hunk) string {
	first, last := 0, 0
	for i, l := range h.Lines {
		if l.Op == diffview.OpContext {
			if first > 0 {
				break
			}
			continue
		}
		if first == 0 {
			first = i + 1
		}
		last = i + 1
	}
	if first == last {
		return strconv.Itoa(first)
	}
	return fmt.Sprintf("%d-%d", first, last)
}
