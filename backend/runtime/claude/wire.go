package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"agenthub/backend/scrub"
)

// kind is what one stdout line of Claude Code's stream-json means to the
// adapter.
type kind int

const (
	kindIgnored    kind = iota // known and not needed (status, hook and other system lines)
	kindInit                   // system/init
	kindAssistant              // an assistant message: text and tool_use blocks
	kindDelta                  // stream_event with a text delta (--include-partial-messages)
	kindToolResult             // a user message carrying tool results
	kindControl                // control_request from the CLI (can_use_tool, …)
	kindCancel                 // control_cancel_request: a pending control_request is void
	kindReply                  // control_response to one of ours
	kindResult                 // the turn's final result
	kindInvalid                // not JSON, or a known type that lacks its fields
	kindUnknown                // JSON of a type this adapter does not know
)

// line is one parsed stdout line. Only the fields of its kind are set.
type line struct {
	Kind      kind
	Problem   string // kindInvalid, kindUnknown: why
	MessageID string
	Sub       bool // from a sub-agent (parent_tool_use_id set)

	Init    initInfo
	Texts   []string  // assistant text blocks
	Uses    []toolUse // assistant tool_use blocks
	Delta   string
	Results []toolResult
	Control control
	Result  result
}

type initInfo struct {
	CWD            string   `json:"cwd"`
	SessionID      string   `json:"session_id"`
	Model          string   `json:"model"`
	Version        string   `json:"claude_code_version"`
	PermissionMode string   `json:"permissionMode"`
	Tools          []string `json:"tools"`
}

type toolUse struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResult struct {
	ToolUseID string
	Content   string
	IsError   bool
}

// control is a control_request the CLI sends, or the id of one it cancels.
type control struct {
	RequestID   string
	Subtype     string
	ToolName    string
	Input       json.RawMessage
	ToolUseID   string
	Description string
}

