package protocol

import (
	"encoding/json"
	"slices"

	"agenthub/backend"
)

// The envelope payloads the adapters read. Only the fields a protocol
// carries are named; an event whose payload does not decode is passed on
// as a custom event rather than dropped (EV13 keeps unknown shapes too).

// MessageDelta is run.message.delta. Reasoning marks a delta of the
// model's reasoning (thinking) rather than of its answer.
type MessageDelta struct {
	MessageID string `json:"messageId"`
	Text      string `json:"text"`
	Reasoning bool   `json:"reasoning,omitempty"`
}

// MessageCompleted is run.message.completed.
type MessageCompleted struct {
	MessageID string `json:"messageId"`
	Role      string `json:"role"`
	Text      string `json:"text"`
	Reasoning bool   `json:"reasoning,omitempty"`
}

// ToolCall is run.tool.call.
type ToolCall struct {
	ToolCallID string          `json:"toolCallId"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
}

// ToolResult is run.tool.result.
type ToolResult struct {
	ToolCallID string `json:"toolCallId"`
	Content    string `json:"content"`
	IsError    bool   `json:"isError"`
	Status     string `json:"status"`
}

// Denied reports whether the result is a reviewer's rejection (the call
// never ran), as opposed to a tool that ran and failed.
func (r ToolResult) Denied() bool { return r.Status == string(backend.CallCancelled) }

// Resolved is run.approval.resolved.
type Resolved struct {
	ApprovalID string `json:"approvalId"`
	ToolCallID string `json:"toolCallId"`
	Decision   string `json:"decision"`
}

// Checkpoint is run.checkpoint.created.
type Checkpoint struct {
	Kind string `json:"kind"`
	Step int    `json:"step"`
}

// Decode reads ev's payload into v and reports whether it fit.
func Decode(ev backend.Event, v any) bool { return json.Unmarshal(ev.Payload, v) == nil }

// RunEnded reads a terminal event's payload.
func RunEnded(ev backend.Event) backend.RunEnded {
	var e backend.RunEnded
	_ = json.Unmarshal(ev.Payload, &e) // an unreadable ending still ends the run
	return e
}

// CustomName is the name a protocol's custom or data part carries for an
// AgentHub event without an equivalent: "agenthub." and the event type.
func CustomName(t backend.EventType) string { return "agenthub." + string(t) }

// SortedKeys lists what a translator holds open in a fixed order, so what
// it closes comes out the same every time.
func SortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// FailureText is what a client shows of a failed run: its message (or a
// plain default), the code when the protocol has no field of its own for
// it, and the next step.
func FailureText(e backend.RunEnded, withCode bool) string {
	msg := e.Message
	if msg == "" {
		msg = "the run failed"
	}
	if withCode && e.Code != "" {
		msg += " (" + string(e.Code) + ")"
	}
	if e.Next != "" {
		msg += " — " + e.Next
	}
	return msg
}
