// Package llm is the provider side of AgentHub's built-in agent runtime: one
// streaming [Client] interface, the request and response vocabulary, typed
// provider errors and a retry-and-fallback wrapper ([Fallback]). Finding
// local model servers on loopback is the subpackage local's.
//
// Invariants: this package imports only the standard library and the backend
// vocabulary; the provider wire formats are spoken only by its subpackages
// openai and anthropic (over wire and net/http: no provider SDK). A context
// overflow is never retried and never falls back to another model
// (run-model.md CX5). Tool-call arguments are passed through as the model
// produced them, flagged when they are not valid JSON, so a bad model output
// becomes a tool error the model sees and never a crash.
package llm

import (
	"context"
	"encoding/json"
)

// Client streams one model turn. Implementations call h for every delta in
// order, on the caller's goroutine, and return the assembled [Response] once
// the provider has finished the turn. If h returns an error, streaming stops
// and that error is returned as is. On failure the returned error matches one
// of the sentinel errors of this package with errors.Is.
type Client interface {
	Stream(ctx context.Context, req Request, h Handler) (Response, error)
}

// Handler receives streaming deltas on the caller's goroutine. Returning an
// error aborts the stream; a slow handler slows the stream (backpressure).
type Handler func(ev Event) error

// Role is the author of a [Message].
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries one tool result, paired with the assistant's call by
	// ToolCallID.
	RoleTool Role = "tool"
)

// Message is one entry of the conversation sent to the model.
type Message struct {
	Role Role `json:"role"`
	// Text is the user text, the assistant text, or the tool result.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID pairs a RoleTool message with the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// IsError marks a tool result that reports a failure to the model.
	IsError bool `json:"is_error,omitempty"`
}

// Tool is a tool the model may call; Schema is its arguments' JSON Schema
// (an object schema). An empty Schema means "no arguments".
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

// Request is one model turn.
type Request struct {
	Model     string    `json:"model"`
	System    string    `json:"system,omitempty"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools,omitempty"`
	MaxTokens int       `json:"max_tokens,omitempty"` // 0: the provider's default
}

// ToolCall is a tool call as the model produced it. Arguments is kept as a
// string, not json.RawMessage, because it may be invalid JSON: ArgumentsValid
// says whether it parses, and the caller turns an invalid one into a tool
// error for the model.
type ToolCall struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Arguments      string `json:"arguments"`
	ArgumentsValid bool   `json:"arguments_valid"`
}

// NewToolCall assembles a finished call, normalising empty arguments to "{}"
// (providers send nothing for a call without parameters) and validating them.
func NewToolCall(id, name, args string) ToolCall {
	if args == "" {
		args = "{}"
	}
	return ToolCall{ID: id, Name: name, Arguments: args, ArgumentsValid: json.Valid([]byte(args))}
}

// StopReason says why the model ended its turn.
type StopReason string

const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	// StopOther covers refusals, content filters and reasons this package
	// does not know; Response.RawStop keeps the provider's word.
	StopOther StopReason = "other"
)

// Usage is the token accounting of one turn, as reported by the provider.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Add returns the sum of two usages (for a run's running total).
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// Response is the assembled turn.
type Response struct {
	// Model is the model that answered (after fallback, not necessarily the
	// one requested).
	Model      string     `json:"model"`
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	Usage      Usage      `json:"usage"`
	StopReason StopReason `json:"stop_reason"`
	RawStop    string     `json:"raw_stop,omitempty"`
}

// EventKind is the kind of a streaming [Event].
type EventKind string

const (
	// EventText carries a text delta in Text.
	EventText EventKind = "text"
	// EventToolStart announces call number Index with its ID and Name.
	EventToolStart EventKind = "tool_start"
	// EventToolDelta carries an argument fragment of call Index in Text.
	EventToolDelta EventKind = "tool_delta"
	// EventToolEnd carries the assembled call Index in Call.
	EventToolEnd EventKind = "tool_end"
	// EventUsage carries the usage so far in Usage.
	EventUsage EventKind = "usage"
)

// Event is one streaming delta. Index is the position of the tool call in
// Response.ToolCalls, for the tool kinds.
type Event struct {
	Kind  EventKind `json:"kind"`
	Text  string    `json:"text,omitempty"`
	Index int       `json:"index,omitempty"`
	ID    string    `json:"id,omitempty"`
	Name  string    `json:"name,omitempty"`
	Call  *ToolCall `json:"call,omitempty"`
	Usage *Usage    `json:"usage,omitempty"`
}
