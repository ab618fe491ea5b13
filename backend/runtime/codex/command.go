package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/confine"
	"agenthub/backend/scrub"
)

// maxResult caps the command output given back to the engine.
const maxResult = 64 << 10

// commandTool proxies item/commandExecution/requestApproval: a shell
// approval with the command, its argv, where it runs and whether Codex's
// sandbox confines it.
type commandTool struct{}

func (commandTool) Spec() backend.ToolSpec {
	return spec(ToolCommand, "A command Codex asked to run, shown as a shell approval.")
}

// commandArgs fills a command's call arguments from Codex's request; the
// command text is scrubbed of the workspace root, which is its cwd.
func (s *session) commandArgs(a callArgs, c commandApproval) callArgs {
	a.Command = s.Scrub(c.Command)
	a.Argv, _ = splitWords(a.Command)
	a.Cwd = "."
	if c.Cwd != "" {
		rel, ok := s.rel(c.Cwd)
		if !ok {
			a.Outside = []string{"cwd"}
		}
		a.Cwd = rel
	}
	if c.Reason != nil {
		a.Reason = s.Scrub(*c.Reason)
	}
	a.Escalated = c.escalated()
	for _, x := range c.Actions {
		x.Command, x.Path = s.Scrub(x.Command), s.Scrub(x.Path)
		a.Actions = append(a.Actions, x)
	}
	return a
}

// commandPreview is what the reviewer sees of a command.
type commandPreview struct {
	Command string          `json:"command"`
	Argv    []string        `json:"argv,omitempty"`
	Cwd     string          `json:"cwd"`
	Sandbox string          `json:"sandbox"`
	Reason  string          `json:"reason,omitempty"`
	Actions []commandAction `json:"actions,omitempty"`
	Env     []string        `json:"env"`
	Runtime string          `json:"runtime"`
	Note    string          `json:"note"`
}

// commandEnv are the variables a Codex command gets (its "core" set; keys
// are excluded by the config file).
var commandEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "USER", "TMPDIR"}

func (commandTool) Action(_ context.Context, _ backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decodeArgs(raw)
	if err != nil {
		return nil, err
	}
	if a.Command == "" {
		return nil, errors.New("Codex asked to run no command")
	}
	if len(a.Outside) > 0 {
		return nil, outsideError("the command's working directory")
	}
	sandbox := "Codex's sandbox: writes only inside the workspace and the temporary directories, no network"
	note := "Codex runs the command itself after AgentHub approves it."
	if a.Escalated {
		sandbox = "none: Codex asked to run this outside its sandbox"
		// The CLI, and so this command, is still inside AgentHub's
		// confinement where the kernel has Landlock (agentproc).
		if confine.Probe().ABI > 0 {
			note += " It asked to run it outside its sandbox: it stays inside AgentHub's confinement of Codex " +
				"(writes only the workspace, Codex's state dir and a private temp dir; TCP only to the model's port)."
		} else {
			note += " It asked to run it unconfined (with full access to this machine and the network)."
		}
	}
	preview, err := json.Marshal(commandPreview{Command: a.Command, Argv: a.Argv, Cwd: a.Cwd, Sandbox: sandbox,
		Reason: a.Reason, Actions: a.Actions, Env: commandEnv, Runtime: "codex", Note: note})
	if err != nil {
		return nil, fmt.Errorf("command preview: %w", err)
	}
	subject, err := json.Marshal(map[string]any{"kind": string(backend.ActionShell), "command": a.Command,
		"argv": a.Argv, "cwd": a.Cwd, "sandboxed": !a.Escalated})
	if err != nil {
		return nil, fmt.Errorf("command subject: %w", err)
	}
	risk := approval.RiskOf(approval.Action{Kind: backend.ActionShell, Command: a.Command, Argv: a.Argv, Cwd: a.Cwd},
		backend.PolicyResult{Kind: backend.ActionShell})
	if a.Escalated {
		risk = backend.RiskHigh
	}
	return &backend.GatedAction{Kind: backend.ActionShell, Title: "Run: " + firstLine(innerCommand(a), 80),
		Risk: risk, Preview: preview, Subject: subject}, nil
}

// Execute runs only after approval: it answers "accept" and returns what
// the command printed once Codex reports it.
func (commandTool) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	s, r, _, err := lookup(in.CallID, in.Arguments)
	if err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", ToolCommand, err), nil
	}
	s.emitDiags(env)
	if err := s.answer(r, "accept"); err != nil {
		return backend.ToolResult{}, err
	}
	it, err := s.waitItem(ctx, r.itemID)
	if err != nil && ctx.Err() != nil {
		s.stop()
		return backend.ToolResult{}, fmt.Errorf("%s: %w", ToolCommand, err)
	}
	if err != nil { // the CLI exited: the next Stream fails the run with its stderr
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", ToolCommand, err), nil
	}
	return commandResult(s, it), nil
}

// commandResult is the engine's record of a command Codex ran.
func commandResult(s *session, it threadItem) backend.ToolResult {
	var b strings.Builder
	switch {
	case it.Exit != nil:
		fmt.Fprintf(&b, "exit code %d (%s)\n", *it.Exit, it.Status)
	default:
		fmt.Fprintf(&b, "status %s\n", it.Status)
	}
	if it.Output != nil {
		b.WriteString(s.Scrub(*it.Output))
	}
	failed := it.Status != "completed" || (it.Exit != nil && *it.Exit != 0)
	return backend.ToolResult{Content: scrub.Clip(b.String(), maxResult), IsError: failed}
}

// innerCommand is what a title shows: the script of a `bash -lc '…'`
// wrapper, else the command.
func innerCommand(a callArgs) string {
	if len(a.Argv) == 3 && (a.Argv[1] == "-lc" || a.Argv[1] == "-c") && strings.HasSuffix(a.Argv[0], "sh") {
		return a.Argv[2]
	}
	return a.Command
}

// firstLine is the first line of s, cut to at most n bytes at a space, so a
// title never holds a partial token.
func firstLine(s string, n int) string {
	line, _, more := strings.Cut(s, "\n")
	if len(line) > n {
		cut := strings.LastIndexAny(line[:n+1], " \t")
		line, more = strings.TrimRight(line[:max(cut, 0)], " \t"), true
	}
	if more {
		line += " …"
	}
	return line
}

// splitWords splits a command line the way a POSIX shell splits words,
// with single quotes, double quotes and backslashes: Codex shows a
// command as its argv joined with shell quoting, so this gives the argv
// back. Operators are not interpreted; false on an unterminated quote.
func splitWords(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case c == '"':
			j, ok := doubleQuoted(s, i+1, &cur)
			if !ok {
				return nil, false
			}
			i, inWord = j, true
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			i, inWord = i+1, true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}

// doubleQuoted copies a double-quoted string starting at i into cur and
// returns the index of its closing quote.
func doubleQuoted(s string, i int, cur *strings.Builder) (int, bool) {
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i, true
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0:
			cur.WriteByte(s[i+1])
			i++
		default:
			cur.WriteByte(c)
		}
	}
	return i, false
}
