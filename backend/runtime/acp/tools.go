package acp

import (
	"encoding/json"

	"agenthub/backend"
	"agenthub/backend/runtime/sessions"
)

// Proxy tool names. The engine sees the agent's permission requests and
// writes as calls to these; their arguments name the session and the
// request.
const (
	ToolSession  = "acp.session"         // starts the agent
	ToolEdit     = "acp.edit"            // permission to edit, delete or move: a staged patch when it carries a diff
	ToolExecute  = "acp.execute"         // permission to run a command: a shell approval
	ToolFetch    = "acp.fetch"           // permission to fetch: a network approval
	ToolRead     = "acp.read"            // permission to read or search; also names served reads
	ToolOther    = "acp.other"           // any other permission, as a command of high risk
	ToolWrite    = "acp.write_text_file" // a write no approval covered: a staged patch
	ToolTerminal = "acp.terminal"        // a terminal/create: a command run like run_shell after a shell approval
)

// EvToolCall is the event type this runtime adds to the run's stream (EV13
// keeps unknown types): one of the agent's own tool calls started or
// changed status. The agent that ran and a version drift are recorded with
// the shared backend.EvRuntimeStarted and backend.EvVersionDrift.
const EvToolCall backend.EventType = "runtime.tool_call"

// ToolNames lists the tools an ACP profile offers the engine.
func ToolNames() []string {
	return []string{ToolSession, ToolEdit, ToolExecute, ToolFetch, ToolRead, ToolOther, ToolWrite, ToolTerminal}
}

// Tools returns the proxy tools by name, for the engine's tool table. They
// serve every ACP profile; a call finds its session by id.
func Tools() map[string]backend.Tool {
	return map[string]backend.Tool{
		ToolSession:  sessionTool(),
		ToolEdit:     permTool{name: ToolEdit},
		ToolExecute:  permTool{name: ToolExecute},
		ToolFetch:    permTool{name: ToolFetch},
		ToolRead:     permTool{name: ToolRead},
		ToolOther:    permTool{name: ToolOther},
		ToolWrite:    writeTool{},
		ToolTerminal: termTool{},
	}
}

// Capabilities is what an ACP runtime declares (AD2). Gating is enforced
// for what AgentHub serves itself: every write to the workspace that comes
// through fs/write_text_file is a staged patch AgentHub applies, every
// command in a client terminal is a shell approval, and every permission
// request waits for the gate. What an agent can do without
// asking is advisory: an arbitrary ACP agent may write or run commands
// without a request. Gemini CLI 0.61.0 (tested) routes every workspace
// write through the client and asks before every edit; on its own it runs
// commands it deems read-only (ls, cat, grep, echo… in the workspace)
// without asking and searches the web unasked, but the policy AgentHub
// writes into its isolated HOME (geminipolicy.go) makes every command and
// fetch ask and denies web search, so its shell and network gating are
// enforced. It still reads and searches the disk with its own tools: its
// read gating is advisory.
func Capabilities(gemini bool) backend.Capabilities {
	g := map[backend.ActionKind]backend.Enforcement{}
	for _, k := range []backend.ActionKind{backend.ActionRead, backend.ActionWrite, backend.ActionPatch,
		backend.ActionShell, backend.ActionNetwork} {
		g[k] = backend.Advisory
	}
	if gemini {
		g[backend.ActionWrite], g[backend.ActionPatch] = backend.Enforced, backend.Enforced
		g[backend.ActionShell], g[backend.ActionNetwork] = backend.Enforced, backend.Enforced
	}
	return backend.Capabilities{Gating: g, Streaming: true, PartialApply: true, Usage: gemini}
}

// live holds the sessions of this process, by session and by call id.
var live = sessions.New[*session]()

// genericSchema is the argument schema of every proxy tool; only the
// runtime ever calls them.
var genericSchema = json.RawMessage(`{"type":"object","properties":{"session":{"type":"string"},` +
	`"request":{"type":"string"}},"required":["session"]}`)

func spec(name, what string) backend.ToolSpec {
	return backend.ToolSpec{Name: name, Schema: genericSchema, Description: what +
		" Only the ACP runtime calls this tool, for a request of the agent."}
}
