package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/diffview"
	"agenthub/workspace/worktree"
)

const worktreeUsage = `worktree list [--workspace W] | show RUN | merge RUN [--approve TOKEN [--file PATH[:HUNK,…]]…] |
  keep RUN | discard RUN [--confirm TOKEN] | push RUN [--remote NAME] [--approve TOKEN] |
  default WORKSPACE worktree|checkout`

// fileFlags collects repeated --file PATH[:HUNK,…] selections.
type fileFlags []api.MergeSelection

func (f *fileFlags) String() string { return "" }

func (f *fileFlags) Set(v string) error {
	p, hs, ok := strings.Cut(v, ":")
	sel := api.MergeSelection{Path: p}
	if ok {
		for _, h := range strings.Split(hs, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(h))
			if err != nil || n < 0 {
				return fmt.Errorf("hunk %q of %s: use a hunk index from the merge listing", h, p)
			}
			sel.Hunks = append(sel.Hunks, n)
		}
	}
	*f = append(*f, sel)
	return nil
}

func runWorktree(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "worktree")
	wsPath := fl.String("workspace", "", "list: only this workspace")
	asJSON := fl.Bool("json", false, "print JSON")
	approve := fl.String("approve", "", "merge, push: the token of the listing you approve")
	confirm := fl.String("confirm", "", "discard: the token of the unsaved work you agree to lose")
	remote := fl.String("remote", "origin", "push: the configured remote")
	var files fileFlags
	fl.Var(&files, "file", "merge: a file to merge, optionally :HUNK,… (repeatable; default every file that applies)")
	words, err := positional(fl, args)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return usagef("%s", worktreeUsage)
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	w := api.NewWorktreesAPI(core)
	one := func() (string, error) {
		if len(words) != 2 {
			return "", usagef("%s", worktreeUsage)
		}
		return words[1], nil
	}
	switch words[0] {
	case "list":
		wsID := ""
		if *wsPath != "" {
			ws, err := findWorkspace(core, *wsPath)
			if err != nil {
				return err
			}
			wsID = ws.ID
		}
		list, err := w.List(wsID)
		if err != nil {
			return err
		}
		var b strings.Builder
		for _, v := range list {
			fmt.Fprintln(&b, describeWorktree(v))
		}
		if len(list) == 0 {
			b.WriteString("no open worktrees\n")
		}
		return printOne(e, *asJSON, list, strings.TrimRight(b.String(), "\n"))
	case "show":
		run, err := one()
		if err != nil {
			return err
		}
		v, err := w.Get(run)
		if err != nil {
			return err
		}
		return printOne(e, *asJSON, v, describeWorktree(v))
	case "merge":
		run, err := one()
		if err != nil {
			return err
		}
		if *approve == "" {
			p, err := w.MergePlan(run)
			if err != nil {
				return err
			}
			return printOne(e, *asJSON, p, describePlan(p))
		}
		res, err := w.Merge(run, api.MergeRequest{Token: *approve, Files: files})
		if err != nil {
			return err
		}
		text := fmt.Sprintf("Merged %d file(s) into the checkout (undo: agenthub undo --workspace W %s)",
			len(res.Files), res.CheckpointID)
		if res.Cleaned {
			text += "; nothing is left to merge: the worktree and its branch were removed"
		} else {
			text += fmt.Sprintf("; %d file(s) of the run are not in the checkout", res.Remaining)
		}
		return printOne(e, *asJSON, res, text)
	case "keep":
		run, err := one()
		if err != nil {
			return err
		}
		v, err := w.Keep(run)
		if err != nil {
			return err
		}
		return printOne(e, *asJSON, v, "Kept as branch "+v.Branch+"; "+v.Outcome)
	case "discard":
		run, err := one()
		if err != nil {
			return err
		}
		v, err := w.Discard(run, *confirm)
		if err != nil {
			return err
		}
		return printOne(e, *asJSON, v, "Discarded the worktree and branch "+v.Branch)
	case "push":
		run, err := one()
		if err != nil {
			return err
		}
		p, err := w.PlanPush(run, *remote)
		if err != nil {
			return err
		}
		if *approve == "" {
			return printOne(e, *asJSON, struct {
				worktree.PushPlan
				Token string `json:"token"`
			}{p, pushToken(p)}, describePush(p))
		}
		if *approve != pushToken(p) {
			return &backend.Error{Code: backend.CodeConflict, Detail: "push_moved",
				Message: "the branch or the remote moved since the push was shown; nothing was pushed",
				Next:    "Show the push again (agenthub worktree push RUN) and approve what it shows now."}
		}
		if _, err := w.Push(run, p); err != nil {
			return err
		}
		return printOne(e, *asJSON, p, fmt.Sprintf("Pushed %s to %s (%d commit(s), now at %s)", p.Branch,
			p.Remote, len(p.Commits), shortHash(p.To)))
	case "default":
		if len(words) != 3 {
			return usagef("%s", worktreeUsage)
		}
		ws, err := findWorkspace(core, words[1])
		if err != nil {
			return err
		}
		if err := w.SetDefaultIsolation(ws.ID, words[2]); err != nil {
			return err
		}
		return printOne(e, *asJSON, map[string]string{"workspaceId": ws.ID, "isolation": words[2]},
			"Runs of "+ws.DisplayPath+" now use isolation "+words[2]+" unless they ask for another")
	}
	return usagef("%s", worktreeUsage)
}

