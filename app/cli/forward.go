package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"agenthub/app/api"
	"agenthub/app/engineclient"
)

// localCommands never go to the engine: they run before it (version,
// help), are it (engine), report on it (doctor), or are surfaces of their
// own that reach it themselves (window, serve).
var localCommands = map[string]bool{"version": true, "engine": true, "doctor": true, "window": true, "serve": true,
	"help": true}

// readOnlyCommands and readOnlySubcommands only read: with no engine up they
// run in this process as readers (api.RoleReader), which never recovers,
// starts or decides anything, instead of starting the engine, whose start
// would recover what a crash left. Any other command (also one added
// later) needs the engine and starts it.
var (
	readOnlyCommands    = map[string]bool{"profiles": true, "approvals": true, "audit": true, "policy": true, "search": true, "export": true}
	readOnlySubcommands = map[string]bool{"list": true, "show": true, "events": true, "follow": true, "search": true, "export": true,
		"verify": true}
)

func readOnly(name string, args []string) bool {
	if name == "policy" && len(args) > 0 && args[0] == "revoke" {
		return false // it changes a rules file and audits: the engine does it
	}
	if readOnlyCommands[name] {
		return true
	}
	return len(args) > 0 && readOnlySubcommands[args[0]]
}

// forward runs the command in the data directory's engine when one runs or
// the command needs one (starting it); done is false when the command
// should run in this process instead (a read-only command with no engine
// up, or a data directory that cannot be resolved, which the command then
// reports itself).
func forward(e *Env, name string, args []string) (code int, done bool) {
	cwd, err := os.Getwd()
	if err != nil {
		return 0, false
	}
	home, err := api.ResolveHome(homeArg(args, cwd), e.Getenv)
	if err != nil {
		return 0, false
	}
	req := engineclient.ExecRequest{Args: absArgs(append([]string{name}, args...), cwd, home), Cwd: cwd,
		Env: forwardedEnv(e.Getenv, home), StdinTTY: isTerminal(e.Stdin), StdoutTTY: isTerminal(e.Stdout)}
	signals, stop := forwardSignals(e)
	defer stop()
	// Twice at most: an engine that was exiting as we connected never took
	// the command, and then it goes to the next one (or reads here).
	for attempt := 0; ; attempt++ {
		c, err := engineclient.Dial(home)
		if err != nil {
			if readOnly(name, args) {
				e.role = api.RoleReader
				return 0, false
			}
			ctx := e.Context
			if ctx == nil {
				ctx = context.Background()
			}
			if c, err = ensureEngine(ctx, e, home); err != nil {
				return exitCode(*e, err), true
			}
		}
		c = sameVersion(e, c, home)
		code, err = c.Exec(context.Background(), req, e.Stdin, e.Stdout, e.Stderr, signals)
		if err != nil && errors.Is(err, engineclient.ErrNoEngine) && attempt == 0 {
			continue
		}
		if err != nil {
			return exitCode(*e, err), true
		}
		return code, true
	}
}

// sameVersion keeps the engine on this program's version: an engine started
// before an upgrade keeps running the old code, which would serve commands
// (and write data) this version does not expect. An idle one is stopped and
// started again from this program; one holding runs is left alone, with a
// warning, because stopping it would interrupt them. A window serving the
// socket is its own program and is never restarted.
func sameVersion(e *Env, c *engineclient.Client, home string) *engineclient.Client {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	st, err := c.Status(ctx)
	if err != nil || e.Version == "" || st.Version == e.Version || st.Surface != "engine" {
		return c
	}
	if st.ActiveRuns > 0 {
		fmt.Fprintf(e.Stderr, "agenthub: the engine runs version %s and this command is %s; it holds %d run(s), so it "+
			"keeps running. Once they end, restart it with: agenthub engine stop\n", st.Version, e.Version, st.ActiveRuns)
		return c
	}
	if err := stopAndWait(ctx, c, home); err != nil {
		fmt.Fprintf(e.Stderr, "agenthub: the engine of version %s could not be restarted with %s: %v\n", st.Version, e.Version, err)
		return c
	}
	nc, err := ensureEngine(ctx, e, home)
	if err != nil {
		fmt.Fprintf(e.Stderr, "agenthub: the engine of version %s stopped, and %s could not start: %v\n", st.Version, e.Version, err)
		return c // its Exec fails with engine_unavailable, and the next command starts one
	}
	return nc
}

