// Package aisdk maps a run's envelope events to the AI SDK v6 UI message
// stream (header x-vercel-ai-ui-message-stream: v1; docs/API.md, "AI SDK").
// One Translator serves one HTTP response, which is one assistant message
// or the continuation of one: an approval ends the response with finish
// (finishReason "tool-calls") and the client's next POST carries the
// decision and continues the same AgentHub run. Pure: the handler in
// app/httpapi does the I/O.
package aisdk

import (
	"encoding/json"
	"strings"

	"agenthub/app/protocol"
	"agenthub/backend"
)

// HeaderName and HeaderValue mark a UI message stream response.
const (
	HeaderName  = "x-vercel-ai-ui-message-stream"
	HeaderValue = "v1"
)

// Chunk is one UI message stream chunk; only the fields of its type are set.
type Chunk struct {
	Type string `json:"type"`

	ID    string `json:"id,omitempty"`
	Delta string `json:"delta,omitempty"`

	MessageID       string `json:"messageId,omitempty"`
	MessageMetadata any    `json:"messageMetadata,omitempty"`

	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     any             `json:"output,omitempty"`
	ErrorText  string          `json:"errorText,omitempty"`
	Dynamic    bool            `json:"dynamic,omitempty"`
	ApprovalID string          `json:"approvalId,omitempty"`

	Data any `json:"data,omitempty"`

	FinishReason string `json:"finishReason,omitempty"`
	Reason       string `json:"reason,omitempty"`
}

// Metadata is the assistant message's metadata: the AgentHub run and the
// last envelope sequence this message holds. The client sends it back
// with the message, so the next POST continues the run from there.
type Metadata struct {
	AgentHub Cursor `json:"agenthub"`
}

// Cursor names a run and a position in its events.
type Cursor struct {
	RunID    string `json:"runId"`
	Sequence int64  `json:"cursor"`
}

// DataApproval is the data part type of a pending approval: what the
// approval dialog shows and the schema of an answer (a decision other than
// yes or no, a hunk selection) sent in the next POST's agenthub.decisions.
const DataApproval = "data-agenthub-approval"

// DataState is the data part type of the run's state (one part, replaced).
const DataState = "data-agenthub-state"

// ApprovalData is the data of a DataApproval part.
type ApprovalData struct {
	protocol.Prompt
	ResponseSchema map[string]any `json:"responseSchema"`
}

// Translator turns one response's envelope events into chunks.
type Translator struct {
	HubRunID string
	last     int64 // the last sequence translated
	texts    map[string]bool
	thinking map[string]bool
	rejected map[string]bool // tool calls a reviewer rejected in this response
	stepOpen bool
	ended    bool
}

// New returns a translator for one response of hubRun from cursor.
func New(hubRun string, cursor int64) *Translator {
	return &Translator{HubRunID: hubRun, last: cursor, texts: map[string]bool{}, thinking: map[string]bool{},
		rejected: map[string]bool{}}
}

// Ended reports whether the response is complete.
func (t *Translator) Ended() bool { return t.ended }

func (t *Translator) meta() Metadata {
	return Metadata{AgentHub: Cursor{RunID: t.HubRunID, Sequence: t.last}}
}

// Start opens the response; messageID is "" when the response continues
// the client's last assistant message.
func (t *Translator) Start(messageID string) []Chunk {
	return []Chunk{{Type: "start", MessageID: messageID, MessageMetadata: t.meta()}}
}

// Event translates one envelope event; a chunk that moves the message on
// is followed by message-metadata with the new cursor.
func (t *Translator) Event(ev backend.Event) []Chunk {
	if t.ended || ev.Type == backend.EvSystemGap {
		return nil
	}
	if ev.Sequence > t.last {
		t.last = ev.Sequence
	}
	out := t.event(ev)
	if len(out) > 0 && !t.ended {
		out = append(out, Chunk{Type: "message-metadata", MessageMetadata: t.meta()})
	}
	return out
}

