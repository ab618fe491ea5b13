package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"agenthub/backend"
)

// Sentinel kinds of provider failure; every error a [Client] returns for a
// provider failure is an *[Error] that matches exactly one of them with
// errors.Is.
var (
	// ErrContextOverflow: the conversation does not fit the model's context.
	// Never retried, never a reason to fall back (CX5); the engine compacts.
	ErrContextOverflow = errors.New("context overflow")
	ErrRateLimited     = errors.New("rate limited")
	ErrAuth            = errors.New("authentication failed")
	// ErrQuota: billing or quota exhausted; retrying will not help soon.
	ErrQuota = errors.New("quota exhausted")
	// ErrModelUnavailable: the model does not exist on this server.
	ErrModelUnavailable = errors.New("model unavailable")
	ErrServer           = errors.New("provider server error")
	ErrNetwork          = errors.New("network error")
	ErrBadRequest       = errors.New("request rejected")
	// ErrMalformedStream: the provider sent a stream event that does not parse.
	ErrMalformedStream = errors.New("malformed stream")
	// ErrTruncatedStream: the stream ended before the turn was finished.
	ErrTruncatedStream = errors.New("truncated stream")
)

// Error is a classified provider failure. Message is the provider's own text
// (trimmed), for diagnostics and logs; it is not shown to users as is (see
// [Failure]).
type Error struct {
	Kind       error // one of the sentinels above
	Provider   string
	Status     int // HTTP status; 0 when the failure happened inside the stream
	Message    string
	RetryAfter time.Duration // from the Retry-After header, when sent
	Err        error         // underlying cause, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	b.WriteString(e.Kind.Error())
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrX) work for the error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether err is transient: rate limits, server errors,
// network errors and truncated streams. Overflow is never retryable.
func Retryable(err error) bool {
	return errors.Is(err, ErrRateLimited) || errors.Is(err, ErrServer) ||
		errors.Is(err, ErrNetwork) || errors.Is(err, ErrTruncatedStream)
}

// maxMessage bounds the provider text kept in an Error.
const maxMessage = 300

// Classify turns an HTTP error status and body into an *Error. Both providers
// and the OpenAI-compatible local servers use it, so one table decides what
// is an overflow.
func Classify(provider string, status int, body string, retryAfter time.Duration) *Error {
	msg := strings.TrimSpace(body)
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "…"
	}
	e := &Error{Provider: provider, Status: status, Message: msg, RetryAfter: retryAfter}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = ErrAuth
	case isQuotaMessage(body) && (status == http.StatusTooManyRequests || status == http.StatusPaymentRequired):
		e.Kind = ErrQuota
	case status == http.StatusTooManyRequests:
		e.Kind = ErrRateLimited
	case status == http.StatusRequestEntityTooLarge || IsOverflowMessage(body):
		// Checked before 5xx: older llama.cpp servers report overflow as 500.
		e.Kind = ErrContextOverflow
	case status == http.StatusNotFound:
		e.Kind = ErrModelUnavailable
	case status >= 500 || status == http.StatusRequestTimeout || status == http.StatusConflict:
		e.Kind = ErrServer
	default:
		e.Kind = ErrBadRequest
	}
	return e
}

// overflowMarkers are lower-case fragments of provider overflow messages:
// OpenAI and vLLM ("maximum context length", "context_length_exceeded"),
// Anthropic ("prompt is too long", "exceed context limit"), llama.cpp
// ("exceeds the available context size", "exceed_context_size_error"),
// Ollama and LM Studio ("context length", "context window", "context
// overflow").
var overflowMarkers = []string{
	"context_length_exceeded",
	"maximum context length",
	"prompt is too long",
	"input is too long",
	"exceed context limit",
	"exceeds context limit",
	"exceed_context_size",
	"exceeds the available context size",
	"context size has been exceeded",
	"exceeds the context length",
	"exceeds context length",
	"context length exceeded",
	"greater than the context length",
	"context window exceeded",
	"exceeds the context window",
	"context overflow",
	"reduce the length of the messages",
}

