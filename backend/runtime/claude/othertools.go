package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/backend/approval"
	"agenthub/backend/scrub"
	"agenthub/workspace"
)

// maxResult caps the tool output given back to the engine.
const maxResult = 64 << 10

// bashTool proxies Bash: a shell approval with the command, where it runs
// (the workspace root) and the environment's names.
type bashTool struct{}

func (bashTool) Spec() backend.ToolSpec {
	return spec(ToolBash, "A shell command Claude Code asked to run, shown as a shell approval.")
}

type bashInput struct {
	Command     string `json:"command"`
	Description string `json:"description"`
	TimeoutMS   int    `json:"timeout"`
	Background  bool   `json:"run_in_background"`
}

// bashPreview is what the reviewer sees of a command.
type bashPreview struct {
	Command     string   `json:"command"`
	Description string   `json:"description,omitempty"`
	Shell       string   `json:"shell"`
	Cwd         string   `json:"cwd"`
	Env         []string `json:"env"`
	TimeoutMS   int      `json:"timeoutMs,omitempty"`
	Background  bool     `json:"background,omitempty"`
	Runtime     string   `json:"runtime"`
}

func (bashTool) Action(_ context.Context, _ backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decodeArgs(raw)
	if err != nil {
		return nil, err
	}
	var in bashInput
	if err := json.Unmarshal(a.Input, &in); err != nil || in.Command == "" {
		return nil, fmt.Errorf("Bash: no command")
	}
	preview, err := json.Marshal(bashPreview{Command: in.Command, Description: in.Description,
		Shell: "Claude Code's Bash tool", Cwd: ".", Env: envNames(), TimeoutMS: in.TimeoutMS, Background: in.Background,
		Runtime: "claude"})
	if err != nil {
		return nil, fmt.Errorf("Bash: preview: %w", err)
	}
	subject, err := json.Marshal(map[string]string{"kind": string(backend.ActionShell), "command": in.Command, "cwd": "."})
	if err != nil {
		return nil, fmt.Errorf("Bash: subject: %w", err)
	}
	risk := approval.RiskOf(approval.Action{Kind: backend.ActionShell, Command: in.Command},
		backend.PolicyResult{Kind: backend.ActionShell})
	return &backend.GatedAction{Kind: backend.ActionShell, Title: "Run: " + scrub.FirstLine(in.Command, 80), Risk: risk,
		Preview: preview, Subject: subject}, nil
}

func (bashTool) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	return allowAndWait(ctx, env, in)
}

// envNames are the names of the variables the CLI (and so its commands)
// gets; values are machine paths or keys and are not shown.
func envNames() []string {
	names := []string{"HOME", "CLAUDE_CONFIG_DIR", "PATH", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"}
	for _, kv := range quietEnv {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	return append(names, passEnv...)
}

// allowAndWait lets the CLI run its own input unchanged and returns what
// the tool printed, scrubbed of machine paths and secrets.
func allowAndWait(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	s, p, a, err := lookup(in.Arguments)
	if err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%v", err), nil
	}
	s.emitDiags(env)
	if err := s.allow(p, p.input); err != nil {
		return backend.ToolResult{}, err
	}
	res, err := s.waitResult(ctx, p.toolUseID)
	if err != nil && ctx.Err() != nil {
		s.stop()
		return backend.ToolResult{}, fmt.Errorf("%s: %w", a.Tool, err)
	}
	if err != nil { // the CLI exited: the next Stream fails the run with its stderr
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", a.Tool, err), nil
	}
	return backend.ToolResult{Content: scrub.Clip(s.Scrub(res.Content), maxResult), IsError: res.IsError}, nil
}

// otherTool proxies every other tool of the CLI, as the action class
// closest to what it does: reads, notebook writes, web access; anything
// unknown asks as a command of high risk.
type otherTool struct{}

func (otherTool) Spec() backend.ToolSpec {
	return spec(ToolOther, "Another tool Claude Code asked to use; the arguments name it.")
}

func (otherTool) Action(_ context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decodeArgs(raw)
	if err != nil {
		return nil, err
	}
	var in map[string]any
	if err := json.Unmarshal(a.Input, &in); err != nil {
		return nil, fmt.Errorf("%s: the input is not an object", a.Tool)
	}
	switch {
	case readsPath(a.Tool):
		return pathAction(env, a, in)
	case a.Tool == "WebFetch" || a.Tool == "WebSearch":
		return webAction(a, in)
	}
	return unknownAction(env, a)
}

func (otherTool) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decodeArgs(in.Arguments)
	if err == nil && readsPath(a.Tool) {
		var fin map[string]any
		_ = json.Unmarshal(a.Input, &fin)
		// Checked again right before Claude Code reads: a link may have
		// been swapped since the gate decided.
		if err := staysInside(env, a.Tool, inputPath(fin)); err != nil {
			return refuseCall(env, in, err.Error())
		}
		if env.Emit != nil && (a.Tool == "Read" || a.Tool == "NotebookRead") {
			env.Emit(backend.EvFileRead, map[string]any{"tool": ToolOther + ":" + a.Tool, "path": inputPath(fin)})
		}
	}
	return allowAndWait(ctx, env, in)
}