// result is the final line of a turn.
type result struct {
	Subtype        string  `json:"subtype"`
	IsError        bool    `json:"is_error"`
	Text           string  `json:"result"`
	StopReason     string  `json:"stop_reason"`
	TerminalReason string  `json:"terminal_reason"`
	APIErrorStatus int     `json:"api_error_status"`
	NumTurns       int     `json:"num_turns"`
	CostUSD        float64 `json:"total_cost_usd"`
	Usage          struct {
		Input         int64 `json:"input_tokens"`
		Output        int64 `json:"output_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
	Denials []json.RawMessage `json:"permission_denials"`
}

// envelope holds the fields shared by every line type.
type envelope struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	Parent    *string         `json:"parent_tool_use_id"`
	Message   json.RawMessage `json:"message"`
	Event     json.RawMessage `json:"event"`
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
}

// ignoredTypes are top-level types the CLI prints that carry nothing the
// adapter needs; they are still kept in the raw output.
var ignoredTypes = map[string]bool{
	"keep_alive": true, "rate_limit_event": true, "prompt_suggestion": true, "tool_progress": true,
	"auth_status": true, "streamlined_text": true, "streamlined_tool_use_summary": true,
}

// parseLine classifies one stdout line. It never fails: what it cannot use
// comes back as kindInvalid or kindUnknown with the reason.
func parseLine(b []byte) line {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return line{Kind: kindIgnored}
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return invalid("not a JSON object: %v", err)
	}
	l, ok := parseTyped(env, b)
	if !ok && l.Kind == 0 {
		return line{Kind: kindUnknown, Problem: fmt.Sprintf("unknown message type %q", scrub.Clip(env.Type, 40))}
	}
	l.Sub = env.Parent != nil && *env.Parent != ""
	return l
}

func parseTyped(env envelope, raw []byte) (line, bool) {
	switch env.Type {
	case "system":
		return parseSystem(env, raw), true
	case "assistant":
		return parseAssistant(env), true
	case "user":
		return parseUser(env), true
	case "stream_event":
		return parseStreamEvent(env), true
	case "control_request":
		return parseControl(env), true
	case "control_cancel_request":
		if env.RequestID == "" {
			return invalid("control_cancel_request without request_id"), true
		}
		return line{Kind: kindCancel, Control: control{RequestID: env.RequestID}}, true
	case "control_response":
		return line{Kind: kindReply}, true
	case "result":
		return parseResult(raw), true
	}
	if ignoredTypes[env.Type] {
		return line{Kind: kindIgnored}, true
	}
	return line{}, false
}

func parseSystem(env envelope, raw []byte) line {
	if env.Subtype != "init" {
		return line{Kind: kindIgnored}
	}
	var in initInfo
	if err := json.Unmarshal(raw, &in); err != nil {
		return invalid("system/init: %v", err)
	}
	return line{Kind: kindInit, Init: in}
}

// block is one content block of a message.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type message struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func parseAssistant(env envelope) line {
	var m message
	if err := json.Unmarshal(env.Message, &m); err != nil || len(env.Message) == 0 {
		return invalid("assistant line without a message object")
	}
	var blocks []block
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		return invalid("assistant content is not a list of blocks")
	}
	l := line{Kind: kindAssistant, MessageID: m.ID}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			l.Texts = append(l.Texts, b.Text)
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return invalid("tool_use block without id or name")
			}
			l.Uses = append(l.Uses, toolUse{ID: b.ID, Name: b.Name, Input: b.Input})
		}
	}
	return l
}

// parseUser reads the tool results of a user message; a user message
// without any is an echo the adapter does not need.
func parseUser(env envelope) line {
	var m message
	if err := json.Unmarshal(env.Message, &m); err != nil || len(env.Message) == 0 {
		return invalid("user line without a message object")
	}
	var blocks []block
	if json.Unmarshal(m.Content, &blocks) != nil {
		return line{Kind: kindIgnored} // plain string content: a user prompt echo
	}
	l := line{Kind: kindToolResult}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		if b.ToolUseID == "" {
			return invalid("tool_result block without tool_use_id")
		}
		l.Results = append(l.Results, toolResult{ToolUseID: b.ToolUseID, Content: resultText(b.Content),
			IsError: b.IsError})
	}
	if len(l.Results) == 0 {
		return line{Kind: kindIgnored}
	}
	return l
}

// resultText flattens a tool_result's content: a string, or a list of
// blocks whose text blocks are joined.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		default:
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}

func parseStreamEvent(env envelope) line {
	var ev struct {
		Type  string `json:"type"`
		Delta struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"delta"`
		Message struct {
			ID string `json:"id"`
		} `json:"message"`
	}
	if err := json.Unmarshal(env.Event, &ev); err != nil || len(env.Event) == 0 {
		return invalid("stream_event without an event object")
	}
	if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
		return line{Kind: kindDelta, Delta: ev.Delta.Text}
	}
	return line{Kind: kindIgnored}
}

func parseControl(env envelope) line {
	var r struct {
		Subtype     string          `json:"subtype"`
		ToolName    string          `json:"tool_name"`
		Input       json.RawMessage `json:"input"`
		ToolUseID   string          `json:"tool_use_id"`
		Description string          `json:"description"`
	}
	if env.RequestID == "" || json.Unmarshal(env.Request, &r) != nil || r.Subtype == "" {
		return invalid("control_request without request_id or subtype")
	}
	if r.Subtype == "can_use_tool" && (r.ToolName == "" || !isObject(r.Input)) {
		return invalid("can_use_tool without tool_name or an input object")
	}
	return line{Kind: kindControl, Control: control{RequestID: env.RequestID, Subtype: r.Subtype,
		ToolName: r.ToolName, Input: r.Input, ToolUseID: r.ToolUseID, Description: r.Description}}
}

func parseResult(raw []byte) line {
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		return invalid("result: %v", err)
	}
	if r.Subtype == "" {
		return invalid("result without subtype")
	}
	return line{Kind: kindResult, Result: r}
}

func invalid(format string, args ...any) line {
	return line{Kind: kindInvalid, Problem: fmt.Sprintf(format, args...)}
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 1 && raw[0] == '{' && json.Valid(raw)
}
