package cli

import (
	"context"
	"fmt"

	"agenthub/app/api"
	"agenthub/app/httpapi"
	"agenthub/backend"
)

func runServe(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "serve")
	addr := fl.String("addr", "127.0.0.1:0", "loopback address to listen on (port 0 picks a free one)")
	if err := parse(fl, args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return usagef("serve takes no arguments, got %q", fl.Arg(0))
	}
	return serve(ctx, e, *home, *addr)
}

// serve runs browser mode until interrupted; the window falls back to it on a
// machine without a display.
func serve(ctx context.Context, e *Env, home, addr string) error {
	if e.forward {
		return serveProxy(ctx, e, home, addr)
	}
	ln, err := httpapi.Listen(addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	core, err := openCore(ctx, e, home, backend.SurfaceBrowser)
	if err != nil {
		return err
	}
	defer core.Close()
	srv := httpapi.New(core, e.Assets, core, httpapi.NewToken())
	fmt.Fprintf(e.Stdout, "AgentHub is serving on %s\n", srv.URL(ln))
	fmt.Fprintf(e.Stdout, "Data directory: %s. Press Ctrl+C to stop.\n", api.DisplayPath(core.Config().Home))
	return srv.Serve(ctx, ln)
}