// readsPath reports whether a tool of the CLI reads the path its input
// names itself (from the disk, following symlinks).
func readsPath(tool string) bool {
	switch tool {
	case "Read", "Glob", "Grep", "LS", "NotebookRead", "NotebookEdit":
		return true
	}
	return false
}

// staysInside refuses a path the CLI would read through a symlink (or a
// hard link) leading out of the workspace. Claude Code reads the disk
// itself and follows links; AgentHub resolves the path through the
// workspace's rooted access (os.Root), the way its own tools read, and
// lets the CLI go on only when that stays inside. A path that does not
// exist passes: the CLI reports it missing.
func staysInside(env backend.ToolEnv, tool, p string) error {
	w, err := agentpath.Open(env)
	if err != nil {
		return err
	}
	defer w.Close()
	if _, err := w.Stat(p); errors.Is(err, workspace.ErrOutsideRoot) {
		return &backend.Error{Code: backend.FailOutsideAllowlist, Detail: "link",
			Message: fmt.Sprintf("%s: %s leads outside the workspace (a symlink or a hard link); only files "+
				"inside it can be read", tool, scrub.Clip(p, 200))}
	}
	return nil
}

// refuseCall tells the CLI no for a call the gate had allowed, and returns
// the same text as the call's failed result.
func refuseCall(env backend.ToolEnv, in backend.ToolInput, why string) (backend.ToolResult, error) {
	s, p, _, err := lookup(in.Arguments)
	if err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%v", err), nil
	}
	return s.refuse(env, p, "%s", why), nil
}

// inputPath is the path an input names, "." when none.
func inputPath(in map[string]any) string {
	for _, f := range pathFields {
		if p, ok := in[f].(string); ok && p != "" {
			return p
		}
	}
	return "."
}

// pathAction is a read, or a notebook write, of one workspace path.
func pathAction(env backend.ToolEnv, a callArgs, in map[string]any) (*backend.GatedAction, error) {
	if len(a.Outside) > 0 {
		return nil, outsideError(a)
	}
	p := inputPath(in)
	name := ToolOther + ":" + a.Tool
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, p); ok {
		return agentpath.SecretAccess{Label: name, Tool: name, Path: p, Pattern: pat}.Action(), nil
	}
	if err := staysInside(env, a.Tool, p); err != nil {
		return nil, err
	}
	kind, verb, risk := backend.ActionRead, "Read ", backend.RiskLow
	if a.Tool == "NotebookEdit" {
		kind, verb, risk = backend.ActionWrite, "Edit notebook ", backend.RiskMedium
	}
	preview, _ := json.Marshal(map[string]any{"tool": a.Tool, "path": p, "input": in, "runtime": "claude"})
	subject, _ := json.Marshal(map[string]string{"kind": string(kind), "tool": name, "path": p})
	return &backend.GatedAction{Kind: kind, Title: verb + p, Risk: risk,
		Preview: []byte(scrub.Paths(env.WorkspaceRoot, string(preview))), Subject: subject}, nil
}

// webAction is a network access: a fetch of a URL, or a web search.
func webAction(a callArgs, in map[string]any) (*backend.GatedAction, error) {
	url, _ := in["url"].(string)
	title := "Fetch " + url
	if a.Tool == "WebSearch" {
		q, _ := in["query"].(string)
		url, title = "websearch:"+q, "Web search: "+q
	}
	preview, _ := json.Marshal(map[string]any{"tool": a.Tool, "input": in, "runtime": "claude"})
	subject, _ := json.Marshal(map[string]string{"kind": string(backend.ActionNetwork), "method": "GET", "url": url})
	return &backend.GatedAction{Kind: backend.ActionNetwork, Title: scrub.Clip(title, 120), Risk: backend.RiskMedium,
		Preview: preview, Subject: subject}, nil
}

// unknownAction asks for a tool AgentHub has no class for, as a command of
// high risk bound to the tool and its whole input.
func unknownAction(env backend.ToolEnv, a callArgs) (*backend.GatedAction, error) {
	command := "claude-code " + a.Tool + " " + string(a.Input)
	preview, _ := json.Marshal(map[string]any{"tool": a.Tool, "input": a.Input, "runtime": "claude",
		"note": "a Claude Code tool AgentHub has no action class for"})
	subject, _ := json.Marshal(map[string]string{"kind": string(backend.ActionShell), "command": command, "cwd": "."})
	return &backend.GatedAction{Kind: backend.ActionShell, Title: "Claude Code tool " + scrub.Clip(a.Tool, 60),
		Risk: backend.RiskHigh, Preview: []byte(scrub.Paths(env.WorkspaceRoot, string(preview))), Subject: subject}, nil
}
