package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/confine"
	"agenthub/backend/proc"
)

// MaxShellTimeout is the longest a command may run, in seconds.
const MaxShellTimeout = 600

const (
	defaultShellTimeout = 120
	// maxShellOutput caps each of stdout and stderr.
	maxShellOutput = 64 << 10
	shellPath      = "/bin/sh"
)

// shellEnvNames is the environment a command gets: nothing else of
// AgentHub's own environment (API keys, tokens) reaches it.
var shellEnvNames = []string{"HOME", "LANG", "PATH", "TERM"}

type shellArgs struct {
	Command        string `json:"command" jsonschema:"the shell command line, run by /bin/sh -c in the workspace root"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"seconds before the command and everything it started are killed; default 120, at most 600"`
	Network        bool   `json:"network,omitempty" jsonschema:"true when the command needs the network (downloads, git fetch, package installs); the user approves it with the command. Without it the command has no network at all"`
}

var shellSchema = lazySchema[shellArgs](func(s *jsonschema.Schema) {
	prop(s, "command").MinLength = jsonschema.Ptr(1)
	prop(s, "timeout_seconds").Minimum = jsonschema.Ptr(1.0)
	prop(s, "timeout_seconds").Maximum = jsonschema.Ptr(float64(MaxShellTimeout))
})

const shellDescription = `Run a shell command with /bin/sh -c in the workspace root, after the user ` +
	`approves it. The result has the exit code, stdout and stderr (each cut at 64 KiB, which the result ` +
	`says). The command gets a minimal environment (PATH, HOME, LANG, TERM=dumb) and no terminal; it ` +
	`cannot prompt for input. It is killed, with everything it started, after timeout_seconds ` +
	`(default 120, at most 600). It has no network at all (no TCP, UDP or DNS; only a loopback of its own) ` +
	`unless network is true, which the user approves with the command. Paths under the workspace are shown ` +
	`relative to ".".`

// runShell runs one command line, always behind the gate. caches is the
// data directory's cache root ("" for none): each workspace's commands get
// their own build caches beneath it (caches.go).
type runShell struct{ caches string }

func (runShell) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: RunShell, Description: shellDescription, Schema: shellSchema.Raw()}
}

// shellPreview is what the reviewer sees: the command, where it runs and
// which environment variables it gets (names only: values such as HOME are
// machine paths), with the values the caller set itself.
type shellPreview struct {
	Command        string            `json:"command"`
	Shell          string            `json:"shell"`
	Cwd            string            `json:"cwd"`
	Env            []string          `json:"env"`
	SetEnv         map[string]string `json:"setEnv,omitempty"`
	TimeoutSeconds int               `json:"timeoutSeconds"`
	// Confinement is what the operating system lets the command do.
	Confinement confine.Summary `json:"confinement"`
	// Files are the workspace files the command will execute (its scripts,
	// Makefile, package.json …), hashed into the subject.
	Files []approval.ExecFile `json:"files,omitempty"`
	// Network: the command asks for network access with its approval.
	Network bool `json:"network,omitempty"`
}

// Action describes every valid call for the gate. Invalid arguments need no
// gate: Execute rejects them without running anything.
func (r runShell) Action(_ context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decode[shellArgs](RunShell, shellSchema, raw)
	if err != nil {
		return nil, nil
	}
	return Shell{Command: a.Command, TimeoutSeconds: a.TimeoutSeconds, Network: a.Network, Root: env.WorkspaceRoot,
		Caches: workspaceCaches(r.caches, env.WorkspaceID)}.Action()
}

// Shell is one command line run the way run_shell runs it: /bin/sh -c in a
// directory of the workspace, in its own process group, with the
// allow-listed environment, a timeout and capped output. Other runners of
// commands (an ACP agent's terminals) use it, so a command is gated and run
// the same whoever asks for it.
type Shell struct {
	Command string
	// Dir is the workspace-relative directory; "" is the root.
	Dir string
	// Env sets variables of the allow-list (ShellEnvNames) to other values;
	// any other name is an error.
	Env            map[string]string
	TimeoutSeconds int // zero means the default, 120; at most 600
	// Network lets the command use the network; it is part of the subject
	// and the approval shows it. Without it the command runs in a network
	// namespace of its own (backend/confine), or, where the kernel refuses
	// one, Landlock refuses every TCP connect and bind.
	Network bool
	// Root is the workspace's absolute root. When set, Action binds the
	// workspace files the command executes (approval.ExecFiles) into the
	// subject, so editing one after the approval is drift.
	Root string
	// Caches, when set, is this workspace's own cache directory: the
	// command may write it, and the build tools' cache variables point
	// into it (cacheEnv), since their defaults under HOME are outside the
	// confinement.
	Caches string
}

