package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"agenthub/backend"
	"agenthub/backend/proc"
	"agenthub/backend/runtime/agentproc"
	"agenthub/backend/scrub"
)

// This file is the tap between the agent's stdout and the SDK: every line
// is kept in the raw log, checked against the JSON-RPC and ACP shapes
// AgentHub understands, and handed to the SDK when it is JSON at all.

// knownMethods are the agent-to-client methods of ACP.
var knownMethods = map[string]bool{
	sdk.ClientMethodFsReadTextFile: true, sdk.ClientMethodFsWriteTextFile: true,
	sdk.ClientMethodSessionRequestPermission: true, sdk.ClientMethodSessionUpdate: true,
	sdk.ClientMethodTerminalCreate: true, sdk.ClientMethodTerminalKill: true, sdk.ClientMethodTerminalOutput: true,
	sdk.ClientMethodTerminalRelease: true, sdk.ClientMethodTerminalWaitForExit: true,
	sdk.ClientMethodElicitationCreate: true, sdk.ClientMethodElicitationComplete: true,
	sdk.ClientMethodMcpConnect: true, sdk.ClientMethodMcpDisconnect: true, sdk.ClientMethodMcpMessage: true,
	"$/cancel_request": true,
}

// knownUpdates are the session/update variants of ACP.
var knownUpdates = map[string]bool{
	"user_message_chunk": true, "agent_message_chunk": true, "agent_thought_chunk": true, "tool_call": true,
	"tool_call_update": true, "plan": true, "available_commands_update": true, "current_mode_update": true,
	"config_option_update": true, "session_info_update": true, "usage_update": true,
}

// envelope is the JSON-RPC shape of a line.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// Check returns why a line of an ACP agent's output is not understood, or
// "" when it is; forward reports whether the SDK should still see it (a
// request must get an answer, even an error).
func Check(line []byte) (problem string, forward bool) {
	var e envelope
	if err := json.Unmarshal(line, &e); err != nil {
		return "not a JSON-RPC message: " + scrub.Clip(err.Error(), 120), false
	}
	hasID := len(e.ID) > 0 && string(e.ID) != "null"
	switch {
	case e.JSONRPC != "2.0":
		return fmt.Sprintf("jsonrpc is %q, not \"2.0\"", scrub.Clip(e.JSONRPC, 20)), true
	case e.Method == "" && !hasID:
		return "a message with neither a method nor an id", false
	case e.Method == "" && len(e.Result) == 0 && len(e.Error) == 0:
		return "a response with neither a result nor an error", true
	case e.Method == "":
		return "", true
	case strings.HasPrefix(e.Method, "_"):
		return "", true // extension methods are allowed (ACP)
	case !knownMethods[e.Method]:
		return "unknown method " + scrub.Clip(e.Method, 60), true
	case e.Method == sdk.ClientMethodSessionUpdate:
		return checkUpdate(e.Params), true
	}
	return "", true
}

func checkUpdate(params json.RawMessage) string {
	var n struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			Kind string `json:"sessionUpdate"`
		} `json:"update"`
	}
	if err := json.Unmarshal(params, &n); err != nil {
		return "session/update params: " + scrub.Clip(err.Error(), 120)
	}
	if !knownUpdates[n.Update.Kind] {
		return "unknown session/update " + scrub.Clip(fmt.Sprintf("%q", n.Update.Kind), 60)
	}
	var full sdk.SessionNotification
	if err := json.Unmarshal(params, &full); err != nil {
		return "session/update " + n.Update.Kind + ": " + scrub.Clip(err.Error(), 120)
	}
	return ""
}

// onLine is the tap: it runs on proc's output goroutine, in line order.
func (s *session) onLine(b []byte, cut bool) {
	s.Mu.Lock()
	s.Lines++
	n := s.Lines
	s.Mu.Unlock()
	if cut {
		s.lineProblem(n, fmt.Sprintf("a line longer than %d bytes was cut", proc.DefaultMaxLine), nil)
		return
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return
	}
	problem, forward := Check(b)
	if problem != "" {
		s.lineProblem(n, problem, b)
	}
	if forward {
		// The SDK reads continuously; this blocks only while it parses.
		_, _ = s.out.Write(append(append([]byte(nil), b...), '\n'))
	}
}

// lineProblem records an unusable line as a diagnostic event (an ACP
// session queues it as an event instead of keeping it for later).
func (s *session) lineProblem(line int, why string, b []byte) {
	d := agentproc.Diag{Runtime: s.cfg.name(), Line: line, Problem: why}
	if b != nil {
		d.Excerpt = scrub.Clip(s.Scrub(string(b)), 200)
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Invalid++
	if s.Invalid <= agentproc.MaxDiags {
		s.Push(item{kind: itemEvent, evType: backend.EvSchemaValidation, payload: d})
	}
	agentproc.Lost(s.P, s.Invalid)
}
