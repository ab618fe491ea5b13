package llmtest

import (
	"fmt"
	"io"
	"net/http"
)

// NewOpenAI starts a server speaking OpenAI chat completions over SSE at
// POST /v1/chat/completions; point the client's base URL at URL+"/v1".
// The caller closes it.
func NewOpenAI(turns ...Turn) *Server {
	return newServer("/v1/chat/completions", writeOpenAI, turns)
}

func openAIChunk(model string, delta map[string]any, finish any) map[string]any {
	return map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1, "model": model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}
}

func writeOpenAI(w http.ResponseWriter, flush func(), t Turn, model string) {
	sse(w, "", openAIChunk(model, map[string]any{"role": "assistant", "content": ""}, nil))
	for _, text := range t.Text {
		sse(w, "", openAIChunk(model, map[string]any{"content": text}, nil))
		flush()
	}
	if t.Malformed {
		_, _ = io.WriteString(w, "data: {\"id\":\"chatcmpl-llmtest\",\"choices\":[{\"delta\":{\"content\":\"x\"\n\n")
		flush()
	}
	if t.Hang {
		return
	}
	if t.StreamError != "" {
		sse(w, "", map[string]any{"error": map[string]any{"message": t.StreamError, "type": "server_error"}})
		flush()
		return
	}
	for i, c := range t.Calls {
		start := map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}
		sse(w, "", openAIChunk(model, map[string]any{"tool_calls": []any{start}}, nil))
		for _, a := range c.Args {
			d := map[string]any{"index": i, "function": map[string]any{"arguments": a}}
			sse(w, "", openAIChunk(model, map[string]any{"tool_calls": []any{d}}, nil))
		}
		flush()
	}
	if t.Truncate {
		abort(w, `data: {"id":"chatcmpl-llmtest","object":"chat.completion.chunk","choi`, flush)
	}
	stop := t.Stop
	if stop == "" {
		stop = "stop"
		if len(t.Calls) > 0 {
			stop = "tool_calls"
		}
	}
	sse(w, "", openAIChunk(model, map[string]any{}, stop))
	sse(w, "", map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1, "model": model,
		"choices": []any{},
		"usage": map[string]any{"prompt_tokens": t.InputTokens, "completion_tokens": t.OutputTokens,
			"total_tokens": t.InputTokens + t.OutputTokens},
	})
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	flush()
}

// OpenAIError is an OpenAI-shaped error body.
func OpenAIError(typ, code, message string) string {
	return fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":%q}}`, message, typ, code)
}

// Canned failure turns of OpenAI-compatible servers.
var (
	OpenAIRateLimited = Turn{Status: http.StatusTooManyRequests, RetryAfter: "0",
		Body: OpenAIError("requests", "rate_limit_exceeded", "Rate limit reached for requests")}
	OpenAIServerError = Turn{Status: http.StatusInternalServerError,
		Body: OpenAIError("server_error", "", "The server had an error while processing your request.")}
	OpenAIUnauthorized = Turn{Status: http.StatusUnauthorized,
		Body: OpenAIError("invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-te**********1234.")}
	OpenAIOverflow = Turn{Status: http.StatusBadRequest,
		Body: OpenAIError("invalid_request_error", "context_length_exceeded",
			"This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens. Please reduce the length of the messages.")}
	// LlamaCppOverflow is llama.cpp server's overflow error.
	LlamaCppOverflow = Turn{Status: http.StatusBadRequest,
		Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}`}
	// OllamaOverflow is an Ollama-style error whose "error" is a plain string.
	OllamaOverflow = Turn{Status: http.StatusBadRequest,
		Body: `{"error":"the input length exceeds the context length"}`}
)
