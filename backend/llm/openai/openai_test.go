package openai_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"agenthub/backend"
	"agenthub/backend/llm"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/llm/openai"

	"github.com/google/go-cmp/cmp"
)

func start(t *testing.T, turns ...llmtest.Turn) (*llmtest.Server, *openai.Client) {
	t.Helper()
	s := llmtest.NewOpenAI(turns...)
	t.Cleanup(s.Close)
	return s, openai.New(openai.Config{BaseURL: s.URL + "/v1", HTTPClient: s.Client()})
}

func collect(evs *[]llm.Event) llm.Handler {
	return func(ev llm.Event) error {
		*evs = append(*evs, ev)
		return nil
	}
}

var userOnly = llm.Request{Model: "gpt-test", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}

func TestStreamSuccess(t *testing.T) {
	tests := []struct {
		name string
		turn llmtest.Turn
		want llm.Response
	}{
		{
			name: "text",
			turn: llmtest.Turn{Text: []string{"Hel", "lo"}, InputTokens: 12, OutputTokens: 3},
			want: llm.Response{Model: "gpt-test", Text: "Hello", StopReason: llm.StopEndTurn, RawStop: "stop",
				Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}},
		},
		{
			name: "tool calls with argument deltas",
			turn: llmtest.Turn{Text: []string{"Reading."}, Calls: []llmtest.Call{
				{ID: "call_1", Name: "read_file", Args: []string{`{"pa`, `th":"a.go"}`}},
				{ID: "call_2", Name: "list_dir"},
			}, InputTokens: 40, OutputTokens: 20},
			want: llm.Response{Model: "gpt-test", Text: "Reading.", StopReason: llm.StopToolUse, RawStop: "tool_calls",
				Usage: llm.Usage{InputTokens: 40, OutputTokens: 20},
				ToolCalls: []llm.ToolCall{
					{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`, ArgumentsValid: true},
					{ID: "call_2", Name: "list_dir", Arguments: `{}`, ArgumentsValid: true},
				}},
		},
		{
			name: "invalid tool JSON is passed through flagged",
			turn: llmtest.Turn{Calls: []llmtest.Call{{ID: "call_9", Name: "edit_file", Args: []string{`{"path":`, `"x`}}}},
			want: llm.Response{Model: "gpt-test", StopReason: llm.StopToolUse, RawStop: "tool_calls",
				ToolCalls: []llm.ToolCall{{ID: "call_9", Name: "edit_file", Arguments: `{"path":"x`, ArgumentsValid: false}}},
		},
		{
			name: "length",
			turn: llmtest.Turn{Text: []string{"cut"}, Stop: "length"},
			want: llm.Response{Model: "gpt-test", Text: "cut", StopReason: llm.StopMaxTokens, RawStop: "length"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := start(t, tt.turn)
			var evs []llm.Event
			got, err := c.Stream(t.Context(), userOnly, collect(&evs))
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("response (-want +got):\n%s", d)
			}
			if d := cmp.Diff(replay(tt.turn), deltas(evs)); d != "" {
				t.Errorf("deltas (-want +got):\n%s", d)
			}
		})
	}
}

// replay is what the handler must have seen of a turn's text and arguments.
func replay(t llmtest.Turn) []string {
	var out []string
	for _, s := range t.Text {
		out = append(out, "text:"+s)
	}
	for _, c := range t.Calls {
		out = append(out, "start:"+c.ID+":"+c.Name)
		for _, a := range c.Args {
			out = append(out, "args:"+a)
		}
	}
	for _, c := range t.Calls {
		out = append(out, "end:"+c.ID)
	}
	return out
}

func deltas(evs []llm.Event) []string {
	var out []string
	for _, ev := range evs {
		switch ev.Kind {
		case llm.EventText:
			out = append(out, "text:"+ev.Text)
		case llm.EventToolStart:
			out = append(out, "start:"+ev.ID+":"+ev.Name)
		case llm.EventToolDelta:
			out = append(out, "args:"+ev.Text)
		case llm.EventToolEnd:
			out = append(out, "end:"+ev.Call.ID)
		}
	}
	return out
}

func TestStreamFailures(t *testing.T) {
	tests := []struct {
		name string
		turn llmtest.Turn
		want error
		code backend.FailureCode
	}{
		{"rate limited", llmtest.OpenAIRateLimited, llm.ErrRateLimited, backend.FailRuntimeUnavailable},
		{"server error", llmtest.OpenAIServerError, llm.ErrServer, backend.FailRuntimeUnavailable},
		{"unauthorized", llmtest.OpenAIUnauthorized, llm.ErrAuth, backend.FailRuntimeUnavailable},
		{"openai overflow", llmtest.OpenAIOverflow, llm.ErrContextOverflow, backend.FailContextOverflow},
		{"llama.cpp overflow", llmtest.LlamaCppOverflow, llm.ErrContextOverflow, backend.FailContextOverflow},
		{"ollama overflow", llmtest.OllamaOverflow, llm.ErrContextOverflow, backend.FailContextOverflow},
		{"model not found", llmtest.Turn{Status: http.StatusNotFound,
			Body: llmtest.OpenAIError("invalid_request_error", "model_not_found", "The model `x` does not exist")},
			llm.ErrModelUnavailable, backend.FailRuntimeUnavailable},
		{"malformed SSE", llmtest.Turn{Text: []string{"a"}, Malformed: true}, llm.ErrMalformedStream, backend.FailSchemaValidation},
		{"truncated stream", llmtest.Turn{Text: []string{"a"}, Truncate: true}, llm.ErrTruncatedStream, backend.FailRuntimeUnavailable},
		{"truncated in tool call", llmtest.Turn{Calls: []llmtest.Call{{ID: "c", Name: "n", Args: []string{`{"a"`}}}, Truncate: true},
			llm.ErrTruncatedStream, backend.FailRuntimeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := start(t, tt.turn)
			_, err := c.Stream(t.Context(), userOnly, func(llm.Event) error { return nil })
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if f := llm.Failure(err); f == nil || f.Code != tt.code {
				t.Errorf("Failure(err) = %+v, want code %s", f, tt.code)
			}
		})
	}
}

func TestUnreachableIsNetworkError(t *testing.T) {
	s := llmtest.NewOpenAI()
	url := s.URL
	s.Close()
	c := openai.New(openai.Config{BaseURL: url + "/v1"})
	_, err := c.Stream(t.Context(), userOnly, func(llm.Event) error { return nil })
	if !errors.Is(err, llm.ErrNetwork) {
		t.Fatalf("err = %v, want ErrNetwork", err)
	}
}

func TestHandlerErrorStopsStream(t *testing.T) {
	_, c := start(t, llmtest.Turn{Text: []string{"a", "b", "c"}})
	stop := errors.New("stop here")
	n := 0
	_, err := c.Stream(t.Context(), userOnly, func(llm.Event) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("err = %v after %d events, want the handler's error after 1", err, n)
	}
}

func TestRequestWireFormat(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-ambient-must-not-leak")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	tests := []struct {
		name, key, wantAuth string
	}{
		{"local server without key", "", ""},
		{"with key", "sk-test-123", "Bearer sk-test-123"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewOpenAI(llmtest.Turn{Text: []string{"ok"}})
			t.Cleanup(s.Close)
			c := openai.New(openai.Config{BaseURL: s.URL + "/v1", APIKey: tt.key})
			req := llm.Request{
				Model: "qwen3", System: "be brief", MaxTokens: 256,
				Messages: []llm.Message{
					{Role: llm.RoleUser, Text: "read a.go"},
					{Role: llm.RoleAssistant, Text: "ok", ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
					{Role: llm.RoleTool, ToolCallID: "call_1", Text: "package a"},
				},
				Tools: []llm.Tool{{Name: "read_file", Description: "Read a file.",
					Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}},
			}
			if _, err := c.Stream(t.Context(), req, func(llm.Event) error { return nil }); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			got := s.Requests()
			if len(got) != 1 {
				t.Fatalf("server saw %d requests, want 1", len(got))
			}
			if a := got[0].Header.Get("Authorization"); a != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", a, tt.wantAuth)
			}
			body := got[0].Body
			want := map[string]any{
				"model": "qwen3", "stream": true, "max_tokens": float64(256),
				"stream_options": map[string]any{"include_usage": true},
				"messages": []any{
					map[string]any{"role": "system", "content": "be brief"},
					map[string]any{"role": "user", "content": "read a.go"},
					map[string]any{"role": "assistant", "content": "ok", "tool_calls": []any{map[string]any{
						"id": "call_1", "type": "function",
						"function": map[string]any{"name": "read_file", "arguments": `{"path":"a.go"}`}}}},
					map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "package a"},
				},
				"tools": []any{map[string]any{"type": "function", "function": map[string]any{
					"name": "read_file", "description": "Read a file.",
					"parameters": map[string]any{"type": "object", "required": []any{"path"},
						"properties": map[string]any{"path": map[string]any{"type": "string"}}}}}},
			}
			if d := cmp.Diff(want, body); d != "" {
				t.Errorf("request body (-want +got):\n%s", d)
			}
		})
	}
}

