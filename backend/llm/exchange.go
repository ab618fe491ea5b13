package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxErrorBody bounds the error body an [Exchange] keeps.
const maxErrorBody = 64 << 10

// Exchange observes one HTTP exchange of a provider client through its
// Middleware (package wire sends every request through it), so errors are
// classified from the status and the raw body whatever shape the server
// used: OpenAI's {"error":{...}}, Anthropic's {"type":"error",...} or a local
// server's {"error":"text"}. Use one Exchange per Stream call.
type Exchange struct {
	mu        sync.Mutex
	responded bool
	status    int
	header    http.Header
	body      string
}

// Middleware records the last response's status and, for an error status,
// its body (restored for the client to read).
func (x *Exchange) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil {
		return res, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.responded, x.status, x.header, x.body = true, res.StatusCode, res.Header.Clone(), ""
	if res.StatusCode >= 400 && res.Body != nil {
		b, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_ = res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(b))
		x.body = string(b)
	}
	return res, nil
}

// Err classifies err, returned by a stream or request, into an *[Error]
// of the right kind. Context errors are returned unchanged, so callers can
// tell a cancellation from a provider failure.
func (x *Exchange) Err(provider string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	x.mu.Lock()
	responded, status, header, body := x.responded, x.status, x.header, x.body
	x.mu.Unlock()
	if status >= 400 {
		e := Classify(provider, status, errorText(body), retryAfter(header))
		e.Err = err
		return e
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se) || errors.As(err, &te):
		return &Error{Kind: ErrMalformedStream, Provider: provider, Err: err}
	case !responded:
		return &Error{Kind: ErrNetwork, Provider: provider, Err: err}
	default:
		return &Error{Kind: ErrTruncatedStream, Provider: provider, Err: err}
	}
}

// InBand classifies an error the server sent inside a 200 stream (an SSE
// error event): an overflow if the text says so, else a server error.
func InBand(provider, text string) *Error {
	e := Classify(provider, http.StatusInternalServerError, text, 0)
	e.Status = 0
	return e
}

// errorText extracts the human message from the common error body shapes,
// falling back to the raw body.
func errorText(body string) string {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(body), &v) != nil || len(v.Error) == 0 {
		return body
	}
	var s string
	if json.Unmarshal(v.Error, &s) == nil {
		return s
	}
	var o struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	if json.Unmarshal(v.Error, &o) != nil || o.Message == "" {
		return body
	}
	// Keep type and code: "context_length_exceeded" and
	// "exceed_context_size_error" identify overflows on their own.
	parts := []string{o.Message}
	if o.Type != "" {
		parts = append(parts, "type="+o.Type)
	}
	if c, ok := o.Code.(string); ok && c != "" {
		parts = append(parts, "code="+c)
	}
	return strings.Join(parts, " ")
}

// retryAfter reads Retry-After (seconds) or retry-after-ms.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	if s, err := strconv.ParseFloat(h.Get("Retry-After"), 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(h.Get("Retry-After")); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