// ShellEnvNames is the environment allow-list of a command.
func ShellEnvNames() []string { return slices.Clone(shellEnvNames) }

func (sh Shell) cwd() string {
	if sh.Dir == "" {
		return "."
	}
	return sh.Dir
}

func (sh Shell) check() error {
	for name := range sh.Env {
		if !slices.Contains(shellEnvNames, name) {
			return fmt.Errorf("the environment variable %s is not allowed; a command gets only %s", name,
				strings.Join(shellEnvNames, ", "))
		}
	}
	return nil
}

// Action is the command for the gate: kind shell, with the command line,
// its directory, any variables set and the content of the workspace files
// it executes as the subject.
func (sh Shell) Action() (*backend.GatedAction, error) {
	if err := sh.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", RunShell, err)
	}
	files, err := sh.execFiles()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RunShell, err)
	}
	timeout := shellTimeout(shellArgs{TimeoutSeconds: sh.TimeoutSeconds})
	preview, err := json.Marshal(shellPreview{Command: sh.Command, Shell: shellPath + " -c", Cwd: sh.cwd(),
		Env: sh.envNames(), SetEnv: sh.Env, TimeoutSeconds: timeout,
		Confinement: confine.Describe(sh.confinement(".", os.Getenv("PATH")), confine.Probe()), Files: files,
		Network: sh.Network})
	if err != nil {
		return nil, fmt.Errorf("%s: preview: %w", RunShell, err)
	}
	subj := map[string]any{"kind": string(backend.ActionShell), "command": sh.Command, "cwd": sh.cwd()}
	if len(sh.Env) > 0 {
		subj["env"] = sh.Env
	}
	if len(files) > 0 {
		subj["files"] = approval.ExecPreimages(files)
	}
	if sh.Network {
		subj["network"] = true
	}
	subject, err := json.Marshal(subj)
	if err != nil {
		return nil, fmt.Errorf("%s: subject: %w", RunShell, err)
	}
	risk := approval.RiskOf(approval.Action{Kind: backend.ActionShell, Command: sh.Command, Network: sh.Network},
		backend.PolicyResult{Kind: backend.ActionShell})
	title := "Run: "
	if sh.Network {
		title = "Run with network: "
	}
	msg := backend.Msg("title_run", "command", firstLine(sh.Command, 80))
	if sh.Network {
		msg = backend.Msg("title_run_network", "command", firstLine(sh.Command, 80))
	}
	return &backend.GatedAction{Kind: backend.ActionShell, Title: title + firstLine(sh.Command, 80), Risk: risk,
		Preview: preview, Subject: subject, TitleMessage: msg}, nil
}

// execFiles hashes the workspace files the command executes, read through
// the workspace's rooted access; none without a root.
func (sh Shell) execFiles() ([]approval.ExecFile, error) {
	if sh.Root == "" {
		return nil, nil
	}
	w, err := openWorkspace(backend.ToolEnv{WorkspaceRoot: sh.Root})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	files := approval.ExecFiles(w, sh.cwd(), sh.Command)
	sc := newScrubber(sh.Root)
	for i := range files {
		files[i].Note = sc.text(files[i].Note)
	}
	return files, nil
}

// Start starts the command under root. tee, when set, receives its output
// as it arrives (see proc.Spec.Tee). The caller tracks the process and
// ends with Finish.
func (sh Shell) Start(ctx context.Context, root string, tee io.Writer) (*proc.Process, error) {
	if root == "" {
		return nil, fmt.Errorf("%s: %w", RunShell, errNoWorkspace)
	}
	if err := sh.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", RunShell, err)
	}
	env := append(shellEnv(ctx), sh.cacheEnv()...)
	if err := sh.makeCaches(); err != nil {
		return nil, fmt.Errorf("%s: %w", RunShell, err)
	}
	for i, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if v, ok := sh.Env[name]; ok {
			env[i] = name + "=" + v
		}
	}
	rules := sh.confinement(root, proc.LoginPath(ctx))
	p, err := proc.Start(ctx, proc.Spec{Path: shellPath, Args: []string{"-c", sh.Command},
		Dir: filepath.Join(root, filepath.FromSlash(sh.cwd())), Env: env, Timeout: sh.timeout(),
		MaxOutput: maxShellOutput, Tee: tee, Confine: &rules})
	if err != nil {
		return nil, fmt.Errorf("%s: %s", RunShell, newScrubber(root).text(err.Error()))
	}
	return p, nil
}

