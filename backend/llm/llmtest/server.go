// Package llmtest holds scripted model servers for tests: real HTTP servers
// on loopback (httptest) that speak the OpenAI chat-completions and the
// Anthropic Messages wire formats over SSE, play a list of [Turn]s in order,
// and record every request they receive.
//
// It must not import the provider clients or package testing: it is the
// other side of the wire, written from the providers' documented wire
// formats, so the clients under test are exercised for real.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Call is a scripted tool call. Args are the argument fragments, streamed one
// per delta; their concatenation need not be valid JSON.
type Call struct {
	ID   string
	Name string
	Args []string
}

// Turn is one scripted response. With Status set, the server answers with
// that HTTP status and Body; otherwise it streams Text, then Calls, then the
// stop reason and usage.
type Turn struct {
	// Thinking is streamed first as an Anthropic thinking block (the
	// OpenAI server ignores it): it is not part of the answer's text.
	Thinking []string
	Text     []string
	Calls    []Call
	// Stop is the provider's raw stop reason; empty means "tool_calls" /
	// "tool_use" when Calls is set, else "stop" / "end_turn".
	Stop         string
	InputTokens  int64
	OutputTokens int64

	Status     int
	Body       string
	RetryAfter string // Retry-After header value for a Status response

	// Malformed injects an event whose data is not JSON after the text.
	Malformed bool
	// Truncate aborts the connection in the middle of an event after the
	// text and calls, before the stop reason.
	Truncate bool
	// Hang streams the text, then waits until the client goes away.
	Hang bool
	// StreamError, after the text, sends an in-band error event whose
	// message is this text, and ends the stream.
	StreamError string
}

// Request is a request the server received.
type Request struct {
	Path   string
	Header http.Header
	Body   map[string]any // the decoded JSON body
	Raw    []byte
}

// Server is a scripted model server on loopback.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []Request
}

type writeTurn func(w http.ResponseWriter, flush func(), t Turn, model string)

func newServer(path string, wt writeTurn, turns []Turn) *Server {
	s := &Server{turns: turns}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
		t, model, ok := s.record(r)
		if !ok {
			http.Error(w, `{"error":{"type":"invalid_request_error","message":"llmtest: script exhausted"}}`, http.StatusBadRequest)
			return
		}
		if t.Status != 0 {
			w.Header().Set("Content-Type", "application/json")
			if t.RetryAfter != "" {
				w.Header().Set("Retry-After", t.RetryAfter)
			}
			w.WriteHeader(t.Status)
			_, _ = io.WriteString(w, t.Body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		wt(w, func() { _ = rc.Flush() }, t, model)
		if t.Hang {
			<-r.Context().Done()
		}
	})
	s.Server = httptest.NewServer(mux)
	return s
}

// record stores the request and pops the next turn.
func (s *Server) record(r *http.Request) (Turn, string, bool) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	model, _ := body["model"].(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw})
	if s.next >= len(s.turns) {
		return Turn{}, model, false
	}
	t := s.turns[s.next]
	s.next++
	return t, model, true
}

// Requests returns a copy of the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining is the number of turns not yet played.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) - s.next
}

// sse writes one SSE event (an empty name writes a data-only event).
func sse(w io.Writer, event string, data any) {
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("llmtest: marshal %T: %v", data, err))
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
}

// abort ends the response mid-stream: the server closes the connection
// without the final chunk, as a dropped connection does.
func abort(w io.Writer, partial string, flush func()) {
	_, _ = io.WriteString(w, partial)
	flush()
	panic(http.ErrAbortHandler)
}