// TestStreamShapesOfCompatibleServers: shapes the scripted server does not
// send but OpenAI-compatible servers do: keep-alive comments, "usage": null
// on every chunk, a named "error" event, anything after [DONE].
func TestStreamShapesOfCompatibleServers(t *testing.T) {
	tests := []struct {
		name, body string
		want       error
		text       string
	}{
		{"comments, null usage, junk after DONE",
			": keep-alive\n\ndata: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}],\"usage\":null}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\ndata: [DONE]\n\ndata: not json\n\n",
			nil, "hi"},
		{"named error event", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\nevent: error\ndata: {\"message\":\"the request exceeds the available context size\"}\n\n",
			llm.ErrContextOverflow, ""},
		{"error object with a 200", "data: {\"error\":{\"message\":\"upstream failed\",\"type\":\"server_error\"}}\n\n",
			llm.ErrServer, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tt.body)
			}))
			defer s.Close()
			c := openai.New(openai.Config{BaseURL: s.URL + "/v1", HTTPClient: s.Client()})
			got, err := c.Stream(t.Context(), userOnly, func(llm.Event) error { return nil })
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
				return
			}
			if err != nil || got.Text != tt.text || got.StopReason != llm.StopEndTurn {
				t.Fatalf("Stream = %+v, %v; want text %q, end_turn", got, err, tt.text)
			}
		})
	}
}