// confinement is what the command may do: write the workspace and a
// private temp dir, read the system, its tools and the workspace, and use
// TCP only when Network says so (backend/confine).
func (sh Shell) confinement(root, path string) confine.Rules {
	r := confine.ForCommand(root, path, homeDir(), confine.Network{Any: sh.Network})
	if sh.Caches != "" {
		r.Write = append(r.Write, confine.Dir{Path: sh.Caches, Label: confine.LabelCaches})
		r.Read = append(r.Read, confine.Dir{Path: sh.Caches, Label: confine.LabelCaches})
	}
	return r
}

func (sh Shell) timeout() time.Duration {
	return time.Duration(shellTimeout(shellArgs{TimeoutSeconds: sh.TimeoutSeconds})) * time.Second
}

// Finish waits for a started command and renders its result as run_shell
// does, scrubbed of machine paths.
func (sh Shell) Finish(root string, p *proc.Process) backend.ToolResult {
	res, err := p.Wait()
	var ending string
	switch {
	case errors.Is(err, proc.ErrTimeout):
		ending = fmt.Sprintf("timed out after %s; the command and every process it started were killed", sh.timeout())
	case errors.Is(err, proc.ErrStopped):
		ending = "stopped: the run was cancelled"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		ending = "stopped: the run was cancelled or timed out"
	case err != nil:
		return failure(backend.ToolEnv{WorkspaceRoot: root}, "%s: %v", RunShell, err)
	}
	out, isErr := renderShell(res, ending)
	return backend.ToolResult{Content: newScrubber(root).text(out), IsError: isErr}
}

func shellTimeout(a shellArgs) int {
	if a.TimeoutSeconds <= 0 {
		return defaultShellTimeout
	}
	return min(a.TimeoutSeconds, MaxShellTimeout)
}

// firstLine is the first line of s, cut to at most n bytes at a space: a
// word is shown whole or not at all, so a title never holds a partial
// token that the redaction of stored text could no longer recognise.
func firstLine(s string, n int) string {
	line, _, more := strings.Cut(s, "\n")
	if len(line) > n {
		cut := strings.LastIndexAny(line[:n+1], " \t")
		line, more = strings.TrimRight(line[:max(cut, 0)], " \t"), true // cut at ASCII: valid UTF-8
	}
	if more {
		line += " …"
	}
	return line
}

func (r runShell) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[shellArgs](RunShell, shellSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	sh := Shell{Command: a.Command, TimeoutSeconds: a.TimeoutSeconds, Network: a.Network,
		Caches: workspaceCaches(r.caches, env.WorkspaceID)}
	live := NewShellStream(env, in.CallID)
	var tee io.Writer
	if live != nil {
		tee = live
	}
	p, err := sh.Start(ctx, env.WorkspaceRoot, tee)
	if err != nil && ctx.Err() != nil {
		// A cancel that lands while the supervisor is still starting (a
		// loaded machine) is the same stop as one a moment later: the
		// command never ran.
		return backend.ToolResult{Content: "stopped: the run was cancelled before the command started", IsError: true}, nil
	}
	if err != nil {
		return backend.ToolResult{}, err
	}
	if env.Track != nil {
		env.Track(p)
	}
	res := sh.Finish(env.WorkspaceRoot, p)
	if live != nil {
		live.Close()
	}
	return res, nil
}

// shellEnv is the whole environment of a command: an allow-list, never the
// parent's environment.
func shellEnv(ctx context.Context) []string {
	lang := os.Getenv("LANG")
	if lang == "" {
		lang = "C.UTF-8"
	}
	return []string{"HOME=" + homeDir(), "LANG=" + lang, "PATH=" + proc.LoginPath(ctx), "TERM=dumb"}
}

// renderShell formats a finished (or ended) command. A non-zero exit, a
// timeout or a stop is an error result the model reads, not a Go error.
func renderShell(res proc.Result, ending string) (string, bool) {
	var b strings.Builder
	isErr := ending != "" || res.ExitCode != 0
	if ending != "" {
		fmt.Fprintf(&b, "%s\n", ending)
	} else {
		fmt.Fprintf(&b, "exit code: %d\n", res.ExitCode)
	}
	stream(&b, "stdout", res.Stdout, res.StdoutDropped)
	stream(&b, "stderr", res.Stderr, res.StderrDropped)
	return b.String(), isErr
}

func stream(b *strings.Builder, name string, data []byte, dropped int64) {
	if len(data) == 0 && dropped == 0 {
		fmt.Fprintf(b, "%s: (empty)\n", name)
		return
	}
	fmt.Fprintf(b, "%s:\n%s", name, strings.ToValidUTF8(string(data), "\uFFFD"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		b.WriteByte('\n')
	}
	if dropped > 0 {
		fmt.Fprintf(b, "[%s truncated: the first %d KiB are shown, %d more bytes were dropped]\n",
			name, maxShellOutput>>10, dropped)
	}
}
