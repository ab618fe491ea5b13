package cli

import (
	"context"
	"fmt"

	"agenthub/app/api"
	"agenthub/backend"
)

func runWindow(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "window")
	approvalID := fl.String("approval", "", "show this pending approval when the window opens")
	if err := parse(fl, args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return usagef("unknown command %q", fl.Arg(0))
	}
	if e.Getenv("DISPLAY") == "" && e.Getenv("WAYLAND_DISPLAY") == "" {
		fmt.Fprintln(e.Stdout, "No display found (DISPLAY and WAYLAND_DISPLAY are unset): starting browser mode instead.")
		return serve(ctx, e, *home, "127.0.0.1:0")
	}
	dir, err := api.ResolveHome(*home, e.Getenv)
	if err != nil {
		return err
	}
	if err := api.EnsureHome(dir); err != nil {
		return err
	}
	maxRuns, err := api.MaxRunsFromEnv(e.Getenv)
	if err != nil {
		return err
	}
	servers, err := localServers(e.Getenv)
	if err != nil {
		return err
	}
	core := api.New(api.Config{Home: dir, Version: e.Version, Surface: backend.SurfaceWindow, MaxRuns: maxRuns,
		LocalServers: servers})
	if *approvalID != "" {
		core.RequestOpen(api.OpenRequest{ApprovalID: *approvalID})
	}
	return e.Window(core, e.Assets)
}
