// Package openai is the [llm.Client] for OpenAI chat completions and every
// OpenAI-compatible server (Ollama, LM Studio, llama.cpp server, vLLM): a
// POST to {base}/chat/completions with stream=true, read as server-sent
// events, over net/http (package wire). The official SDK was dropped: it was
// most of the binary for the one endpoint used here.
//
// Invariants: it never reads OPENAI_* environment variables (an ambient
// OpenAI key must never reach whatever base URL a profile names): the key
// comes only from [Config]. It never logs the key. It never retries: that is
// [llm.Fallback]'s job, so there is one retry policy.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"agenthub/backend/llm"
	"agenthub/backend/llm/wire"
)

const provider = "openai"

// DefaultBaseURL is OpenAI's own API.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Config configures a [Client].
type Config struct {
	// BaseURL of the OpenAI-compatible API, including /v1; empty means
	// [DefaultBaseURL]. For Ollama: http://127.0.0.1:11434/v1.
	BaseURL string
	// APIKey is the resolved secret; empty sends no Authorization header
	// (local servers need none).
	APIKey     string
	HTTPClient *http.Client
	// MaxCompletionTokens sends the limit as max_completion_tokens (needed
	// by OpenAI's reasoning models) instead of max_tokens, which every
	// OpenAI-compatible local server understands. Default: true for
	// DefaultBaseURL only.
	MaxCompletionTokens *bool
}

// Client streams chat completions. It is safe for concurrent use.
type Client struct {
	endpoint        string
	endpointErr     error
	header          http.Header
	hc              *http.Client
	completionLimit bool
}

// New builds a client; it makes no request. A base URL that does not parse
// fails every Stream call with that error.
func New(cfg Config) *Client {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	c := &Client{header: http.Header{}, hc: cfg.HTTPClient}
	c.endpoint, c.endpointErr = wire.Endpoint(base, "chat/completions")
	if cfg.APIKey != "" {
		c.header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	c.completionLimit = strings.HasPrefix(base, strings.TrimSuffix(DefaultBaseURL, "/"))
	if cfg.MaxCompletionTokens != nil {
		c.completionLimit = *cfg.MaxCompletionTokens
	}
	return c
}

// Stream implements [llm.Client].
func (c *Client) Stream(ctx context.Context, req llm.Request, h llm.Handler) (llm.Response, error) {
	if c.endpointErr != nil {
		return llm.Response{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: provider, Err: c.endpointErr}
	}
	body, err := c.body(req)
	if err != nil {
		return llm.Response{}, err
	}
	x := &llm.Exchange{}
	res, err := wire.Post(ctx, c.hc, c.endpoint, c.header, body, x, provider)
	if err != nil {
		return llm.Response{}, err
	}
	defer res.Body.Close()
	acc := newAccumulator(req.Model, h)
	done := false
	err = wire.Each(ctx, res.Body, x, provider, func(ev wire.Event) error {
		if done {
			return nil // nothing follows [DONE]
		}
		if string(ev.Data) == "[DONE]" {
			done = true
			return nil
		}
		var ch chunk
		if err := json.Unmarshal(ev.Data, &ch); err != nil {
			return x.Err(provider, fmt.Errorf("chunk: %w", err))
		}
		// An error event inside a 200 stream: vLLM and OpenAI send
		// {"error":{...}}, some servers name the event "error".
		if ev.Name == "error" || (len(ch.Error) > 0 && string(ch.Error) != "null") {
			e := llm.InBand(provider, string(ev.Data))
			e.Err = errors.New("error event in the stream")
			return e
		}
		return acc.chunk(ch)
	})
	if err != nil {
		return llm.Response{}, err
	}
	return acc.result()
}

// The request body of POST /chat/completions, as far as it is used.
type (
	request struct {
		Model               string        `json:"model"`
		Messages            []message     `json:"messages"`
		Tools               []tool        `json:"tools,omitempty"`
		MaxTokens           int           `json:"max_tokens,omitempty"`
		MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
		Stream              bool          `json:"stream"`
		StreamOptions       streamOptions `json:"stream_options"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	message struct {
		Role       string     `json:"role"`
		Content    *string    `json:"content,omitempty"`
		ToolCalls  []toolCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	toolCall struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	tool struct {
		Type     string  `json:"type"`
		Function toolDef `json:"function"`
	}
	toolDef struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
)

func (c *Client) body(req llm.Request) (request, error) {
	p := request{Model: req.Model, Stream: true, StreamOptions: streamOptions{IncludeUsage: true}}
	if req.MaxTokens > 0 {
		if c.completionLimit {
			p.MaxCompletionTokens = req.MaxTokens
		} else {
			p.MaxTokens = req.MaxTokens
		}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, message{Role: "system", Content: &req.System})
	}
	for i, m := range req.Messages {
		msg, err := toMessage(m)
		if err != nil {
			return p, fmt.Errorf("openai request message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, msg)
	}
	for _, t := range req.Tools {
		schema, err := parameters(t.Schema)
		if err != nil {
			return p, fmt.Errorf("openai request tool %s: %w", t.Name, err)
		}
		p.Tools = append(p.Tools, tool{Type: "function",
			Function: toolDef{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	return p, nil
}

func toMessage(m llm.Message) (message, error) {
	text := m.Text
	switch m.Role {
	case llm.RoleUser:
		return message{Role: "user", Content: &text}, nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return message{}, errors.New("tool result without tool call id")
		}
		return message{Role: "tool", Content: &text, ToolCallID: m.ToolCallID}, nil
	case llm.RoleAssistant:
		a := message{Role: "assistant"}
		if m.Text != "" {
			a.Content = &text
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, toolCall{ID: tc.ID, Type: "function",
				Function: function{Name: tc.Name, Arguments: tc.Arguments}})
		}
		return a, nil
	}
	return message{}, fmt.Errorf("unknown role %q", m.Role)
}

// emptyParameters is the schema of a tool without arguments.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// parameters checks that a tool schema is a JSON object; it is sent as is.
func parameters(schema json.RawMessage) (json.RawMessage, error) {
	if len(schema) == 0 {
		return emptyParameters, nil
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(schema, &p); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if p == nil {
		return nil, errors.New("schema: null is not an object schema")
	}
	return schema, nil
}
