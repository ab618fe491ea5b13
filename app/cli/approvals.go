package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"agenthub/app/api"
	"agenthub/backend"
)

func runApprovals(ctx context.Context, e *Env, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "show") {
		return usagef("approvals needs a subcommand: list [--run RUN] [--json], or show ID [--json]")
	}
	sub := args[0]
	fl, home := flags(e, "approvals "+sub)
	asJSON := fl.Bool("json", false, "print JSON")
	runID := fl.String("run", "", "list: only this run's approvals")
	words, err := positional(fl, args[1:])
	if err != nil {
		return err
	}
	if want := map[string]int{"list": 0, "show": 1}[sub]; len(words) != want {
		return usagef("approvals %s takes %d argument(s)", sub, want)
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	if sub == "show" {
		a, err := pendingApproval(core, words[0])
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.Stdout).Encode(a)
		}
		printApproval(e.Stdout, a)
		return nil
	}
	list, err := api.NewApprovalsAPI(core).ForRun(*runID)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.Stdout).Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(e.Stdout, "No pending approvals.")
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "APPROVAL\tRUN\tKIND\tRISK\tTITLE")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.ID, a.RunID, a.Kind, a.Risk, a.Title)
	}
	return tw.Flush()
}

// runDecide is `approve ID` and `reject ID`: it records the decision as the
// user's act on the CLI, then follows the run until it ends or asks again.
func runDecide(approve bool) func(ctx context.Context, e *Env, args []string) error {
	name := map[bool]string{true: "approve", false: "reject"}[approve]
	return func(ctx context.Context, e *Env, args []string) error {
		fl, home := flags(e, name)
		reason := fl.String("reason", "", "the reason the agent is told (reject, or approve --hunks)")
		stop := fl.Bool("stop", false, "reject: stop the run instead of telling the agent")
		scope := fl.String("scope", "once", "approve: once | run (the same action for the rest of this run) | workspace (add a rule to the workspace policy)")
		asJSON := fl.Bool("json", false, "print the run's following events as NDJSON")
		onApproval := fl.String("on-approval", "", "what to do if the run asks again (as for run)")
		hunks := fl.String("hunks", "", "approve: only these hunks of a patch, or lines of a hunk, numbered as approvals show prints them (e.g. 1,3 or 2-4; 1:3-5 is lines 3 to 5 of hunk 1); the agent is told exactly what was left out")
		id, err := parseInterleaved(fl, args)
		if err != nil {
			return err
		}
		if id == "" || strings.Contains(id, " ") {
			return usagef("%s takes one approval id (see agenthub approvals list)", name)
		}
		partial := isSet(fl, "hunks")
		if partial && !approve {
			return usagef("--hunks chooses what to approve: use agenthub approve %s --hunks …; reject turns down the whole patch", id)
		}
		if partial && *scope != "once" {
			return usagef("--hunks approves part of this one patch; it cannot be combined with --scope %s", *scope)
		}
		mode, err := chooseMode(*onApproval, e.Stdin)
		if err != nil {
			return err
		}
		core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
		if err != nil {
			return err
		}
		defer core.Close()
		a, err := pendingApproval(core, id)
		if err != nil {
			return err
		}
		// The cursor is taken before deciding: the run continues at once.
		r, err := api.NewRunsAPI(core).Get(a.RunID)
		if err != nil {
			return err
		}
		kind, err := decisionKind(approve, *scope, *stop)
		if err != nil {
			return err
		}
		var refs []backend.HunkRef
		if partial {
			if refs, err = selectHunks(a, *hunks); err != nil {
				return err
			}
		}
		if _, err := api.NewApprovalsAPI(core).Decide(backend.Decision{ApprovalID: a.ID, ToolCallID: a.ToolCallID,
			Kind: kind, SubjectHash: a.SubjectHash, Reason: *reason, Hunks: refs}); err != nil {
			return err
		}
		if !*asJSON {
			fmt.Fprintf(e.Stdout, "Recorded %s%s for %s. Following run %s:\n", kind, hunkNote(refs), a.ID, a.RunID)
		}
		return newFollower(e, core, *asJSON, mode).follow(ctx, a.RunID, r.LastSequence)
	}
}

func decisionKind(approve bool, scope string, stop bool) (backend.DecisionKind, error) {
	if !approve {
		if stop {
			return backend.RejectAndStop, nil
		}
		return backend.RejectAndTell, nil
	}
	kinds := map[string]backend.DecisionKind{"once": backend.ApproveOnce, "run": backend.ApproveForRun,
		"workspace": backend.AlwaysAllowWorkspace}
	k, ok := kinds[scope]
	if !ok {
		return "", usagef("--scope %q: use once, run or workspace", scope)
	}
	return k, nil
}

func pendingApproval(core *api.Core, id string) (backend.ApprovalRequest, error) {
	list, err := api.NewApprovalsAPI(core).List()
	if err != nil {
		return backend.ApprovalRequest{}, err
	}
	for _, a := range list {
		if a.ID == id {
			return a, nil
		}
	}
	return backend.ApprovalRequest{}, &backend.Error{Code: backend.CodeNotFound,
		Message: fmt.Sprintf("no pending approval %s", id), Next: "List the pending ones with: agenthub approvals list"}
}

// isSet reports whether the flag was given, even as an empty value.
func isSet(fl *flag.FlagSet, name string) bool {
	set := false
	fl.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// hunkNote says which hunks a decision approved, for the confirmation line.
func hunkNote(refs []backend.HunkRef) string {
	if refs == nil {
		return ""
	}
	nums := make([]string, len(refs))
	for i, r := range refs {
		nums[i] = strconv.Itoa(r.Index + 1)
		if len(r.Lines) > 0 {
			lines := make([]string, len(r.Lines))
			for j, l := range r.Lines {
				lines[j] = strconv.Itoa(l + 1)
			}
			nums[i] += " (lines " + strings.Join(lines, ", ") + ")"
		}
	}
	return " of hunk(s) " + strings.Join(nums, ", ")
}
