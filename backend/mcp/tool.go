package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agenthub/backend"
)

// ActionMCP is the action class of an MCP tool call. Without a matching
// [[mcp]] rule of the workspace policy it asks (AP1); the grant of "approve
// for this run" and "always allow" covers one tool of one server with any
// arguments (docs/POLICY.md).
const ActionMCP = backend.ActionMCP

// Prefix starts the name of every MCP tool.
const Prefix = "mcp__"

// maxResult bounds the text of one tool result the model sees.
const maxResult = 256 << 10

// toolNameRE is what every provider accepts as a tool name.
var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ToolName is the name the model calls: mcp__<server>__<tool>.
func ToolName(server, tool string) string { return Prefix + server + "__" + tool }

// tool is one MCP tool as a [backend.Tool].
type tool struct {
	srv  *server
	def  *sdk.Tool
	spec backend.ToolSpec
}

func newTool(s *server, def *sdk.Tool) (*tool, error) {
	name := ToolName(s.cfg.Name, def.Name)
	if !toolNameRE.MatchString(name) {
		return nil, fmt.Errorf("MCP tool %q of server %s: the name %q is not a valid tool name (letters, digits, _ and -, at most 64)",
			def.Name, s.cfg.Name, name)
	}
	schema, err := inputSchema(def.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("MCP tool %s: %w", name, err)
	}
	desc := strings.TrimSpace(def.Description)
	if desc == "" {
		desc = def.Title
	}
	desc = fmt.Sprintf("[MCP server %s] %s", s.cfg.Name, desc)
	return &tool{srv: s, def: def, spec: backend.ToolSpec{Name: name, Description: desc, Schema: schema}}, nil
}

// inputSchema re-encodes the server's schema as an object schema with
// properties, which every provider requires.
func inputSchema(v any) (json.RawMessage, error) {
	m := map[string]any{}
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("input schema: %w", err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("input schema is not a JSON object: %w", err)
		}
	}
	if t, ok := m["type"]; ok && t != "object" {
		return nil, fmt.Errorf("input schema has type %v, want object", t)
	}
	m["type"] = "object"
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	return json.Marshal(m)
}

func (t *tool) Spec() backend.ToolSpec { return t.spec }

// readOnly reports whether the call need not ask: the server says the tool
// changes nothing AND the profile trusts that for this server. The call
// still goes to the gate, so a deny or ask rule of the workspace policy or
// of the profile's overrides still applies.
func (t *tool) readOnly() bool {
	return t.srv.cfg.AllowReadOnly && t.def.Annotations != nil && t.def.Annotations.ReadOnlyHint
}

// Action describes the call for the gate: the server, the tool and the
// exact arguments, which the subject hash binds (AP9).
func (t *tool) Action(_ context.Context, _ backend.ToolEnv, args json.RawMessage) (*backend.GatedAction, error) {
	if err := objectArgs(args); err != nil {
		return nil, fmt.Errorf("invalid arguments for %s: %w; the schema is %s", t.spec.Name, err, t.spec.Schema)
	}
	ann := t.def.Annotations
	risk := backend.RiskHigh // MCP's default: may be destructive
	switch {
	case ann != nil && ann.ReadOnlyHint:
		risk = backend.RiskLow
	case ann != nil && ann.DestructiveHint != nil && !*ann.DestructiveHint:
		risk = backend.RiskMedium
	}
	subj := map[string]any{"kind": ActionMCP, "server": t.srv.cfg.Name, "tool": t.def.Name,
		"arguments": json.RawMessage(args)}
	if ann != nil && ann.ReadOnlyHint {
		subj["read_only"] = true // what [[mcp]] rules with read_only = true match
	}
	if t.readOnly() {
		subj["allow_read_only"] = true // the policy's default for this call is allow, not ask
	}
	subject, err := json.Marshal(subj)
	if err != nil {
		return nil, fmt.Errorf("subject of %s: %w", t.spec.Name, err)
	}
	preview, err := json.Marshal(map[string]any{"server": t.srv.cfg.Name, "tool": t.def.Name,
		"title": t.def.Title, "description": t.def.Description, "arguments": json.RawMessage(args),
		"annotations": ann})
	if err != nil {
		return nil, fmt.Errorf("preview of %s: %w", t.spec.Name, err)
	}
	return &backend.GatedAction{Kind: ActionMCP, Title: fmt.Sprintf("MCP %s: %s", t.srv.cfg.Name, t.def.Name),
		Risk: risk, Preview: preview, Subject: subject}, nil
}

func objectArgs(args json.RawMessage) error {
	a := bytes.TrimSpace(args)
	if len(a) == 0 || !json.Valid(a) || a[0] != '{' {
		return errors.New("send a JSON object")
	}
	return nil
}

// Execute calls the tool on its server. Every failure is a tool error the
// model sees; none ends the run.
func (t *tool) Execute(ctx context.Context, _ backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	timeout := t.srv.cfg.CallTimeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sess, err := t.srv.live(ctx)
	if err != nil {
		return toolError("MCP server %s is not available: %v", t.srv.cfg.Name, err), nil
	}
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: t.def.Name, Arguments: json.RawMessage(in.Arguments)})
	switch {
	case err != nil && ctx.Err() == context.DeadlineExceeded:
		return toolError("MCP tool %s did not answer within %s", t.spec.Name, timeout), nil
	case err != nil && ctx.Err() != nil:
		return backend.ToolResult{}, ctx.Err() // the run was cancelled
	case err != nil:
		return toolError("MCP tool %s failed: %v%s", t.spec.Name, err, t.srv.crashNote()), nil
	}
	return backend.ToolResult{Content: render(res), IsError: res.IsError}, nil
}

func toolError(format string, args ...any) backend.ToolResult {
	return backend.ToolResult{Content: fmt.Sprintf(format, args...), IsError: true}
}

// render turns an MCP result into the text the model sees: text content as
// is, other content named, structured content as JSON when there is no text.
func render(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch c := c.(type) {
		case *sdk.TextContent:
			b.WriteString(c.Text)
		case *sdk.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case *sdk.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", c.MIMEType, len(c.Data))
		case *sdk.ResourceLink:
			fmt.Fprintf(&b, "[resource %s]", c.URI)
		default:
			if j, err := json.Marshal(c); err == nil {
				b.Write(j)
			}
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(j)
		}
	}
	s := b.String()
	if len(s) > maxResult {
		s = s[:maxResult] + fmt.Sprintf("\n[… %d more bytes of the MCP result were dropped]", len(s)-maxResult)
	}
	return s
}

// crashNote says the server stopped, with the end of its stderr, when it
// exited during the call; the next call starts it again.
func (s *server) crashNote() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return ""
	}
	// The call's EOF can arrive a moment before the process is reaped.
	select {
	case <-s.p.Done():
	case <-time.After(time.Second):
		return ""
	}
	note := "; the MCP server stopped (it is started again on the next call)"
	if tail := s.stderrTail(); tail != "" {
		note += "; it said: " + tail
	}
	return note
}
