package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"agenthub/app/api"
	"agenthub/backend"
)

// runSearch is `agenthub search "query" [filters] [--json]` (issue 19).
func runSearch(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "search")
	asJSON := fl.Bool("json", false, "print the results as JSON")
	ws := fl.String("workspace", "", "only runs of this workspace (id, name or path)")
	status := fl.String("status", "", "only runs in these states, comma-separated (e.g. Failed,Cancelled)")
	runtime := fl.String("runtime", "", "only runs of this runtime or profile")
	from := fl.String("from", "", "only events from this date or timestamp (e.g. 2026-11-01)")
	to := fl.String("to", "", "only events before this date or timestamp")
	needs := fl.Bool("needs-approval", false, "only runs waiting for an approval")
	changed := fl.String("changed-file", "", "only runs that changed this workspace-relative file")
	limit := fl.Int("limit", 20, "at most this many results (up to 500)")
	words, err := positional(fl, args)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return usagef(`search needs the words to look for: agenthub search "query"`)
	}
	req := api.SearchRequest{Query: strings.Join(words, " "), Workspace: *ws, Runtime: *runtime, From: *from,
		To: *to, NeedsApproval: *needs, ChangedFile: *changed, Limit: *limit}
	if *status != "" {
		req.Status = strings.Split(*status, ",")
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	hits, err := api.NewSearchAPI(core).Search(req)
	if err != nil {
		return err
	}
	if *asJSON {
		if hits == nil {
			hits = []api.SearchResult{}
		}
		return json.NewEncoder(e.Stdout).Encode(hits)
	}
	if len(hits) == 0 {
		fmt.Fprintln(e.Stdout, "No match.")
		return nil
	}
	for _, h := range hits {
		fmt.Fprintf(e.Stdout, "%s #%d  %s  %s  %s  %s\n", h.RunID, h.Sequence, h.State, h.WorkspaceName,
			h.Type, clip(h.Task, 48))
		var b strings.Builder
		for _, p := range h.Snippet {
			if p.Match {
				b.WriteString("[" + p.Text + "]")
			} else {
				b.WriteString(p.Text)
			}
		}
		fmt.Fprintf(e.Stdout, "    %s\n", strings.Join(strings.Fields(b.String()), " "))
	}
	fmt.Fprintf(e.Stdout, "Open one with: agenthub runs events RUN --since SEQ-1\n")
	return nil
}
