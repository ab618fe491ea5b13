// Package anthropic is the [llm.Client] for the Anthropic Messages API: a
// POST to {base}/v1/messages with stream=true, read as server-sent events,
// over net/http (package wire). The official SDK was dropped: it was most of
// the binary for the one endpoint used here.
//
// Invariants: it never reads ANTHROPIC_* environment variables or SDK
// profiles: the key comes only from [Config], is sent as x-api-key and is
// never logged. It never retries: that is [llm.Fallback]'s job, so there is
// one retry policy.
package anthropic

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

const provider = "anthropic"

// DefaultBaseURL is Anthropic's own API (without /v1).
const DefaultBaseURL = "https://api.anthropic.com/"

// Version is the anthropic-version header: the Messages API version whose
// wire format this package speaks.
const Version = "2023-06-01"

// DefaultMaxTokens is sent when the request sets none: the Messages API
// requires max_tokens.
const DefaultMaxTokens = 8192

// Config configures a [Client].
type Config struct {
	// BaseURL of the API (without /v1); empty means [DefaultBaseURL].
	BaseURL    string
	APIKey     string // the resolved secret, sent as x-api-key
	HTTPClient *http.Client
}

// Client streams Messages. It is safe for concurrent use.
type Client struct {
	endpoint    string
	endpointErr error
	header      http.Header
	hc          *http.Client
}

// New builds a client; it makes no request. A base URL that does not parse
// fails every Stream call with that error.
func New(cfg Config) *Client {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	c := &Client{header: http.Header{}, hc: cfg.HTTPClient}
	c.endpoint, c.endpointErr = wire.Endpoint(base, "v1/messages")
	c.header.Set("anthropic-version", Version)
	if cfg.APIKey != "" {
		c.header.Set("X-Api-Key", cfg.APIKey)
	}
	return c
}

// Stream implements [llm.Client].
func (c *Client) Stream(ctx context.Context, req llm.Request, h llm.Handler) (llm.Response, error) {
	if c.endpointErr != nil {
		return llm.Response{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: provider, Err: c.endpointErr}
	}
	body, err := params(req)
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
	err = wire.Each(ctx, res.Body, x, provider, func(ev wire.Event) error {
		switch ev.Name {
		case "message_start", "content_block_start", "content_block_delta", "content_block_stop",
			"message_delta", "message_stop":
		case "error":
			// An error inside a 200 stream (overloaded, or an overflow
			// found late): classified from its text.
			e := llm.InBand(provider, string(ev.Data))
			e.Err = errors.New("error event in the stream")
			return e
		default:
			return nil // ping, and event kinds newer than this client
		}
		var se streamEvent
		if err := json.Unmarshal(ev.Data, &se); err != nil {
			return x.Err(provider, fmt.Errorf("%s event: %w", ev.Name, err))
		}
		se.Type = ev.Name
		return acc.event(se)
	})
	if err != nil {
		return llm.Response{}, err
	}
	return acc.result()
}

// The request body of POST /v1/messages, as far as it is used.
type (
	request struct {
		Model     string      `json:"model"`
		MaxTokens int         `json:"max_tokens"`
		System    []textBlock `json:"system,omitempty"`
		Messages  []message   `json:"messages"`
		Tools     []tool      `json:"tools,omitempty"`
		Stream    bool        `json:"stream"`
	}
	textBlock struct {
		Type string `json:"type"` // "text"
		Text string `json:"text"`
	}
	message struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	}
	// block is a text, tool_use or tool_result content block.
	block struct {
		Type      string          `json:"type"`
		Text      *string         `json:"text,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   []textBlock     `json:"content,omitempty"`
		IsError   *bool           `json:"is_error,omitempty"`
	}
	tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
)

func params(req llm.Request) (request, error) {
	p := request{Model: req.Model, MaxTokens: req.MaxTokens, Stream: true}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	if req.System != "" {
		p.System = []textBlock{{Type: "text", Text: req.System}}
	}
	for i, m := range req.Messages {
		role, blocks, err := blocks(m)
		if err != nil {
			return p, fmt.Errorf("anthropic request message %d: %w", i, err)
		}
		// The API wants user and assistant to alternate: consecutive tool
		// results (and a user text after them) share one user message.
		if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == role {
			p.Messages[n-1].Content = append(p.Messages[n-1].Content, blocks...)
			continue
		}
		p.Messages = append(p.Messages, message{Role: role, Content: blocks})
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t.Schema)
		if err != nil {
			return p, fmt.Errorf("anthropic request tool %s: %w", t.Name, err)
		}
		p.Tools = append(p.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return p, nil
}

func text(s string) block { return block{Type: "text", Text: &s} }

func blocks(m llm.Message) (string, []block, error) {
	switch m.Role {
	case llm.RoleUser:
		return "user", []block{text(m.Text)}, nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return "", nil, errors.New("tool result without tool call id")
		}
		isErr := m.IsError
		return "user", []block{{Type: "tool_result", ToolUseID: m.ToolCallID,
			Content: []textBlock{{Type: "text", Text: m.Text}}, IsError: &isErr}}, nil
	case llm.RoleAssistant:
		var bs []block
		if m.Text != "" {
			bs = append(bs, text(m.Text))
		}
		for _, tc := range m.ToolCalls {
			// The API needs an object; a call whose arguments did not parse
			// was answered with a tool error, so an empty input is faithful
			// enough for the transcript.
			input := json.RawMessage(`{}`)
			if a := strings.TrimSpace(tc.Arguments); strings.HasPrefix(a, "{") && json.Valid([]byte(a)) {
				input = json.RawMessage(a)
			}
			bs = append(bs, block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input})
		}
		return "assistant", bs, nil
	}
	return "", nil, fmt.Errorf("unknown role %q", m.Role)
}

// inputSchema makes a tool schema an Anthropic input_schema: an object
// schema with type "object" and properties always present.
func inputSchema(raw json.RawMessage) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		if m == nil {
			m = map[string]json.RawMessage{}
		}
	}
	m["type"] = json.RawMessage(`"object"`)
	if p, ok := m["properties"]; !ok || string(p) == "null" {
		m["properties"] = json.RawMessage(`{}`)
	}
	if r, ok := m["required"]; ok {
		var names []string
		if json.Unmarshal(r, &names) != nil {
			delete(m, "required") // not a list of names: the SDK dropped it too
		}
	}
	return json.Marshal(m)
}
