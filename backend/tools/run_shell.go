package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/proc"
)

const (
	defaultShellTimeout = 120
	maxShellTimeout     = 600
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
}

var shellSchema = mustSchema[shellArgs](func(s *jsonschema.Schema) {
	prop(s, "command").MinLength = jsonschema.Ptr(1)
	prop(s, "timeout_seconds").Minimum = jsonschema.Ptr(1.0)
	prop(s, "timeout_seconds").Maximum = jsonschema.Ptr(float64(maxShellTimeout))
})

const shellDescription = `Run a shell command with /bin/sh -c in the workspace root, after the user ` +
	`approves it. The result has the exit code, stdout and stderr (each cut at 64 KiB, which the result ` +
	`says). The command gets a minimal environment (PATH, HOME, LANG, TERM=dumb) and no terminal; it ` +
	`cannot prompt for input. It is killed, with everything it started, after timeout_seconds ` +
	`(default 120, at most 600). Paths under the workspace are shown relative to ".".`

// runShell runs one command line, always behind the gate.
type runShell struct{}

func (runShell) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: RunShell, Description: shellDescription, Schema: shellSchema.raw}
}

// shellPreview is what the reviewer sees: the command, where it runs and
// which environment variables it gets (names only: values such as HOME are
// machine paths).
type shellPreview struct {
	Command        string   `json:"command"`
	Shell          string   `json:"shell"`
	Cwd            string   `json:"cwd"`
	Env            []string `json:"env"`
	TimeoutSeconds int      `json:"timeoutSeconds"`
}

// Action describes every valid call for the gate. Invalid arguments need no
// gate: Execute rejects them without running anything.
func (runShell) Action(_ context.Context, _ backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decode[shellArgs](RunShell, shellSchema, raw)
	if err != nil {
		return nil, nil
	}
	timeout := shellTimeout(a)
	preview, err := json.Marshal(shellPreview{Command: a.Command, Shell: shellPath + " -c", Cwd: ".",
		Env: shellEnvNames, TimeoutSeconds: timeout})
	if err != nil {
		return nil, fmt.Errorf("%s: preview: %w", RunShell, err)
	}
	subject, err := json.Marshal(map[string]string{"kind": string(backend.ActionShell), "command": a.Command, "cwd": "."})
	if err != nil {
		return nil, fmt.Errorf("%s: subject: %w", RunShell, err)
	}
	risk := approval.RiskOf(approval.Action{Kind: backend.ActionShell, Command: a.Command},
		backend.PolicyResult{Kind: backend.ActionShell})
	return &backend.GatedAction{Kind: backend.ActionShell, Title: "Run: " + firstLine(a.Command, 80), Risk: risk,
		Preview: preview, Subject: subject}, nil
}

func shellTimeout(a shellArgs) int {
	if a.TimeoutSeconds <= 0 {
		return defaultShellTimeout
	}
	return min(a.TimeoutSeconds, maxShellTimeout)
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

func (runShell) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[shellArgs](RunShell, shellSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	if env.WorkspaceRoot == "" {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", RunShell, errNoWorkspace)
	}
	timeout := time.Duration(shellTimeout(a)) * time.Second
	p, err := proc.Start(ctx, proc.Spec{Path: shellPath, Args: []string{"-c", a.Command}, Dir: env.WorkspaceRoot,
		Env: shellEnv(ctx), Timeout: timeout, MaxOutput: maxShellOutput})
	if err != nil {
		return backend.ToolResult{}, fmt.Errorf("%s: %s", RunShell, newScrubber(env.WorkspaceRoot).text(err.Error()))
	}
	if env.Track != nil {
		env.Track(p)
	}
	res, err := p.Wait()
	var ending string
	switch {
	case errors.Is(err, proc.ErrTimeout):
		ending = fmt.Sprintf("timed out after %s; the command and every process it started were killed", timeout)
	case errors.Is(err, proc.ErrStopped):
		ending = "stopped: the run was cancelled"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		ending = "stopped: the run was cancelled or timed out"
	case err != nil:
		return failure(env, "%s: %v", RunShell, err), nil
	}
	out, isErr := renderShell(res, ending)
	return backend.ToolResult{Content: newScrubber(env.WorkspaceRoot).text(out), IsError: isErr}, nil
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