// forwardSignals turns this process's SIGINT and SIGTERM into messages to
// the engine, where the command decides what they mean (`run` detaches on
// the first Ctrl-C). A third Ctrl-C leaves at once, whatever the engine does.
func forwardSignals(e *Env) (<-chan string, func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	out := make(chan string, 4)
	done := make(chan struct{})
	go func() {
		presses := 0
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				msg := engineclient.SignalInterrupt
				if s == syscall.SIGTERM {
					msg = engineclient.SignalTerminate
				} else if presses++; presses >= 3 {
					fmt.Fprintln(e.Stderr, "\nagenthub: left without waiting for the engine; runs go on there.")
					os.Exit(ExitInterrupted)
				}
				select {
				case out <- msg:
				default:
				}
			}
		}
	}()
	return out, func() { signal.Stop(sigs); close(done) }
}

// ensureEngine starts the engine of home in the background (this same
// program, `engine --home HOME`) unless one runs, and connects to it.
func ensureEngine(ctx context.Context, e *Env, home string) (*engineclient.Client, error) {
	if err := api.EnsureHome(home); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this program to start the engine: %w", err)
	}
	timeout := 30 * time.Second
	if v, err := time.ParseDuration(e.Getenv("AGENTHUB_ENGINE_START_TIMEOUT")); err == nil && v > 0 {
		timeout = v
	}
	return engineclient.Ensure(ctx, home, engineclient.StartOptions{Exe: exe, Env: os.Environ(), Timeout: timeout})
}

// homeArg is the --home value among a command's arguments, made absolute
// against cwd ("" when absent).
func homeArg(args []string, cwd string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, f := range []string{"--home", "-home"} {
			v, ok := "", false
			if a == f && i+1 < len(args) {
				v, ok = args[i+1], true
			} else if strings.HasPrefix(a, f+"=") {
				v, ok = a[len(f)+1:], true
			}
			if ok && v != "" {
				if !filepath.IsAbs(v) {
					v = filepath.Join(cwd, v)
				}
				return v
			}
		}
	}
	return ""
}

// absArgs makes the command's relative paths absolute: it runs in the
// engine, whose working directory is not the user's. A word is taken for a
// path when it starts with ./ or ../, is . or .., or names something that
// exists under cwd (not the command and subcommand words); the value of
// --home becomes the resolved data directory.
func absArgs(args []string, cwd, home string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i == 0 || (i == 1 && !strings.HasPrefix(a, "-")):
			out[i] = a // the command and its subcommand word
		case i > 0 && (args[i-1] == "--home" || args[i-1] == "-home"):
			out[i] = home
		case strings.HasPrefix(a, "--home=") || strings.HasPrefix(a, "-home="):
			out[i] = a[:strings.IndexByte(a, '=')+1] + home
		case strings.HasPrefix(a, "-"):
			if k, v, ok := strings.Cut(a, "="); ok {
				out[i] = k + "=" + absPath(v, cwd)
			} else {
				out[i] = a
			}
		case strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") && looksLikeFile(a):
			out[i] = filepath.Join(cwd, a) // a flag's file that does not exist yet: -o out.zip
		default:
			out[i] = absPath(a, cwd)
		}
	}
	return out
}

// fileName is a bare file name with an extension (out.zip, audit.jsonl).
var fileName = regexp.MustCompile(`^[A-Za-z0-9_.-]+\.[A-Za-z0-9]{1,8}$`)

// looksLikeFile reports whether a flag's value names a file to create: a
// relative path with a directory (out/x.zip) or a file name with an
// extension; never a URL, a time or a text.
func looksLikeFile(a string) bool {
	if a == "" || filepath.IsAbs(a) || strings.ContainsAny(a, " :\n\t") {
		return false
	}
	return strings.Contains(a, "/") || fileName.MatchString(a)
}

func absPath(a, cwd string) string {
	if a == "" || filepath.IsAbs(a) || strings.ContainsAny(a, "\n\t") {
		return a
	}
	if a == "." || a == ".." || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") {
		return filepath.Join(cwd, a)
	}
	if strings.ContainsRune(a, ' ') {
		return a // a task, not a path
	}
	if _, err := os.Lstat(filepath.Join(cwd, a)); err == nil {
		return filepath.Join(cwd, a)
	}
	return a
}

// forwardedEnv is what a command reads per invocation: AgentHub's own
// variables, where data lives, and the locale. The engine's process
// environment (API keys, agent CLI paths) is that of the command that
// started it.
func forwardedEnv(getenv func(string) string, home string) map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AGENTHUB_") {
			env[k] = getenv(k)
		}
	}
	for _, k := range []string{"HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "LANG", "LC_ALL", "LC_MESSAGES", "TERM", "NO_COLOR"} {
		if v := getenv(k); v != "" {
			env[k] = v
		}
	}
	env["AGENTHUB_HOME"] = home
	return env
}
