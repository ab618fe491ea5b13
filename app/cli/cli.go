// Package cli is the headless command line: it parses subcommands and flags
// and drives the same app/api core as the window. Usage errors exit 2.
//
// It must not import Wails or the app package: main passes the window's
// entry point in as a function.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"agenthub/app/api"
	"agenthub/backend"
)

// Env is everything a command may touch, injected for tests.
type Env struct {
	Args    []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Assets  fs.FS
	Version string
	Getenv  func(string) string
	// Context, when set, bounds long-running commands (serve, window) in
	// tests; Main always also stops on SIGINT and SIGTERM.
	Context context.Context
	// Window runs the desktop window over an unopened core.
	Window func(core *api.Core, assets fs.FS) error

	// forward is set when the command runs in a real process (Main got no
	// injected Getenv): a command that needs the engine is forwarded to it
	// (forward.go). Tests that inject Getenv run every command in-process.
	forward bool
	// core is the engine's core when the command was forwarded and runs
	// inside the engine (exec.go); openCore returns a view of it.
	core *api.Core
	// role is how openCore opens the data directory in-process.
	role api.Role
	// intr routes Ctrl-C: to a follower, which detaches, else it cancels.
	intr *interrupts
}

// Exit codes shared by every command.
const (
	ExitOK       = 0
	ExitFailed   = 1
	ExitUsage    = 2
	ExitWaiting  = 3
	ExitCanceled = 4
)

// usageError marks errors that exit 2 and print usage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

type command struct {
	summary string
	run     func(ctx context.Context, e *Env, args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"window":    {"open the desktop window (the default)", runWindow},
		"serve":     {"serve the UI in a browser on loopback, with a token", runServe},
		"version":   {"print the version", runVersion},
		"doctor":    {"check the system and print the fix for each problem", runDoctor},
		"workspace": {"add, list or remove allowlisted workspaces", runWorkspace},
		"run":       {"run an agent on a workspace headless: run --workspace PATH \"task\"", runRun},
		"runs":      {"list, show, follow the events of, or cancel runs", runRuns},
		"approvals": {"list pending approvals", runApprovals},
		"approve":   {"approve a pending approval and follow its run", runDecide(true)},
		"reject":    {"reject a pending approval (--reason, --stop) and follow its run", runDecide(false)},
		"undo":      {"restore the files an approved patch changed, from its checkpoint", runUndo},
		"conflicts": {"resolve a workspace conflict a crash left: conflicts resolve RUN INTENT --keep|--restore", runConflicts},
		"profiles":  {"list the agent profiles a run may use", runProfiles},
		"policy":    {"check a workspace policy's examples, or explain a decision", runPolicy},
		"audit":     {"verify the audit hash chain, or export it as JSONL", runAudit},
		"artifacts": {"list, show or export what runs produced: artifacts list [--run RUN] [--json] | show ID | export ID -o FILE", runArtifacts},
		"worktree":  {"list, merge, keep, discard or push the worktrees of worktree runs", runWorktree},
		"search":    {"search every run: search \"query\" [--workspace W] [--status S] [--json]", runSearch},
		"engine":    {"run the data directory's engine: engine [start|stop|status]", runEngine},
		"acp":       {"be an ACP agent on stdin/stdout for editors (Zed …): acp [--profile NAME | --playbook FILE]", runACP},
	}
}

// Main runs one command and returns the process exit code.
func Main(e Env) int {
	if e.Getenv == nil {
		e.Getenv = os.Getenv
		e.forward = true
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: logLevel(e.Getenv)})))
	name, args := "window", e.Args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" || name == "-h" || name == "--help" {
		printUsage(e.Stdout)
		return ExitOK
	}
	cmd, ok := commands()[name]
	if !ok {
		fmt.Fprintf(e.Stderr, "agenthub: unknown command %q\n\n", name)
		printUsage(e.Stderr)
		return ExitUsage
	}
	if e.forward && !localCommands[name] {
		if code, done := forward(&e, name, args); done {
			return code
		}
	}
	parent := e.Context
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	e.intr = newInterrupts(cancel)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-sigs:
				if s == syscall.SIGTERM {
					cancel()
				} else {
					e.intr.fire()
				}
			}
		}
	}()
	return exitCode(e, cmd.run(ctx, &e, args))
}

func exitCode(e Env, err error) int {
	var ue usageError
	var ce codedExit
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(e.Stderr, "agenthub: %s\nRun 'agenthub help' for usage.\n", ue.msg)
		return ExitUsage
	case errors.As(err, &ce):
		return ce.code
	}
	body := api.ErrorOf(err)
	fmt.Fprintf(e.Stderr, "agenthub: %s (%s)\n", body.Message, body.Code)
	if body.Next != "" {
		fmt.Fprintf(e.Stderr, "next: %s\n", body.Next)
	}
	return ExitFailed
}

// codedExit ends a command with a specific exit code after it printed its
// own output (run: 3 waiting, 4 cancelled).
type codedExit struct{ code int }

func (c codedExit) Error() string { return fmt.Sprintf("exit %d", c.code) }

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: agenthub [command] [flags]")
	fmt.Fprintln(w, "\nCommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nEvery command takes --home DIR (or AGENTHUB_HOME) for the data directory.")
}

func logLevel(getenv func(string) string) slog.Level {
	if getenv("AGENTHUB_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

// flags returns a flag set that reports usage errors instead of exiting.
func flags(e *Env, name string) (*flag.FlagSet, *string) {
	fl := flag.NewFlagSet("agenthub "+name, flag.ContinueOnError)
	fl.SetOutput(e.Stderr)
	home := fl.String("home", "", "data directory (default: $AGENTHUB_HOME, else the XDG data dir)")
	return fl, home
}

// parse parses args and turns flag errors into usage errors.
func parse(fl *flag.FlagSet, args []string) error {
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	return nil
}

// openCore resolves the data directory and opens the store; a command
// forwarded to the engine gets a view of the engine's core instead, whose
// Close releases nothing.
func openCore(ctx context.Context, e *Env, homeFlag string, surface backend.Surface) (*api.Core, error) {
	home, err := api.ResolveHome(homeFlag, e.Getenv)
	if err != nil {
		return nil, err
	}
	if e.core != nil {
		if served := e.core.Config().Home; served != home {
			return nil, backend.Errorf(backend.CodeInvalidInput, "this engine serves the data directory %s, not %s",
				api.DisplayPath(served), api.DisplayPath(home))
		}
		return e.core.View(surface), nil
	}
	maxRuns, err := api.MaxRunsFromEnv(e.Getenv)
	if err != nil {
		return nil, err
	}
	servers, err := localServers(e.Getenv)
	if err != nil {
		return nil, err
	}
	return api.Open(ctx, api.Config{Home: home, Version: e.Version, Surface: surface, MaxRuns: maxRuns,
		LocalServers: servers, Role: e.role})
}
