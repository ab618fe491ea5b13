package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"agenthub/app/api"
	"agenthub/app/engineclient"
	"agenthub/app/engined"
	"agenthub/app/httpapi"
	"agenthub/backend"
	"agenthub/backend/store"
)

func runEngine(ctx context.Context, e *Env, args []string) error {
	sub := ""
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	fl, homeFlag := flags(e, "engine "+sub)
	asJSON := fl.Bool("json", false, "status: print JSON")
	if err := parse(fl, args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return usagef("engine takes no arguments, got %q", fl.Arg(0))
	}
	home, err := api.ResolveHome(*homeFlag, e.Getenv)
	if err != nil {
		return err
	}
	switch sub {
	case "":
		return engineForeground(ctx, e, home)
	case "start":
		if c, err := engineclient.Dial(home); err == nil {
			return printStatus(ctx, e, c, "An engine already runs", *asJSON)
		}
		c, err := ensureEngine(ctx, e, home)
		if err != nil {
			return err
		}
		return printStatus(ctx, e, c, "Started the engine", *asJSON)
	case "stop":
		return engineStop(ctx, e, home)
	case "status":
		c, err := engineclient.Dial(home)
		if err != nil {
			if *asJSON {
				fmt.Fprintln(e.Stdout, `{"running":false}`)
			} else {
				fmt.Fprintf(e.Stdout, "No engine is running for %s. Commands that change runs start it; or: agenthub engine start\n",
					api.DisplayPath(home))
			}
			return codedExit{ExitFailed}
		}
		return printStatus(ctx, e, c, "The engine runs", *asJSON)
	}
	return usagef("unknown engine subcommand %q: use start, stop or status (none runs it in the foreground)", sub)
}

func printStatus(ctx context.Context, e *Env, c *engineclient.Client, lead string, asJSON bool) error {
	st, err := c.Status(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.Stdout).Encode(struct {
			Running bool `json:"running"`
			engineclient.Status
		}{true, st})
	}
	fmt.Fprintf(e.Stdout, "%s for %s: pid %d, %s %s, since %s, socket %s.\n", lead, st.Home, st.Pid, st.Surface,
		st.Version, st.StartedAt, engineclient.SocketName)
	return nil
}

// engineStop asks the engine to stop and waits until it has released the
// data directory (its engine lock is free).
func engineStop(ctx context.Context, e *Env, home string) error {
	c, err := engineclient.Dial(home)
	if err != nil {
		fmt.Fprintf(e.Stdout, "No engine is running for %s.\n", api.DisplayPath(home))
		return nil
	}
	if err := stopAndWait(ctx, c, home); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "Stopped the engine of %s. Runs it held are interrupted; resume one with agenthub runs resume RUN.\n",
		api.DisplayPath(home))
	return nil
}

// stopAndWait asks the engine to stop and waits until it has released the
// data directory (its engine lock is free).
func stopAndWait(ctx context.Context, c *engineclient.Client, home string) error {
	if err := c.Stop(ctx); err != nil {
		return &backend.Error{Code: backend.CodeConflict, Err: err, Message: "the engine did not accept to stop: " + err.Error(),
			Next: "If a window serves this data directory, close the window."}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if l, err := api.TryLock(home, api.EngineLock); err == nil {
			l.Release()
			break
		}
		if time.Now().After(deadline) {
			return backend.Errorf(backend.CodeEngineUnavailable, "the engine accepted to stop but still holds the data directory after 60 s")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// unfinishedRuns counts the runs of the data directory that have not ended
// (queued, running, waiting for a decision): what stopping the engine would
// interrupt. -1 when the store cannot say.
func unfinishedRuns(core *api.Core) int {
	eng := core.Engine()
	if eng == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	runs, err := eng.Runs(ctx, store.RunFilter{States: []backend.RunState{backend.RunCreated, backend.RunPlanned,
		backend.RunAccepted, backend.RunPreparing, backend.RunRunning, backend.RunNeedsApproval, backend.RunApplying}})
	if err != nil {
		return -1
	}
	return len(runs)
}

// engineForeground is `agenthub engine`: it owns the data directory's runs
// (recovering what the last owner left, once) and serves the socket until
// interrupted or asked to stop.
func engineForeground(ctx context.Context, e *Env, home string) error {
	cfg, err := ownerConfig(e, home, backend.SurfaceEngine)
	if err != nil {
		return err
	}
	cfg.Role = api.RoleOwner
	core, err := api.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer core.Close()
	ln, err := engined.Listen(home)
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	fmt.Fprintf(e.Stdout, "AgentHub engine %s serving %s on %s (pid %d). Stop it with: agenthub engine stop\n",
		e.Version, api.DisplayPath(home), engineclient.SocketName, os.Getpid())
	go stopWhenGone(ctx, engineclient.SocketPath(home), stop)
	return serveSocket(ctx, e, core, ln, "engine", stop)
}

// stopWhenGone stops the engine once its socket file is gone: the data
// directory was deleted (a test's temporary home, a user's rm -rf) or
// another engine took over the path; no client can reach this one again.
func stopWhenGone(ctx context.Context, sock string, stop func()) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := os.Stat(sock); errors.Is(err, os.ErrNotExist) {
				fmt.Fprintln(os.Stderr, "agenthub: the engine socket is gone (its data directory was removed); stopping")
				stop()
				return
			}
		}
	}
}

// ownerConfig prepares the data directory home and the configuration of a
// core that may own its runs (the engine, the window).
func ownerConfig(e *Env, home string, surface backend.Surface) (api.Config, error) {
	if err := api.EnsureHome(home); err != nil {
		return api.Config{}, err
	}
	maxRuns, err := api.MaxRunsFromEnv(e.Getenv)
	if err != nil {
		return api.Config{}, err
	}
	servers, err := localServers(e.Getenv)
	if err != nil {
		return api.Config{}, err
	}
	return api.Config{Home: home, Version: e.Version, Surface: surface, MaxRuns: maxRuns, LocalServers: servers}, nil
}

// serveSocket serves the engine socket over an owning core: the API for
// windows, browsers and `serve`, and forwarded commands. stop, when set,
// lets `agenthub engine stop` end it.
func serveSocket(ctx context.Context, e *Env, core *api.Core, ln net.Listener, surface string, stop func()) error {
	started := time.Now().UTC().Format(time.RFC3339)
	web := core.View(backend.SurfaceBrowser)
	srv := httpapi.New(web, e.Assets, web, httpapi.NewToken())
	base := *e
	cfg := engined.Config{
		API: srv.SocketHandler(),
		Exec: func(ctx context.Context, req engineclient.ExecRequest, stdin io.Reader, stdout, stderr io.Writer, sigs <-chan string) int {
			return execForwarded(ctx, &base, core, req, stdin, stdout, stderr, sigs)
		},
		Status: func() engineclient.Status {
			return engineclient.Status{Pid: os.Getpid(), Version: e.Version, Home: api.DisplayPath(core.Config().Home),
				StartedAt: started, Surface: surface, ActiveRuns: unfinishedRuns(core)}
		},
		Stop: stop,
	}
	err := engined.Serve(ctx, ln, cfg)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
