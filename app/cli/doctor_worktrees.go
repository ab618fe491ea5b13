package cli

import (
	"fmt"
	"sort"

	"agenthub/app/api"
)

// worktreeChecks list the worktrees of worktree runs and their state: what
// each holds that exists nowhere else, a directory that went missing, and
// run worktrees git records that AgentHub does not (left by a crash or by
// hand). They inform; none fails the command.
func worktreeChecks(core *api.Core) []check {
	w := api.NewWorktreesAPI(core)
	list, err := w.List("")
	if err != nil {
		return []check{{name: "worktrees", optional: true, detail: api.ErrorOf(err).Message, fix: api.ErrorOf(err).Next}}
	}
	out := []check{{name: "worktrees", ok: true, detail: fmt.Sprintf("%d open", len(list))}}
	for _, v := range list {
		c := check{name: "worktree " + v.RunID, ok: true, optional: true,
			detail: fmt.Sprintf("%s, branch %s, %d uncommitted, %d commit(s) on no other branch",
				v.WorktreeRecord.State, v.Branch, len(v.Uncommitted), len(v.Unmerged))}
		if v.Missing {
			c.ok, c.detail = false, fmt.Sprintf("%s, branch %s: its directory is missing", v.WorktreeRecord.State, v.Branch)
			c.fix = "agenthub worktree keep " + v.RunID + " (keeps the branch) or agenthub worktree discard " + v.RunID
		}
		out = append(out, c)
	}
	unknown, err := w.Unknown()
	if err != nil {
		return out
	}
	names := make([]string, 0, len(unknown))
	for n := range unknown {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, e := range unknown[n] {
			out = append(out, check{name: "worktree of " + n, optional: true,
				detail: "git records a run worktree on branch " + e.Branch + " that AgentHub does not list as open",
				fix:    "inspect it with git worktree list in the workspace; git worktree remove it when its work is saved"})
		}
	}
	return out
}
