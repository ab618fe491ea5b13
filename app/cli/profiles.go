package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"agenthub/app/api"
	"agenthub/backend"
)

func runProfiles(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "profiles")
	asJSON := fl.Bool("json", false, "print JSON")
	words, err := positional(fl, args)
	if err != nil {
		return err
	}
	if len(words) > 1 || (len(words) == 1 && words[0] != "list") {
		return usagef("profiles takes no arguments (or: profiles list)")
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	list, err := api.NewRunsAPI(core).Profiles()
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.Stdout).Encode(list)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRUNTIME\tMODEL\tNOTE")
	for _, p := range list {
		model, note := p.Model, ""
		if p.Provider != "" {
			model = p.Provider + ":" + p.Model
		}
		if p.Scripted {
			note = "scripted, not an AI model"
		}
		if p.Default {
			note += " (default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.Runtime, model, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	dir := filepath.Join(core.Config().Home, api.ProfilesDir)
	problems, err := api.NewRunsAPI(core).ProfileProblems()
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(e.Stderr, "skipped %s: %s\n", p.File, p.Problem)
	}
	fmt.Fprintf(e.Stdout, "\nProfiles are read from %s/*.toml (docs/PROFILES.md).\n", api.DisplayPath(dir))
	return nil
}
