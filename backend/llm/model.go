package llm

import (
	"context"
	"encoding/json"

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
	for _, c := range resp.ToolCalls {
		out.Calls = append(out.Calls, backend.ToolCallRequest{ID: c.ID, Name: c.Name, Arguments: arguments(c)})
	}
	return out, nil
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
	out := Request{Model: m.cfg.Model, System: m.cfg.System, MaxTokens: m.cfg.MaxTokens}
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
