package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"agenthub/app/api"
	"agenthub/backend"
)

func runWorkspace(ctx context.Context, e *Env, args []string) error {
	if len(args) == 0 {
		return usagef("workspace needs a subcommand: add PATH, list, or remove PATH|ID")
	}
	sub, args := args[0], args[1:]
	fl, home := flags(e, "workspace "+sub)
	asJSON := fl.Bool("json", false, "print JSON")
	words, err := positional(fl, args)
	if err != nil {
		return err
	}
	want := map[string]int{"add": 1, "list": 0, "remove": 1}
	n, ok := want[sub]
	if !ok {
		return usagef("unknown workspace subcommand %q: use add, list or remove", sub)
	}
	if len(words) != n {
		return usagef("workspace %s takes %d argument(s)", sub, n)
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	ws := api.NewWorkspacesAPI(core)
	switch sub {
	case "add":
		w, err := ws.Add(words[0])
		if err != nil {
			return err
		}
		return printOne(e, *asJSON, w, fmt.Sprintf("Added workspace %s (%s)", w.DisplayPath, w.ID))
	case "remove":
		return removeWorkspace(e, ws, words[0])
	}
	list, err := ws.List()
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.Stdout).Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(e.Stdout, "No workspaces yet. Add one with: agenthub workspace add PATH")
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPATH\tADDED")
	for _, w := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", w.ID, w.Name, w.DisplayPath, w.AddedAt)
	}
	return tw.Flush()
}

// removeWorkspace accepts an id or the workspace's path.
func removeWorkspace(e *Env, ws *api.WorkspacesAPI, target string) error {
	list, err := ws.List()
	if err != nil {
		return err
	}
	id := target
	for _, w := range list {
		if w.ID == target || w.Path == target || w.DisplayPath == target || samePath(w.Path, target) {
			id = w.ID
		}
	}
	if err := ws.Remove(id); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "Removed workspace %s. Its files were not touched.\n", target)
	return nil
}

func printOne(e *Env, asJSON bool, v any, text string) error {
	if asJSON {
		return json.NewEncoder(e.Stdout).Encode(v)
	}
	fmt.Fprintln(e.Stdout, text)
	return nil
}
