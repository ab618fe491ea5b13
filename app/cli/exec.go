package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"

	"agenthub/app/api"
	"agenthub/app/engineclient"
)

// execForwarded runs a command a client forwarded, inside the engine and
// against its core: the same command function as in-process, so every
// command, including those added later, works through the engine
// unchanged. A panic ends the command, never the engine.
func execForwarded(ctx context.Context, base *Env, core *api.Core, req engineclient.ExecRequest, stdin io.Reader,
	stdout, stderr io.Writer, signals <-chan string) (code int) {
	vars := req.Env
	e := Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Assets: base.Assets, Version: base.Version,
		Getenv: func(k string) string { return vars[k] }, core: core}
	name, args := "", req.Args
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	cmd, ok := commands()[name]
	if !ok || localCommands[name] {
		fmt.Fprintf(stderr, "agenthub: %q does not run inside the engine; run it directly.\n", name)
		return ExitUsage
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e.intr = newInterrupts(cancel)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-signals:
				if s == engineclient.SignalTerminate {
					cancel()
				} else {
					e.intr.fire()
				}
			}
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			slog.Error("a forwarded command panicked", "command", name, "panic", p, "stack", string(debug.Stack()))
			fmt.Fprintf(stderr, "agenthub: %s failed inside the engine (internal_error)\nnext: %s\n", name,
				"Retry; if it repeats, report it with engine.log from the data directory.")
			code = ExitFailed
		}
	}()
	slog.Debug("forwarded command", "command", strings.Join(req.Args, " "))
	return exitCode(e, cmd.run(ctx, &e, args))
}
