// Package anthropic is the [llm.Client] for the Anthropic Messages API over
// the official SDK github.com/anthropics/anthropic-sdk-go.
//
// Invariants: it and package openai are the only importers of a provider SDK.
// It never lets the SDK load ANTHROPIC_* environment variables or profiles
// (WithoutEnvironmentDefaults): the key comes only from [Config] and is never
// logged. Retries are left to [llm.Fallback] unless Config asks the SDK.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"agenthub/backend/llm"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

const provider = "anthropic"

// DefaultMaxTokens is sent when the request sets none: the Messages API
// requires max_tokens.
const DefaultMaxTokens = 8192

// Config configures a [Client].
type Config struct {
	// BaseURL of the API (without /v1); empty means the SDK's production URL.
	BaseURL    string
	APIKey     string // the resolved secret, sent as x-api-key
	HTTPClient *http.Client
	// MaxRetries enables the SDK's own retries; 0 (the default) leaves
	// retrying to llm.Fallback so there is one retry policy.
	MaxRetries int
}

// Client streams Messages. It is safe for concurrent use.
type Client struct {
	svc anthropic.MessageService
}

// New builds a client; it makes no request.
func New(cfg Config) *Client {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Client{svc: anthropic.NewClient(opts...).Messages}
}

// Stream implements [llm.Client].
func (c *Client) Stream(ctx context.Context, req llm.Request, h llm.Handler) (llm.Response, error) {
	params, err := params(req)
	if err != nil {
		return llm.Response{}, err
	}
	x := &llm.Exchange{}
	stream := c.svc.NewStreaming(ctx, params, option.WithMiddleware(x.Middleware))
	defer stream.Close()
	acc := newAccumulator(req.Model, h)
	for stream.Next() {
		if err := acc.event(stream.Current()); err != nil {
			return llm.Response{}, err
		}
	}
	if err := stream.Err(); err != nil {
		return llm.Response{}, classify(x, err)
	}
	return acc.result()
}

// classify recognises an SSE "error" event inside a 200 stream (the SDK
// turns it into an API error with the 200 status, or a plain error when the
// data does not parse) before the generic classification.
func classify(x *llm.Exchange, err error) error {
	var aerr *anthropic.Error
	if errors.As(err, &aerr) && aerr.StatusCode < 400 {
		e := llm.InBand(provider, aerr.RawJSON())
		e.Err = err
		return e
	}
	if strings.HasPrefix(err.Error(), "received error while streaming") {
		e := llm.InBand(provider, err.Error())
		e.Err = err
		return e
	}
	return x.Err(provider, err)
}

func params(req llm.Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: int64(req.MaxTokens)}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
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
		p.Messages = append(p.Messages, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t.Schema)
		if err != nil {
			return p, fmt.Errorf("anthropic request tool %s: %w", t.Name, err)
		}
		tp := &anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: tp})
	}
	return p, nil
}

func blocks(m llm.Message) (anthropic.MessageParamRole, []anthropic.ContentBlockParamUnion, error) {
	switch m.Role {
	case llm.RoleUser:
		return anthropic.MessageParamRoleUser, []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(m.Text)}, nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return "", nil, errors.New("tool result without tool call id")
		}
		return anthropic.MessageParamRoleUser,
			[]anthropic.ContentBlockParamUnion{anthropic.NewToolResultBlock(m.ToolCallID, m.Text, m.IsError)}, nil
	case llm.RoleAssistant:
		var bs []anthropic.ContentBlockParamUnion
		if m.Text != "" {
			bs = append(bs, anthropic.NewTextBlock(m.Text))
		}
		for _, tc := range m.ToolCalls {
			// The API needs an object; a call whose arguments did not parse
			// was answered with a tool error, so an empty input is faithful
			// enough for the transcript.
			var input any = map[string]any{}
			if a := strings.TrimSpace(tc.Arguments); strings.HasPrefix(a, "{") && json.Valid([]byte(a)) {
				input = json.RawMessage(a)
			}
			bs = append(bs, anthropic.NewToolUseBlock(tc.ID, input, tc.Name))
		}
		return anthropic.MessageParamRoleAssistant, bs, nil
	}
	return "", nil, fmt.Errorf("unknown role %q", m.Role)
}

func inputSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var s anthropic.ToolInputSchemaParam
	if len(raw) == 0 {
		s.Properties = map[string]any{}
		return s, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return s, fmt.Errorf("schema: %w", err)
	}
	s.Properties = m["properties"]
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	delete(m, "properties")
	delete(m, "required")
	delete(m, "type")
	if len(m) > 0 {
		s.ExtraFields = m
	}
	return s, nil
}
