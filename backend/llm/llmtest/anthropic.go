package llmtest

import (
	"fmt"
	"io"
	"net/http"
)

// NewAnthropic starts a server speaking the Anthropic Messages API over SSE
// at POST /v1/messages; point the client's base URL at URL. The caller
// closes it.
func NewAnthropic(turns ...Turn) *Server {
	return newServer("/v1/messages", writeAnthropic, turns)
}

func writeAnthropic(w http.ResponseWriter, flush func(), t Turn, model string) {
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_llmtest", "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": t.InputTokens, "output_tokens": 1},
	}})
	sse(w, "ping", map[string]any{"type": "ping"})
	block := 0
	if len(t.Thinking) > 0 {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": block,
			"content_block": map[string]any{"type": "thinking", "thinking": ""}})
		for _, th := range t.Thinking {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": block,
				"delta": map[string]any{"type": "thinking_delta", "thinking": th}})
		}
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": block,
			"delta": map[string]any{"type": "signature_delta", "signature": "c2lnbmF0dXJl"}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": block})
		block++
		flush()
	}
	if len(t.Text) > 0 {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": block,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, text := range t.Text {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": block,
				"delta": map[string]any{"type": "text_delta", "text": text}})
			flush()
		}
		if t.Hang {
			return
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": block})
		block++
	}
	if t.StreamError != "" {
		sse(w, "error", map[string]any{"type": "error",
			"error": map[string]any{"type": "overloaded_error", "message": t.StreamError}})
		flush()
		return
	}
	if t.Malformed {
		_, _ = io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":\n\n")
		flush()
	}
	for _, c := range t.Calls {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": block,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, a := range c.Args {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": block,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": a}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": block})
		block++
		flush()
	}
	if t.Truncate {
		abort(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"del", flush)
	}
	stop := t.Stop
	if stop == "" {
		stop = "end_turn"
		if len(t.Calls) > 0 {
			stop = "tool_use"
		}
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": t.OutputTokens}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
	flush()
}

// AnthropicError is an Anthropic-shaped error body.
func AnthropicError(typ, message string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, typ, message)
}

// Canned failure turns of the Anthropic API.
var (
	AnthropicRateLimited = Turn{Status: http.StatusTooManyRequests, RetryAfter: "0",
		Body: AnthropicError("rate_limit_error", "Number of request tokens has exceeded your rate limit.")}
	AnthropicOverloaded = Turn{Status: 529,
		Body: AnthropicError("overloaded_error", "Overloaded")}
	AnthropicServerError = Turn{Status: http.StatusInternalServerError,
		Body: AnthropicError("api_error", "Internal server error")}
	AnthropicUnauthorized = Turn{Status: http.StatusUnauthorized,
		Body: AnthropicError("authentication_error", "invalid x-api-key")}
	AnthropicOverflow = Turn{Status: http.StatusBadRequest,
		Body: AnthropicError("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")}
)
