package agui

import (
	"encoding/json"

	"agenthub/app/protocol"
	"agenthub/backend"
)

// MessagesSnapshot is the MESSAGES_SNAPSHOT type.
const MessagesSnapshot = "MESSAGES_SNAPSHOT"

// Message is one AG-UI message of a snapshot: the task (user), the
// agent's messages with their tool calls (assistant), and tool results.
type Message struct {
	ID         string         `json:"id"`
	Role       string         `json:"role"`
	Content    *string        `json:"content,omitempty"`
	ToolCalls  []ToolCallInfo `json:"toolCalls,omitempty"`
	ToolCallID string         `json:"toolCallId,omitempty"`
}

// ToolCallInfo is an assistant message's tool call.
type ToolCallInfo struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // function
	Function FunctionCall `json:"function"`
}

// FunctionCall names the tool and its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Conversation folds a run's events, in order, into the messages a client
// that reattaches from a cursor has missed: a stream opened mid-run starts
// with MESSAGES_SNAPSHOT of everything before its cursor.
type Conversation struct {
	runID    string
	messages []Message
}

// NewConversation starts the conversation of a run.
func NewConversation(runID string) *Conversation { return &Conversation{runID: runID} }

// Add folds in one event.
func (c *Conversation) Add(ev backend.Event) {
	switch ev.Type {
	case backend.EvRunCreated:
		var p struct {
			Task string `json:"task"`
		}
		if protocol.Decode(ev, &p) && p.Task != "" {
			c.messages = append(c.messages, Message{ID: "task_" + c.runID, Role: "user", Content: &p.Task})
		}
	case backend.EvMessageCompleted:
		var m protocol.MessageCompleted
		if protocol.Decode(ev, &m) && m.MessageID != "" && !m.Reasoning {
			text := m.Text
			c.messages = append(c.messages, Message{ID: m.MessageID, Role: "assistant", Content: &text})
		}
	case backend.EvToolCall:
		var tc protocol.ToolCall
		if !protocol.Decode(ev, &tc) || tc.ToolCallID == "" {
			return
		}
		args := string(tc.Arguments)
		if args == "" || args == "null" {
			args = "{}"
		}
		call := ToolCallInfo{ID: tc.ToolCallID, Type: "function", Function: FunctionCall{Name: tc.Name, Arguments: args}}
		if n := len(c.messages); n > 0 && c.messages[n-1].Role == "assistant" {
			c.messages[n-1].ToolCalls = append(c.messages[n-1].ToolCalls, call)
			return
		}
		c.messages = append(c.messages, Message{ID: "calls_" + tc.ToolCallID, Role: "assistant", ToolCalls: []ToolCallInfo{call}})
	case backend.EvToolResult:
		var r protocol.ToolResult
		if protocol.Decode(ev, &r) && r.ToolCallID != "" {
			content := r.Content
			c.messages = append(c.messages, Message{ID: "result_" + r.ToolCallID, Role: "tool", Content: &content,
				ToolCallID: r.ToolCallID})
		}
	}
}

// Snapshot is the MESSAGES_SNAPSHOT of what was added, or nothing when
// nothing was.
func (t *Translator) Snapshot(c *Conversation) []Event {
	if len(c.messages) == 0 {
		return nil
	}
	data, err := json.Marshal(c.messages)
	if err != nil {
		return nil
	}
	return []Event{t.stamp(Event{Type: MessagesSnapshot, Messages: data}, 0)}
}
