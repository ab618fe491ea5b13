package claude

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/backend/scrub"
)

// Proxy tool names. The engine sees Claude Code's permission requests as
// calls to these; their arguments name the session and the request.
const (
	ToolSession   = "claude.session"   // starts the CLI, records its diagnostics
	ToolWrite     = "claude.Write"     // staged patch
	ToolEdit      = "claude.Edit"      // staged patch
	ToolMultiEdit = "claude.MultiEdit" // staged patch
	ToolBash      = "claude.Bash"      // shell approval
	ToolOther     = "claude.tool"      // any other tool of the CLI, by its name in the arguments
)

// ToolNames lists the tools a Claude Code profile offers the engine.
func ToolNames() []string {
	return []string{ToolSession, ToolWrite, ToolEdit, ToolMultiEdit, ToolBash, ToolOther}
}

// Tools returns the proxy tools by name, for the engine's tool table. They
// serve every Claude Code profile; a call finds its session by id.
func Tools() map[string]backend.Tool {
	return map[string]backend.Tool{
		ToolSession:   sessionTool(),
		ToolWrite:     fileTool{name: ToolWrite},
		ToolEdit:      fileTool{name: ToolEdit},
		ToolMultiEdit: fileTool{name: ToolMultiEdit},
		ToolBash:      bashTool{},
		ToolOther:     otherTool{},
	}
}

// proxyName is the proxy tool of a Claude Code tool.
func proxyName(tool string) string {
	switch tool {
	case "Write":
		return ToolWrite
	case "Edit":
		return ToolEdit
	case "MultiEdit":
		return ToolMultiEdit
	case "Bash":
		return ToolBash
	}
	return ToolOther
}

// callArgs are a proxy call's arguments: the request and the tool input
// with paths made workspace-relative. They are recorded in events, so they
// never hold an absolute path: one outside the workspace is removed and
// its field listed in Outside.
type callArgs struct {
	Session   string          `json:"session"`
	Request   string          `json:"request"`
	Tool      string          `json:"tool"`
	ToolUseID string          `json:"toolUseId,omitempty"`
	Input     json.RawMessage `json:"input"`
	Outside   []string        `json:"outside,omitempty"`
}

// pathFields are the input fields of Claude Code's tools that hold a path.
var pathFields = []string{"file_path", "notebook_path", "path"}

// proxyCall turns a permission request into the engine's call.
func (s *session) proxyCall(p *permission) (backend.ToolCallRequest, error) {
	input, outside, err := s.relativize(p.input)
	if err != nil {
		return backend.ToolCallRequest{}, &backend.Error{Code: backend.FailSchemaValidation,
			Message: "Claude Code asked to use " + scrub.Clip(p.tool, 40) + " with an input that is not a JSON object", Err: err}
	}
	args, err := json.Marshal(callArgs{Session: s.ID, Request: p.requestID, Tool: p.tool, ToolUseID: p.toolUseID,
		Input: input, Outside: outside})
	if err != nil {
		return backend.ToolCallRequest{}, fmt.Errorf("encode the call of %s: %w", p.tool, err)
	}
	return backend.ToolCallRequest{ID: p.callID, Name: proxyName(p.tool), Arguments: args}, nil
}

// relativize rewrites the absolute paths of an input relative to the
// workspace root.
func (s *session) relativize(raw json.RawMessage) (json.RawMessage, []string, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, nil, err
	}
	var outside []string
	for _, f := range pathFields {
		var p string
		if json.Unmarshal(in[f], &p) != nil || !filepath.IsAbs(p) {
			continue
		}
		rel, ok := agentpath.Rel([]string{s.Root, s.RealRoot}, p)
		if !ok {
			delete(in, f)
			outside = append(outside, f)
			continue
		}
		in[f], _ = json.Marshal(rel)
	}
	out, err := json.Marshal(in)
	return out, outside, err
}

// lookup finds the live session and request a proxy call stands for.
func lookup(raw json.RawMessage) (*session, *permission, callArgs, error) {
	var a callArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.Session == "" {
		return nil, nil, a, fmt.Errorf("not a Claude Code request: %v", err)
	}
	s, ok := live.ByID(a.Session)
	if !ok {
		return nil, nil, a, errGone
	}
	p, ok := s.permission("claude-" + a.Request)
	if !ok {
		return s, nil, a, fmt.Errorf("Claude Code made no request %s", scrub.Clip(a.Request, 60))
	}
	return s, p, a, nil
}

// decodeArgs reads a proxy call's arguments without needing the session:
// Action must work from the arguments alone, so the engine can re-check a
// call after a restart or a long wait.
func decodeArgs(raw json.RawMessage) (callArgs, error) {
	var a callArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.Session == "" || a.Tool == "" {
		return a, fmt.Errorf("not a Claude Code request")
	}
	return a, nil
}

// outsideError refuses a path outside the workspace (AP3): the call fails,
// the agent is told, the run goes on.
func outsideError(a callArgs) error {
	return &backend.Error{Code: backend.FailOutsideAllowlist, Detail: strings.Join(a.Outside, ","),
		Message: fmt.Sprintf("%s: the path in %s is outside the workspace; only paths inside it can be used",
			a.Tool, strings.Join(a.Outside, ", "))}
}

// genericSchema is the argument schema of every proxy tool; only the
// runtime ever calls them.
var genericSchema = json.RawMessage(`{"type":"object","properties":{"session":{"type":"string"},` +
	`"request":{"type":"string"},"tool":{"type":"string"},"input":{"type":"object"}},"required":["session"]}`)

func spec(name, what string) backend.ToolSpec {
	return backend.ToolSpec{Name: name, Schema: genericSchema, Description: what +
		" Only the Claude Code runtime calls this tool, for a request of the Claude Code CLI."}
}
