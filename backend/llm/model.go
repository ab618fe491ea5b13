package llm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"

	"agenthub/backend"
)

// ModelConfig is what a profile fixes for every turn of a run.
type ModelConfig struct {
	Model     string
	System    string
	MaxTokens int
	// ContextWindow is the model's context window in tokens, from the
	// profile; 0 means unknown, and the engine then relies on the provider's
	// overflow error alone (run-model.md CX3, CX4).
	ContextWindow int
}

// Model adapts a [Client] to the engine's backend.Model: it translates the
// transcript and tool specs into a [Request], forwards text deltas, and maps
// provider failures to run failure codes ([Failure]).
type Model struct {
	client Client
	cfg    ModelConfig
}

// AsModel returns the engine-facing model of c.
func AsModel(c Client, cfg ModelConfig) *Model { return &Model{client: c, cfg: cfg} }

// ContextWindow reports the window and the room reserved for the answer,
// for the engine's context precheck (CX3).
func (m *Model) ContextWindow() (window, reserve int) { return m.cfg.ContextWindow, m.cfg.MaxTokens }

// Stream implements backend.Model.
func (m *Model) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	resp, err := m.client.Stream(ctx, m.request(req), func(ev Event) error {
		if ev.Kind == EventText && ev.Text != "" {
			delta(ev.Text)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return backend.ModelResponse{}, ctx.Err()
		}
		if f := Failure(err); f != nil {
			return backend.ModelResponse{}, f
		}
		return backend.ModelResponse{}, err
	}
	out := backend.ModelResponse{Text: resp.Text,
		Usage: backend.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens}}
	seen := usedCallIDs(req.Messages)
	for _, c := range resp.ToolCalls {
		out.Calls = append(out.Calls, backend.ToolCallRequest{ID: uniqueCallID(c.ID, seen), Name: c.Name,
			Arguments: arguments(c)})
	}
	return out, nil
}

// usedCallIDs are the call ids of the conversation so far.
func usedCallIDs(msgs []backend.Message) map[string]bool {
	seen := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.Calls {
			seen[c.ID] = true
		}
	}
	return seen
}

// uniqueCallID keeps the provider's id unless it is empty or already used
// in this conversation: some OpenAI-compatible servers send no id, or
// number calls per turn ("call_0" every time), and a call id must be unique
// within a run (its result is paired by it). The replacement is what the
// provider sees in later turns too, so the pairing holds on both sides.
func uniqueCallID(id string, seen map[string]bool) string {
	if id != "" && !seen[id] && validCallID(id) {
		seen[id] = true
		return id
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	fresh := "call_" + hex.EncodeToString(b[:])
	seen[fresh] = true
	return fresh
}

// validCallID accepts what both wire formats accept as a call id.
func validCallID(id string) bool {
	if len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// arguments keeps valid JSON as it came (TC2); invalid JSON travels as a
// JSON string, so it can be stored and shown, and the tool's argument check
// turns it into a tool error the model sees.
func arguments(c ToolCall) json.RawMessage {
	if c.ArgumentsValid {
		return json.RawMessage(c.Arguments)
	}
	b, _ := json.Marshal(c.Arguments)
	return b
}

func (m *Model) request(req backend.ModelRequest) Request {
	out := Request{Model: m.cfg.Model, System: withContext(m.cfg.System, req.Context), MaxTokens: m.cfg.MaxTokens}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, Tool{Name: t.Name, Description: t.Description, Schema: t.Schema})
	}
	for _, msg := range req.Messages {
		if lm, ok := message(msg); ok {
			out.Messages = append(out.Messages, lm)
		}
	}
	return out
}

// withContext appends the hooks' context for this request to the system
// text, each part separated by a blank line.
func withContext(system string, extra []string) string {
	parts := []string{}
	if strings.TrimSpace(system) != "" {
		parts = append(parts, system)
	}
	for _, c := range extra {
		if strings.TrimSpace(c) != "" {
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, "\n\n")
}

// message maps one transcript entry; system entries travel in
// Request.System instead.
func message(m backend.Message) (Message, bool) {
	switch m.Role {
	case backend.RoleUser:
		return Message{Role: RoleUser, Text: m.Text}, true
	case backend.RoleTool:
		return Message{Role: RoleTool, Text: m.Text, ToolCallID: m.ToolCallID, IsError: m.IsError}, true
	case backend.RoleAssistant:
		lm := Message{Role: RoleAssistant, Text: m.Text}
		for _, c := range m.Calls {
			lm.ToolCalls = append(lm.ToolCalls, NewToolCall(c.ID, c.Name, string(c.Arguments)))
		}
		return lm, true
	}
	return Message{}, false
}

var _ backend.Model = (*Model)(nil)
