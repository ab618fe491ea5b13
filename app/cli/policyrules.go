package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"agenthub/app/api"
	"agenthub/backend"
)

// runPolicyRules lists a workspace's rules with where each is written and
// who added it (policy rules), or revokes one by its key (policy revoke),
// as Settings does (issue 21). Revoke goes to the engine (forward.go).
func runPolicyRules(ctx context.Context, e *Env, sub string, args []string) error {
	fl, home := flags(e, "policy "+sub)
	wsPath := fl.String("workspace", "", "allowlisted workspace")
	asJSON := fl.Bool("json", false, "print JSON")
	words, err := positional(fl, args)
	if err != nil {
		return err
	}
	switch {
	case *wsPath == "":
		return usagef("policy %s needs --workspace W", sub)
	case sub == "rules" && len(words) != 0:
		return usagef("policy rules --workspace W [--json]")
	case sub == "revoke" && len(words) != 1:
		return usagef("policy revoke --workspace W KEY (the key `policy rules` lists)")
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	ws, err := findWorkspace(core, *wsPath)
	if err != nil {
		return err
	}
	policy := api.NewPolicyAPI(core)
	if sub == "revoke" {
		view, err := policy.Revoke(ws.ID, words[0])
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.Stdout).Encode(view)
		}
		fmt.Fprintf(e.Stdout, "revoked; %d rule(s) left\n", len(view.Rules))
		return nil
	}
	view, err := policy.Get(ws.ID)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.Stdout).Encode(view)
	}
	if view.Problem != "" {
		fmt.Fprintf(e.Stdout, "FAIL %s\nThe gate cannot use these rules, so every gated action asks.\n", view.Problem)
		return codedExit{ExitFailed}
	}
	if len(view.Rules) == 0 {
		fmt.Fprintln(e.Stdout, "no rules: the default gate decides (docs/POLICY.md)")
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tFILE\tRULE\tVERDICT\tPATTERN\tADDED")
	for _, r := range view.Rules {
		added := "by hand"
		if r.AddedAt != "" {
			added = fmt.Sprintf("%s %s (%s)", r.AddedAt, r.AddedBy, r.AddedVia)
		}
		file := r.File
		if r.Site == backend.RuleSiteData {
			file = "<data>/" + file
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Key, file, r.ID, r.Verdict, r.Pattern, added)
	}
	return tw.Flush()
}
