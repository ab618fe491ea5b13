// Package agui maps a run's envelope events to AG-UI events (docs/API.md,
// "AG-UI"). One Translator serves one HTTP response: an AG-UI run, which
// is one connection, while an AgentHub run may span several (an approval
// ends the AG-UI run with an interrupt and the next POST resumes the same
// AgentHub run). Pure: the handler in app/httpapi does the I/O.
package agui

import (
	"encoding/json"
	"fmt"
	"time"

	"agenthub/app/protocol"
	"agenthub/backend"
)

// ProtocolVersion is the AG-UI version these events follow.
const ProtocolVersion = "1.0"

// Event is one AG-UI event; only the fields of its type are set.
type Event struct {
	Type      string `json:"type"`
	Timestamp int64  `json:"timestamp,omitempty"`

	ThreadID        string `json:"threadId,omitempty"`
	RunID           string `json:"runId,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`

	MessageID string `json:"messageId,omitempty"`
	Role      string `json:"role,omitempty"`
	Delta     string `json:"delta,omitempty"`

	ToolCallID      string `json:"toolCallId,omitempty"`
	ToolCallName    string `json:"toolCallName,omitempty"`
	ParentMessageID string `json:"parentMessageId,omitempty"`
	Content         string `json:"content,omitempty"`

	StepName string `json:"stepName,omitempty"`

	Name     string          `json:"name,omitempty"`
	Value    json.RawMessage `json:"value,omitempty"`
	Snapshot any             `json:"snapshot,omitempty"`

	Message string   `json:"message,omitempty"`
	Code    string   `json:"code,omitempty"`
	Result  any      `json:"result,omitempty"`
	Outcome *Outcome `json:"outcome,omitempty"`

	Messages json.RawMessage `json:"messages,omitempty"` // MESSAGES_SNAPSHOT

	Metadata map[string]any `json:"metadata,omitempty"`
}

// Outcome is RUN_FINISHED's outcome: success, interrupt or cancelled.
type Outcome struct {
	Type       string      `json:"type"`
	Interrupts []Interrupt `json:"interrupts,omitempty"`
}