// IsOverflowMessage reports whether a provider's error text says the request
// does not fit the context. "Window too small" (a model whose context cannot
// hold even the reserve) and rate-limit texts are not overflows (CX4).
func IsOverflowMessage(text string) bool {
	t := strings.ToLower(text)
	if strings.Contains(t, "too small") || strings.Contains(t, "per minute") || strings.Contains(t, "rate limit") {
		return false
	}
	for _, m := range overflowMarkers {
		if strings.Contains(t, m) {
			return true
		}
	}
	return false
}

func isQuotaMessage(text string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, "insufficient_quota") || strings.Contains(t, "billing") ||
		strings.Contains(t, "credit balance")
}

// Failure maps an error from a [Client] to the stable failure that ends a run,
// with a message safe to show (no provider text, which may echo key
// fragments) and a Detail sub-code. It returns nil for a cancelled context:
// the engine decides what a cancellation means.
func Failure(err error) *backend.Error {
	if err == nil || errors.Is(err, context.Canceled) {
		return nil
	}
	f := func(code backend.FailureCode, detail, msg string) *backend.Error {
		// The step is the model server's or the provider's, never the
		// default of runtime_unavailable (an agent CLI's installation),
		// which would send a user with a stopped Ollama to the wrong place
		// (issue 21).
		return &backend.Error{Code: code, Detail: detail, Message: msg, Err: err, Next: NextSteps[detail]}
	}
	switch {
	case errors.Is(err, ErrContextOverflow):
		return f(backend.FailContextOverflow, "", "The conversation no longer fits the model's context window.")
	case errors.Is(err, ErrAuth):
		return f(backend.FailRuntimeUnavailable, "auth", "The model provider rejected the API key. Check the key reference in the agent profile.")
	case errors.Is(err, ErrQuota):
		return f(backend.FailRuntimeUnavailable, "quota", "The model provider reports exhausted quota or billing. Check the provider account.")
	case errors.Is(err, ErrModelUnavailable):
		return f(backend.FailRuntimeUnavailable, "model_unavailable", "The model is not available on this server. Check the model name in the agent profile.")
	case errors.Is(err, ErrRateLimited):
		return f(backend.FailRuntimeUnavailable, "rate_limited", "The model provider kept rate-limiting after retries. Wait, then start a new run.")
	case errors.Is(err, ErrServer):
		return f(backend.FailRuntimeUnavailable, "provider_error", "The model provider kept failing after retries. Try again later or add a fallback model.")
	case errors.Is(err, ErrNetwork):
		return f(backend.FailRuntimeUnavailable, "network", "The model server could not be reached. Check the base URL and that the server is running.")
	case errors.Is(err, ErrTruncatedStream):
		return f(backend.FailRuntimeUnavailable, "truncated_stream", "The model's response stream ended early. Try again.")
	case errors.Is(err, ErrMalformedStream):
		return f(backend.FailSchemaValidation, "malformed_stream", "The model server sent a response that does not parse. Check that the base URL points at a compatible server.")
	case errors.Is(err, ErrBadRequest):
		return f(backend.FailInternal, "bad_request", "The model provider rejected the request.")
	case errors.Is(err, context.DeadlineExceeded):
		return f(backend.FailRunTimeout, "", "The model did not answer in time.")
	}
	return f(backend.FailInternal, "", "The model call failed.")
}

// NextSteps is the next step of a model failure by its Detail. The UI
// shows each in the reader's language: frontend/messages has the same
// English text as next_model_<detail> (app/api TestModelNextStepsAreLocalised).
var NextSteps = map[string]string{
	"auth":              "Check the API key the agent profile names (agenthub doctor shows which one), then try again.",
	"quota":             "Check the provider account's quota and billing, or switch the profile to another model.",
	"model_unavailable": "Pull or load the model on the server (Ollama: ollama pull NAME), or correct the model name in the profile.",
	"rate_limited":      "Wait a minute and start the run again, or add a fallback model to the profile.",
	"provider_error":    "Try again later, or add a fallback model to the profile.",
	"network":           "Start the model server (Ollama: ollama serve; LM Studio: start its local server) or correct base_url in the profile, then try again.",
	"truncated_stream":  "Start the run again; if it repeats, check the model server's log.",
	"malformed_stream":  "Check that base_url points at an OpenAI-compatible (or Ollama) endpoint, then try again.",
	"bad_request":       "Check the model name and settings in the profile; if they are right, report the error.",
}
