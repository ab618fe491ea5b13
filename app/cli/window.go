package cli

import (
	"context"
	"fmt"
	"log/slog"

	"agenthub/app/api"
	"agenthub/app/engineclient"
	"agenthub/app/engined"
	"agenthub/backend"
)

func runWindow(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "window")
	approvalID := fl.String("approval", "", "show this pending approval when the window opens")
	artifactsRun := fl.String("artifacts", "", "show this run's artifacts when the window opens")
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
	cfg, err := ownerConfig(e, dir, backend.SurfaceWindow)
	if err != nil {
		return err
	}
	takeOverFromEngine(ctx, dir)
	core := api.New(cfg)
	if *approvalID != "" {
		core.RequestOpen(api.OpenRequest{ApprovalID: *approvalID})
	} else if *artifactsRun != "" {
		core.RequestOpen(api.OpenRequest{ArtifactsRunID: *artifactsRun})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go windowSocket(ctx, e, core)
	return e.Window(core, e.Assets)
}

// windowSocket makes a window that owns the data directory's runs (no
// engine ran when it opened) serve the engine socket itself, so that CLI
// commands, `serve` and browser tabs beside it are its clients instead of
// failing with conflict. It stops when the window closes.
func windowSocket(ctx context.Context, e *Env, core *api.Core) {
	select {
	case <-ctx.Done():
		return
	case <-core.Opened():
	}
	if !core.IsOwner() {
		return
	}
	ln, err := engined.Listen(core.Config().Home)
	if err != nil {
		slog.Warn("the window cannot serve the engine socket; CLI commands beside it will fail", "err", err)
		return
	}
	if err := serveSocket(ctx, e, core, ln, "window", nil); err != nil {
		slog.Warn("the window's engine socket stopped", "err", err)
	}
}

// takeOverFromEngine stops a background engine of the data directory so
// that the window owns the runs (and serves the socket itself): the window
// runs its engine in-process, since its bindings call a core directly. Runs
// a stopped engine held are recovered by the window at open: waiting
// approvals stay pending; an agent CLI's live session is interrupted.
func takeOverFromEngine(ctx context.Context, home string) {
	c, err := engineclient.Dial(home)
	if err != nil {
		return
	}
	st, err := c.Status(ctx)
	if err != nil || st.Surface != "engine" {
		return // another window: the single-instance lock brings it forward
	}
	slog.Info("the window takes over the runs from the background engine", "pid", st.Pid)
	if err := stopAndWait(ctx, c, home); err != nil {
		slog.Warn("the background engine did not stop; the window only reads", "err", err)
	}
}
