package anthropic_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"agenthub/backend"
	"agenthub/backend/llm"
	"agenthub/backend/llm/anthropic"
	"agenthub/backend/llm/llmtest"

	"github.com/google/go-cmp/cmp"
)

func start(t *testing.T, turns ...llmtest.Turn) (*llmtest.Server, *anthropic.Client) {
	t.Helper()
	s := llmtest.NewAnthropic(turns...)
	t.Cleanup(s.Close)
	return s, anthropic.New(anthropic.Config{BaseURL: s.URL, HTTPClient: s.Client()})
}

var userOnly = llm.Request{Model: "claude-test", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}

func TestStreamSuccess(t *testing.T) {
	tests := []struct {
		name string
		turn llmtest.Turn
		want llm.Response
	}{
		{
			name: "text",
			turn: llmtest.Turn{Text: []string{"Hel", "lo"}, InputTokens: 12, OutputTokens: 3},
			want: llm.Response{Model: "claude-test", Text: "Hello", StopReason: llm.StopEndTurn, RawStop: "end_turn",
				Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}},
		},
		{
			name: "thinking is not text",
			turn: llmtest.Turn{Thinking: []string{"Let me ", "think."}, Text: []string{"Answer."}, InputTokens: 5, OutputTokens: 9},
			want: llm.Response{Model: "claude-test", Text: "Answer.", StopReason: llm.StopEndTurn, RawStop: "end_turn",
				Usage: llm.Usage{InputTokens: 5, OutputTokens: 9}},
		},
		{
			name: "tool use with input_json_delta",
			turn: llmtest.Turn{Text: []string{"Reading."}, Calls: []llmtest.Call{
				{ID: "toolu_1", Name: "read_file", Args: []string{`{"pa`, `th":"a.go"}`}},
				{ID: "toolu_2", Name: "list_dir"},
			}, InputTokens: 40, OutputTokens: 20},
			want: llm.Response{Model: "claude-test", Text: "Reading.", StopReason: llm.StopToolUse, RawStop: "tool_use",
				Usage: llm.Usage{InputTokens: 40, OutputTokens: 20},
				ToolCalls: []llm.ToolCall{
					{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"a.go"}`, ArgumentsValid: true},
					{ID: "toolu_2", Name: "list_dir", Arguments: `{}`, ArgumentsValid: true},
				}},
		},
		{
			name: "invalid tool JSON is passed through flagged",
			turn: llmtest.Turn{Calls: []llmtest.Call{{ID: "toolu_9", Name: "edit_file", Args: []string{`{"path":`, `"x`}}}},
			want: llm.Response{Model: "claude-test", StopReason: llm.StopToolUse, RawStop: "tool_use",
				ToolCalls: []llm.ToolCall{{ID: "toolu_9", Name: "edit_file", Arguments: `{"path":"x`, ArgumentsValid: false}}},
		},
		{
			name: "max_tokens",
			turn: llmtest.Turn{Text: []string{"cut"}, Stop: "max_tokens"},
			want: llm.Response{Model: "claude-test", Text: "cut", StopReason: llm.StopMaxTokens, RawStop: "max_tokens"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := start(t, tt.turn)
			var got []string
			var last llm.Usage
			resp, err := c.Stream(t.Context(), userOnly, func(ev llm.Event) error {
				switch ev.Kind {
				case llm.EventText:
					got = append(got, "text:"+ev.Text)
				case llm.EventToolStart:
					got = append(got, "start:"+ev.ID+":"+ev.Name)
				case llm.EventToolDelta:
					got = append(got, "args:"+ev.Text)
				case llm.EventToolEnd:
					got = append(got, "end:"+ev.Call.ID)
				case llm.EventUsage:
					last = *ev.Usage
				}
				return nil
			})
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if d := cmp.Diff(tt.want, resp); d != "" {
				t.Errorf("response (-want +got):\n%s", d)
			}
			// Anthropic closes each tool_use block before the next starts.
			var want []string
			for _, s := range tt.turn.Text {
				want = append(want, "text:"+s)
			}
			for _, c := range tt.turn.Calls {
				want = append(want, "start:"+c.ID+":"+c.Name)
				for _, a := range c.Args {
					want = append(want, "args:"+a)
				}
				want = append(want, "end:"+c.ID)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("deltas (-want +got):\n%s", d)
			}
			if last != tt.want.Usage {
				t.Errorf("last usage event = %+v, want %+v", last, tt.want.Usage)
			}
		})
	}
}

func TestStreamFailures(t *testing.T) {
	tests := []struct {
		name string
		turn llmtest.Turn
		want error
		code backend.FailureCode
	}{
		{"rate limited", llmtest.AnthropicRateLimited, llm.ErrRateLimited, backend.FailRuntimeUnavailable},
		{"overloaded 529", llmtest.AnthropicOverloaded, llm.ErrServer, backend.FailRuntimeUnavailable},
		{"server error", llmtest.AnthropicServerError, llm.ErrServer, backend.FailRuntimeUnavailable},
		{"unauthorized", llmtest.AnthropicUnauthorized, llm.ErrAuth, backend.FailRuntimeUnavailable},
		{"credit balance", llmtest.Turn{Status: http.StatusTooManyRequests,
			Body: llmtest.AnthropicError("rate_limit_error", "Your credit balance is too low")}, llm.ErrQuota, backend.FailRuntimeUnavailable},
		{"overflow", llmtest.AnthropicOverflow, llm.ErrContextOverflow, backend.FailContextOverflow},
		{"model not found", llmtest.Turn{Status: http.StatusNotFound,
			Body: llmtest.AnthropicError("not_found_error", "model: claude-nope")}, llm.ErrModelUnavailable, backend.FailRuntimeUnavailable},
		{"in-band overloaded", llmtest.Turn{Text: []string{"a"}, StreamError: "Overloaded"}, llm.ErrServer, backend.FailRuntimeUnavailable},
		{"in-band overflow", llmtest.Turn{StreamError: "prompt is too long: 201000 tokens > 200000 maximum"},
			llm.ErrContextOverflow, backend.FailContextOverflow},
		{"malformed SSE", llmtest.Turn{Text: []string{"a"}, Malformed: true}, llm.ErrMalformedStream, backend.FailSchemaValidation},
		{"truncated stream", llmtest.Turn{Text: []string{"a"}, Truncate: true}, llm.ErrTruncatedStream, backend.FailRuntimeUnavailable},
		{"truncated after tool call", llmtest.Turn{Calls: []llmtest.Call{{ID: "c", Name: "n", Args: []string{`{"a"`}}}, Truncate: true},
			llm.ErrTruncatedStream, backend.FailRuntimeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := start(t, tt.turn)
			_, err := c.Stream(t.Context(), userOnly, func(llm.Event) error { return nil })
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if f := llm.Failure(err); f == nil || f.Code != tt.code {
				t.Errorf("Failure(err) = %+v, want code %s", f, tt.code)
			}
			if n := len(s.Requests()); n != 1 {
				t.Errorf("%d requests, want 1: the client never retries on its own", n)
			}
		})
	}
}

func TestUnreachableIsNetworkError(t *testing.T) {
	s := llmtest.NewAnthropic()
	url := s.URL
	s.Close()
	c := anthropic.New(anthropic.Config{BaseURL: url})
	_, err := c.Stream(t.Context(), userOnly, func(llm.Event) error { return nil })
	if !errors.Is(err, llm.ErrNetwork) {
		t.Fatalf("err = %v, want ErrNetwork", err)
	}
}

// TestCancelledIsNotAProviderFailure: a run cancelled while the model is
// streaming ends with the context's error, which Failure leaves to the
// engine.
func TestCancelledIsNotAProviderFailure(t *testing.T) {
	_, c := start(t, llmtest.Turn{Text: []string{"a"}, Hang: true})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err := c.Stream(ctx, userOnly, func(ev llm.Event) error {
		if ev.Kind == llm.EventText {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if f := llm.Failure(err); f != nil {
		t.Errorf("Failure(cancel) = %+v, want nil", f)
	}
}

func TestRequestWireFormat(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-ambient-must-not-leak")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	tests := []struct {
		name, key string
	}{
		{"without key", ""},
		{"with key", "sk-ant-test-123"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewAnthropic(llmtest.Turn{Text: []string{"ok"}})
			t.Cleanup(s.Close)
			c := anthropic.New(anthropic.Config{BaseURL: s.URL, APIKey: tt.key})
			req := llm.Request{
				Model: "claude-test", System: "be brief",
				Messages: []llm.Message{
					{Role: llm.RoleUser, Text: "read a.go and b.go"},
					{Role: llm.RoleAssistant, Text: "ok", ToolCalls: []llm.ToolCall{
						{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"a.go"}`},
						{ID: "toolu_2", Name: "read_file", Arguments: `{"path":`},
					}},
					{Role: llm.RoleTool, ToolCallID: "toolu_1", Text: "package a"},
					{Role: llm.RoleTool, ToolCallID: "toolu_2", Text: "bad arguments", IsError: true},
				},
				Tools: []llm.Tool{
					{Name: "read_file", Description: "Read a file.",
						Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
					{Name: "list_dir"},
				},
			}
			if _, err := c.Stream(t.Context(), req, func(llm.Event) error { return nil }); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			got := s.Requests()
			if len(got) != 1 {
				t.Fatalf("server saw %d requests, want 1", len(got))
			}
			hdr := got[0].Header
			if k := hdr.Get("X-Api-Key"); k != tt.key {
				t.Errorf("x-api-key = %q, want %q", k, tt.key)
			}
			if a := hdr.Get("Authorization"); a != "" {
				t.Errorf("Authorization = %q, want none", a)
			}
			if v := hdr.Get("Anthropic-Version"); v != anthropic.Version {
				t.Errorf("anthropic-version = %q, want %q", v, anthropic.Version)
			}
			if ua := hdr.Get("User-Agent"); ua == "" {
				t.Errorf("no User-Agent")
			}
			text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
			want := map[string]any{
				"model": "claude-test", "stream": true, "max_tokens": float64(anthropic.DefaultMaxTokens),
				"system": []any{text("be brief")},
				"messages": []any{
					map[string]any{"role": "user", "content": []any{text("read a.go and b.go")}},
					map[string]any{"role": "assistant", "content": []any{text("ok"),
						map[string]any{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": map[string]any{"path": "a.go"}},
						map[string]any{"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": map[string]any{}},
					}},
					map[string]any{"role": "user", "content": []any{
						map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{text("package a")}, "is_error": false},
						map[string]any{"type": "tool_result", "tool_use_id": "toolu_2", "content": []any{text("bad arguments")}, "is_error": true},
					}},
				},
				"tools": []any{
					map[string]any{"name": "read_file", "description": "Read a file.", "input_schema": map[string]any{
						"type": "object", "required": []any{"path"}, "additionalProperties": false,
						"properties": map[string]any{"path": map[string]any{"type": "string"}}}},
					map[string]any{"name": "list_dir", "input_schema": map[string]any{"type": "object", "properties": map[string]any{}}},
				},
			}
			if d := cmp.Diff(want, got[0].Body); d != "" {
				t.Errorf("request body (-want +got):\n%s", d)
			}
		})
	}
}
