package llm_test

import (
	"errors"
	"testing"

	"agenthub/backend"
	"agenthub/backend/llm"
	"agenthub/backend/llm/anthropic"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/llm/openai"
)

// TestOverflowNeverFallsBack drives llm.Fallback through both real SDK
// clients against each provider's real overflow shapes: the overflow is
// classified, returned after exactly one request, and neither retried nor
// sent to the fallback model (run-model.md CX5).
func TestOverflowNeverFallsBack(t *testing.T) {
	tests := []struct {
		name   string
		server func(...llmtest.Turn) *llmtest.Server
		client func(*llmtest.Server) llm.Client
		turn   llmtest.Turn
	}{
		{"openai context_length_exceeded", llmtest.NewOpenAI, openaiClient, llmtest.OpenAIOverflow},
		{"openai 400 message without code", llmtest.NewOpenAI, openaiClient, llmtest.Turn{Status: 400,
			Body: llmtest.OpenAIError("invalid_request_error", "", "This model's maximum context length is 128000 tokens.")}},
		{"llama.cpp", llmtest.NewOpenAI, openaiClient, llmtest.LlamaCppOverflow},
		{"ollama", llmtest.NewOpenAI, openaiClient, llmtest.OllamaOverflow},
		{"openai in-band", llmtest.NewOpenAI, openaiClient, llmtest.Turn{StreamError: "context_length_exceeded: too many tokens"}},
		{"anthropic prompt is too long", llmtest.NewAnthropic, anthropicClient, llmtest.AnthropicOverflow},
		{"anthropic 413", llmtest.NewAnthropic, anthropicClient, llmtest.Turn{Status: 413,
			Body: llmtest.AnthropicError("request_too_large", "Request exceeds the maximum allowed number of bytes.")}},
		{"anthropic in-band", llmtest.NewAnthropic, anthropicClient, llmtest.Turn{StreamError: "prompt is too long: 201000 tokens > 200000 maximum"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.server(tt.turn, llmtest.Turn{Text: []string{"fallback answered"}})
			defer s.Close()
			f := llm.NewFallback(tt.client(s), llm.Retry{Attempts: 3, Base: 1}, "backup-model")
			_, err := f.Stream(t.Context(), llm.Request{Model: "primary-model",
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, func(llm.Event) error { return nil })
			if !errors.Is(err, llm.ErrContextOverflow) {
				t.Fatalf("err = %v, want context overflow", err)
			}
			if llm.Retryable(err) {
				t.Errorf("an overflow is retryable")
			}
			if f := llm.Failure(err); f == nil || f.Code != backend.FailContextOverflow {
				t.Errorf("Failure = %+v", f)
			}
			if n := len(s.Requests()); n != 1 {
				t.Errorf("%d requests, want 1: no retry, no fallback", n)
			}
		})
	}
}

// TestNotOverflow: rate limits and "window too small" are not overflows.
func TestNotOverflow(t *testing.T) {
	for _, text := range []string{
		"Rate limit reached for requests per minute",
		"the context window is too small for this request",
		"Number of request tokens has exceeded your rate limit",
	} {
		if llm.IsOverflowMessage(text) {
			t.Errorf("%q classified as overflow", text)
		}
	}
}

func openaiClient(s *llmtest.Server) llm.Client {
	return openai.New(openai.Config{BaseURL: s.URL + "/v1", HTTPClient: s.Client()})
}

func anthropicClient(s *llmtest.Server) llm.Client {
	return anthropic.New(anthropic.Config{BaseURL: s.URL, HTTPClient: s.Client()})
}