func (t *Translator) event(ev backend.Event) []Chunk {
	var out []Chunk
	add := func(c Chunk) { out = append(out, c) }
	switch ev.Type {
	case backend.EvMessageDelta:
		var d protocol.MessageDelta
		if !protocol.Decode(ev, &d) || d.MessageID == "" {
			break
		}
		t.openStep(add)
		kind, open := "text", t.texts
		if d.Reasoning {
			kind, open = "reasoning", t.thinking
		}
		if !open[d.MessageID] {
			open[d.MessageID] = true
			add(Chunk{Type: kind + "-start", ID: d.MessageID})
		}
		if d.Text != "" {
			add(Chunk{Type: kind + "-delta", ID: d.MessageID, Delta: d.Text})
		}
		return out
	case backend.EvMessageCompleted:
		var m protocol.MessageCompleted
		if !protocol.Decode(ev, &m) || m.MessageID == "" {
			break
		}
		kind, open := "text", t.texts
		if m.Reasoning {
			kind, open = "reasoning", t.thinking
		}
		if !open[m.MessageID] {
			t.openStep(add)
			add(Chunk{Type: kind + "-start", ID: m.MessageID})
			if m.Text != "" {
				add(Chunk{Type: kind + "-delta", ID: m.MessageID, Delta: m.Text})
			}
		}
		delete(open, m.MessageID)
		add(Chunk{Type: kind + "-end", ID: m.MessageID})
		return out
	case backend.EvToolCall:
		var c protocol.ToolCall
		if !protocol.Decode(ev, &c) || c.ToolCallID == "" {
			break
		}
		t.openStep(add)
		input := c.Arguments
		if len(input) == 0 || string(input) == "null" {
			input = json.RawMessage("{}")
		}
		add(Chunk{Type: "tool-input-start", ToolCallID: c.ToolCallID, ToolName: c.Name, Dynamic: true})
		add(Chunk{Type: "tool-input-available", ToolCallID: c.ToolCallID, ToolName: c.Name, Input: input, Dynamic: true})
		return out
	case backend.EvToolResult:
		var r protocol.ToolResult
		if !protocol.Decode(ev, &r) || r.ToolCallID == "" {
			break
		}
		switch {
		case r.Denied() && t.rejected[r.ToolCallID]:
			add(Chunk{Type: "tool-output-denied", ToolCallID: r.ToolCallID})
		case r.Denied():
			// Cancelled with no reviewer's rejection (the run was cancelled
			// while the call waited or ran): the SDK has no state for it
			// (output-denied needs a refused approval), so the part stays
			// as it was and the result travels as data.
			add(Chunk{Type: DataType(ev.Type), Data: ev.Payload})
		case r.IsError:
			add(Chunk{Type: "tool-output-error", ToolCallID: r.ToolCallID, ErrorText: r.Content, Dynamic: true})
		default:
			add(Chunk{Type: "tool-output-available", ToolCallID: r.ToolCallID, Output: r.Content, Dynamic: true})
		}
		return out
	case backend.EvApprovalRequested:
		tk, err := protocol.TicketOf(ev)
		if err != nil || tk.ID == "" {
			break
		}
		p := protocol.PromptOf(tk)
		add(Chunk{Type: "tool-approval-request", ApprovalID: protocol.ApprovalToken(tk.ID, tk.SubjectHash), ToolCallID: tk.ToolCallID})
		add(Chunk{Type: DataApproval, ID: tk.ID, Data: ApprovalData{Prompt: p, ResponseSchema: p.ResponseSchema()}})
		return out
	case backend.EvApprovalResolved:
		var r protocol.Resolved
		if protocol.Decode(ev, &r) && strings.HasPrefix(r.Decision, "reject") {
			t.rejected[r.ToolCallID] = true
		}
	case backend.EvCheckpointCreated:
		var c protocol.Checkpoint
		if protocol.Decode(ev, &c) && c.Kind == "step" {
			t.closeStep(add)
			return out
		}
	case backend.EvRunStarted, backend.EvRunStatusChanged:
		var s backend.StatusChanged
		if protocol.Decode(ev, &s) && s.To != "" {
			add(Chunk{Type: DataState, ID: "state", Data: map[string]string{"runId": t.HubRunID, "state": string(s.To)}})
		}
		return out
	case backend.EvRunCompleted:
		t.closeStep(add)
		add(Chunk{Type: "finish", FinishReason: "stop", MessageMetadata: t.meta()})
		t.ended = true
		return out
	case backend.EvRunCancelled:
		t.closeStep(add)
		add(Chunk{Type: "abort", Reason: "the run was cancelled"})
		t.ended = true
		return out
	case backend.EvRunFailed:
		msg := protocol.FailureText(protocol.RunEnded(ev), true) // an error chunk has only its text
		t.closeStep(add)
		add(Chunk{Type: "error", ErrorText: msg})
		add(Chunk{Type: "finish", FinishReason: "error", MessageMetadata: t.meta()})
		t.ended = true
		return out
	}
	add(Chunk{Type: DataType(ev.Type), Data: ev.Payload})
	return out
}

// Suspend ends the response at an approval: the message waits for the
// client's answer, which the next POST carries.
func (t *Translator) Suspend() []Chunk {
	var out []Chunk
	add := func(c Chunk) { out = append(out, c) }
	t.closeStep(add)
	add(Chunk{Type: "finish", FinishReason: "tool-calls", MessageMetadata: t.meta()})
	t.ended = true
	return out
}

// Fail ends the response with an error of AgentHub's own.
func (t *Translator) Fail(message string) []Chunk {
	var out []Chunk
	add := func(c Chunk) { out = append(out, c) }
	t.closeStep(add)
	add(Chunk{Type: "error", ErrorText: message})
	add(Chunk{Type: "finish", FinishReason: "error", MessageMetadata: t.meta()})
	t.ended = true
	return out
}

// DataType is the data part type of an AgentHub event without an
// equivalent: data-agenthub-<type with dashes>, e.g.
// data-agenthub-run-patch-applied.
func DataType(t backend.EventType) string {
	return "data-agenthub-" + strings.ReplaceAll(string(t), ".", "-")
}

func (t *Translator) openStep(add func(Chunk)) {
	if !t.stepOpen {
		t.stepOpen = true
		add(Chunk{Type: "start-step"})
	}
}

// closeStep ends open text and reasoning (sorted, so output is
// deterministic) and the step.
func (t *Translator) closeStep(add func(Chunk)) {
	for _, open := range []struct {
		kind string
		ids  map[string]bool
	}{{"reasoning", t.thinking}, {"text", t.texts}} {
		for _, id := range protocol.SortedKeys(open.ids) {
			delete(open.ids, id)
			add(Chunk{Type: open.kind + "-end", ID: id})
		}
	}
	if t.stepOpen {
		t.stepOpen = false
		add(Chunk{Type: "finish-step"})
	}
}