// Interrupt is one approval the AgentHub run waits for. ID is the
// approval id: RunAgentInput.resume[].interruptId answers it.
type Interrupt struct {
	ID             string         `json:"id"`
	Reason         string         `json:"reason"`
	Message        string         `json:"message,omitempty"`
	ToolCallID     string         `json:"toolCallId,omitempty"`
	ResponseSchema map[string]any `json:"responseSchema,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}

// ReasonApproval is the reason of an approval interrupt.
const ReasonApproval = "agenthub.approval"

// Event types used here (AG-UI EventType).
const (
	RunStarted        = "RUN_STARTED"
	RunFinished       = "RUN_FINISHED"
	RunError          = "RUN_ERROR"
	StepStarted       = "STEP_STARTED"
	StepFinished      = "STEP_FINISHED"
	TextStart         = "TEXT_MESSAGE_START"
	TextContent       = "TEXT_MESSAGE_CONTENT"
	TextEnd           = "TEXT_MESSAGE_END"
	ToolCallStart     = "TOOL_CALL_START"
	ToolCallArgs      = "TOOL_CALL_ARGS"
	ToolCallEnd       = "TOOL_CALL_END"
	ToolCallResult    = "TOOL_CALL_RESULT"
	ReasoningStart    = "REASONING_START"
	ReasoningMsgStart = "REASONING_MESSAGE_START"
	ReasoningContent  = "REASONING_MESSAGE_CONTENT"
	ReasoningMsgEnd   = "REASONING_MESSAGE_END"
	ReasoningEnd      = "REASONING_END"
	StateSnapshot     = "STATE_SNAPSHOT"
	Custom            = "CUSTOM"
)

// State is the STATE_SNAPSHOT AgentHub keeps current: the run and its
// state machine's state.
type State struct {
	RunID string `json:"agenthubRunId"`
	State string `json:"runState"`
}

// Translator turns one stream's envelope events into AG-UI events.
type Translator struct {
	ThreadID, RunID string // the AG-UI ids of this stream (RunAgentInput's)
	HubRunID        string // the AgentHub run
	Now             func() time.Time

	texts     map[string]bool // open text messages
	reasoning map[string]bool // open reasoning messages
	step      string          // the open step, if any
	Steps     int             // the last step checkpointed (seeded by a stream that resumes mid-run)
	ended     bool
}

// New returns a translator for one stream of hubRun.
func New(threadID, runID, hubRun string) *Translator {
	return &Translator{ThreadID: threadID, RunID: runID, HubRunID: hubRun, Now: time.Now,
		texts: map[string]bool{}, reasoning: map[string]bool{}}
}

// Ended reports whether RUN_FINISHED or RUN_ERROR was produced.
func (t *Translator) Ended() bool { return t.ended }

func (t *Translator) stamp(e Event, seq int64) Event {
	e.Timestamp = t.Now().UnixMilli()
	if seq > 0 {
		e.Metadata = map[string]any{"agenthub": map[string]any{"runId": t.HubRunID, "sequence": seq}}
	}
	return e
}

// Start opens the AG-UI run, with the state the run is in.
func (t *Translator) Start(state string) []Event {
	out := []Event{t.stamp(Event{Type: RunStarted, ThreadID: t.ThreadID, RunID: t.RunID, ProtocolVersion: ProtocolVersion}, 0)}
	if state != "" {
		out = append(out, t.stamp(Event{Type: StateSnapshot, Snapshot: State{RunID: t.HubRunID, State: state}}, 0))
	}
	return out
}

// Event translates one envelope event. Approvals are announced here as a
// custom event; the handler ends the stream with [Translator.Interrupt]
// when the approval is still pending.
func (t *Translator) Event(ev backend.Event) []Event {
	if t.ended {
		return nil
	}
	var out []Event
	add := func(e Event) { out = append(out, t.stamp(e, ev.Sequence)) }
	switch ev.Type {
	case backend.EvMessageDelta:
		var d protocol.MessageDelta
		if !protocol.Decode(ev, &d) || d.MessageID == "" {
			break
		}
		t.openStep(add)
		if d.Reasoning {
			t.openReasoning(d.MessageID, add)
			if d.Text != "" {
				add(Event{Type: ReasoningContent, MessageID: d.MessageID, Delta: d.Text})
			}
			return out
		}
		if !t.texts[d.MessageID] {
			t.texts[d.MessageID] = true
			add(Event{Type: TextStart, MessageID: d.MessageID, Role: "assistant"})
		}
		if d.Text != "" {
			add(Event{Type: TextContent, MessageID: d.MessageID, Delta: d.Text})
		}
		return out
	case backend.EvMessageCompleted:
		var m protocol.MessageCompleted
		if !protocol.Decode(ev, &m) || m.MessageID == "" {
			break
		}
		if m.Reasoning {
			if !t.reasoning[m.MessageID] { // never streamed: the whole text at once
				t.openStep(add)
				t.openReasoning(m.MessageID, add)
				if m.Text != "" {
					add(Event{Type: ReasoningContent, MessageID: m.MessageID, Delta: m.Text})
				}
			}
			t.closeReasoning(m.MessageID, add)
			return out
		}
		if !t.texts[m.MessageID] { // never streamed (or streamed before this stream's cursor)
			t.openStep(add)
			add(Event{Type: TextStart, MessageID: m.MessageID, Role: "assistant"})
			if m.Text != "" {
				add(Event{Type: TextContent, MessageID: m.MessageID, Delta: m.Text})
			}
		}
		delete(t.texts, m.MessageID)
		add(Event{Type: TextEnd, MessageID: m.MessageID})
		return out
	case backend.EvToolCall:
		var c protocol.ToolCall
		if !protocol.Decode(ev, &c) || c.ToolCallID == "" {
			break
		}
		t.openStep(add)
		args := string(c.Arguments)
		if args == "" || args == "null" {
			args = "{}"
		}
		add(Event{Type: ToolCallStart, ToolCallID: c.ToolCallID, ToolCallName: c.Name})
		add(Event{Type: ToolCallArgs, ToolCallID: c.ToolCallID, Delta: args})
		add(Event{Type: ToolCallEnd, ToolCallID: c.ToolCallID})
		return out
	case backend.EvToolResult:
		var r protocol.ToolResult
		if !protocol.Decode(ev, &r) || r.ToolCallID == "" {
			break
		}
		content := r.Content
		if content == "" {
			content = r.Status // TOOL_CALL_RESULT needs content
		}
		add(Event{Type: ToolCallResult, MessageID: "result_" + r.ToolCallID, ToolCallID: r.ToolCallID,
			Content: content, Role: "tool"})
		return out
	case backend.EvCheckpointCreated:
		var c protocol.Checkpoint
		if protocol.Decode(ev, &c) && c.Kind == "step" {
			t.closeOpen(add)
			t.Steps = c.Step
		}
	case backend.EvRunStarted, backend.EvRunStatusChanged:
		var s backend.StatusChanged
		if protocol.Decode(ev, &s) && s.To != "" {
			add(Event{Type: StateSnapshot, Snapshot: State{RunID: t.HubRunID, State: string(s.To)}})
		}
		return out
	case backend.EvRunCompleted:
		e := protocol.RunEnded(ev)
		t.closeOpen(add)
		add(Event{Type: RunFinished, ThreadID: t.ThreadID, RunID: t.RunID, Outcome: &Outcome{Type: "success"},
			Result: map[string]any{"agenthubRunId": t.HubRunID, "doneReason": e.DoneReason}})
		t.ended = true
		return out
	case backend.EvRunCancelled:
		t.closeOpen(add)
		add(Event{Type: RunFinished, ThreadID: t.ThreadID, RunID: t.RunID, Outcome: &Outcome{Type: "cancelled"}})
		t.ended = true
		return out
	case backend.EvRunFailed:
		e := protocol.RunEnded(ev)
		msg := protocol.FailureText(e, false) // RUN_ERROR carries the code
		t.closeOpen(add)
		code := string(e.Code)
		if code == "" {
			code = string(backend.FailInternal)
		}
		add(Event{Type: RunError, Message: msg, Code: code})
		t.ended = true
		return out
	case backend.EvSystemGap:
		return nil // the handler re-reads the range; a gap is not the run's
	}
	// Patches, approvals, artifacts, checkpoints and anything newer: CUSTOM,
	// named after the event, with its payload as the value.
	add(Event{Type: Custom, Name: protocol.CustomName(ev.Type), Value: ev.Payload})
	return out
}

// Interrupt ends the AG-UI run with the interrupt outcome for the pending
// approvals (the run's, in order), cursor being the sequence the next
// stream resumes after.
func (t *Translator) Interrupt(pending []backend.ApprovalRequest, cursor int64) []Event {
	var out []Event
	add := func(e Event) { out = append(out, t.stamp(e, cursor)) }
	t.closeOpen(add)
	ints := make([]Interrupt, 0, len(pending))
	for _, a := range pending {
		p := protocol.PromptOf(a)
		ints = append(ints, Interrupt{ID: a.ID, Reason: ReasonApproval, Message: p.Message(), ToolCallID: a.ToolCallID,
			ResponseSchema: p.ResponseSchema(),
			Metadata:       map[string]any{"agenthub": p, "cursor": cursor}})
	}
	add(Event{Type: RunFinished, ThreadID: t.ThreadID, RunID: t.RunID, Outcome: &Outcome{Type: "interrupt", Interrupts: ints}})
	t.ended = true
	return out
}

// Fail ends the stream with RUN_ERROR for an error of AgentHub's own.
func (t *Translator) Fail(code, message string) []Event {
	var out []Event
	add := func(e Event) { out = append(out, t.stamp(e, 0)) }
	t.closeOpen(add)
	add(Event{Type: RunError, Message: message, Code: code})
	t.ended = true
	return out
}

func (t *Translator) openStep(add func(Event)) {
	if t.step == "" {
		t.step = fmt.Sprintf("step %d", t.Steps+1)
		add(Event{Type: StepStarted, StepName: t.step})
	}
}

func (t *Translator) openReasoning(id string, add func(Event)) {
	if t.reasoning[id] {
		return
	}
	t.reasoning[id] = true
	add(Event{Type: ReasoningStart, MessageID: id})
	add(Event{Type: ReasoningMsgStart, MessageID: id, Role: "reasoning"})
}

func (t *Translator) closeReasoning(id string, add func(Event)) {
	if !t.reasoning[id] {
		return
	}
	delete(t.reasoning, id)
	add(Event{Type: ReasoningMsgEnd, MessageID: id})
	add(Event{Type: ReasoningEnd, MessageID: id})
}

// closeOpen ends what is open, in a fixed order (messages sorted by id so
// the output is deterministic), so RUN_FINISHED finds nothing active.
func (t *Translator) closeOpen(add func(Event)) {
	for _, id := range protocol.SortedKeys(t.reasoning) {
		t.closeReasoning(id, add)
	}
	for _, id := range protocol.SortedKeys(t.texts) {
		delete(t.texts, id)
		add(Event{Type: TextEnd, MessageID: id})
	}
	if t.step != "" {
		add(Event{Type: StepFinished, StepName: t.step})
		t.step = ""
	}
}