func shortHash(h string) string { return h[:min(len(h), 12)] }

func describeWorktree(v api.WorktreeView) string {
	s := fmt.Sprintf("%s  %s  %s  base %s", v.RunID, v.WorktreeRecord.State, v.Branch, shortHash(v.Base))
	switch {
	case v.Missing:
		s += "  directory missing"
	case v.WorktreeRecord.State == "active" || v.WorktreeRecord.State == "kept":
		s += fmt.Sprintf("  %d uncommitted, %d commit(s) on no other branch", len(v.Uncommitted), len(v.Unmerged))
	}
	if d := v.Describe(); d != "" {
		s += "\n  unsaved: " + d + "\n  discard token: " + v.Token
	}
	return s
}

func describePlan(p api.MergePlan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Merge of %s (base %s) into the checkout:\n", p.Branch, shortHash(p.Base))
	var diffs []diffview.FileDiff
	for _, f := range p.Files {
		line := fmt.Sprintf("  %-8s %s  (%d hunk(s))", f.Status, f.Path, len(f.Diff.Hunks))
		if f.Reason != "" {
			line += ": " + f.Reason
		}
		fmt.Fprintln(&b, line)
		if f.Status == api.MergeApply {
			diffs = append(diffs, f.Diff)
		}
	}
	if len(p.Files) == 0 {
		b.WriteString("  the run changed nothing\n")
	}
	b.Write(diffview.Unified(diffs...))
	fmt.Fprintf(&b, "Approve: agenthub worktree merge %s --approve %s [--file PATH[:HUNK,…]]…", p.RunID, p.Token)
	return b.String()
}

func pushToken(p worktree.PushPlan) string {
	sum := sha256.Sum256([]byte(p.Remote + "\x00" + p.Branch + "\x00" + p.From + "\x00" + p.To))
	return hex.EncodeToString(sum[:8])
}

func describePush(p worktree.PushPlan) string {
	var b strings.Builder
	from := "(new branch)"
	if p.From != "" {
		from = shortHash(p.From)
	}
	fmt.Fprintf(&b, "Push %s to %s: %s → %s, %d commit(s):\n", p.Branch, p.Remote, from, shortHash(p.To), len(p.Commits))
	for _, c := range p.Commits {
		fmt.Fprintf(&b, "  %s %s\n", shortHash(c.Hash), c.Subject)
	}
	fmt.Fprintf(&b, "Approve: agenthub worktree push RUN --remote %s --approve %s", p.Remote, pushToken(p))
	return b.String()
}
