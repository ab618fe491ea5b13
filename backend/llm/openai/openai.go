// Package openai is the [llm.Client] for OpenAI chat completions and every
// OpenAI-compatible server (Ollama, LM Studio, llama.cpp server, vLLM),
// over the official SDK github.com/openai/openai-go/v3.
//
// Invariants: it and package anthropic are the only importers of a provider
// SDK. It never reads OPENAI_* environment variables (the SDK's defaults would
// send an ambient OpenAI key to whatever base URL a profile names): the key
// comes only from [Config]. It never logs the key. Retries are left to
// [llm.Fallback]; the SDK's own retries are off unless Config asks for them.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"agenthub/backend/llm"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
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
	// MaxRetries enables the SDK's own retries; 0 (the default) leaves
	// retrying to llm.Fallback so there is one retry policy.
	MaxRetries int
	// MaxCompletionTokens sends the limit as max_completion_tokens (needed
	// by OpenAI's reasoning models) instead of max_tokens, which every
	// OpenAI-compatible local server understands. Default: true for
	// DefaultBaseURL only.
	MaxCompletionTokens *bool
}

// Client streams chat completions. It is safe for concurrent use.
type Client struct {
	svc             openai.ChatCompletionService
	completionLimit bool
}

// New builds a client; it makes no request.
func New(cfg Config) *Client {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithBaseURL(base),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	limit := strings.HasPrefix(base, strings.TrimSuffix(DefaultBaseURL, "/"))
	if cfg.MaxCompletionTokens != nil {
		limit = *cfg.MaxCompletionTokens
	}
	// A bare service, not openai.NewClient: NewClient layers OPENAI_*
	// environment defaults under our options.
	return &Client{svc: openai.NewChatCompletionService(opts...), completionLimit: limit}
}

// Stream implements [llm.Client].
func (c *Client) Stream(ctx context.Context, req llm.Request, h llm.Handler) (llm.Response, error) {
	params, err := c.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	x := &llm.Exchange{}
	stream := c.svc.NewStreaming(ctx, params, option.WithMiddleware(x.Middleware))
	defer stream.Close()
	acc := newAccumulator(req.Model, h)
	for stream.Next() {
		if err := acc.chunk(stream.Current()); err != nil {
			return llm.Response{}, err
		}
	}
	if err := stream.Err(); err != nil {
		var se *ssestream.StreamError
		if errors.As(err, &se) {
			e := llm.InBand(provider, string(se.Event.Data))
			e.Err = err
			return llm.Response{}, e
		}
		return llm.Response{}, x.Err(provider, err)
	}
	return acc.result()
}

func (c *Client) params(req llm.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		if c.completionLimit {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		msg, err := message(m)
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
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
	}
	return p, nil
}

func message(m llm.Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleUser:
		return openai.UserMessage(m.Text), nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, errors.New("tool result without tool call id")
		}
		return openai.ToolMessage(m.Text, m.ToolCallID), nil
	case llm.RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Text != "" {
			a.Content.OfString = openai.String(m.Text)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
}

func parameters(schema json.RawMessage) (shared.FunctionParameters, error) {
	if len(schema) == 0 {
		return shared.FunctionParameters{"type": "object", "properties": map[string]any{}}, nil
	}
	var p shared.FunctionParameters
	if err := json.Unmarshal(schema, &p); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return p, nil
}
