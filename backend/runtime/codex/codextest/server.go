// Package codextest is a scripted OpenAI Responses server for tests of the
// Codex runtime: a real HTTP server on loopback (httptest) that answers
// POST /v1/responses over SSE the way the Codex CLI 0.169.0 reads it
// (agent-clis.md §2.4), plays a list of [Turn]s in order and records every
// request it receives.
//
// It is written from the wire format, so the pinned CLI is exercised for
// real. It must not import package testing or the OpenAI SDK.
package codextest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Call is a scripted tool call: a function_call (Arguments, a JSON object
// as text) or, when Custom is set, a custom_tool_call (Input, free text).
type Call struct {
	ID        string
	Name      string
	Arguments string
	Custom    bool
	Input     string
}

// Exec is a call of Codex's exec_command tool. Escalated asks to run
// outside the sandbox (sandbox_permissions "require_escalated"), which is
// one of the ways Codex asks its client for approval.
func Exec(id, cmd string, escalated bool) Call {
	args := map[string]any{"cmd": cmd}
	if escalated {
		args["sandbox_permissions"] = "require_escalated"
		args["justification"] = "the task needs it"
	}
	b, _ := json.Marshal(args)
	return Call{ID: id, Name: "exec_command", Arguments: string(b)}
}

// ApplyPatch is a call of Codex's freeform apply_patch tool.
func ApplyPatch(id, patch string) Call {
	return Call{ID: id, Name: "apply_patch", Custom: true, Input: patch}
}

// Turn is one scripted response. With Status set, the server answers with
// that HTTP status and Body; otherwise it streams Text as one assistant
// message, then Calls, then response.completed with the usage.
type Turn struct {
	Text         []string
	Calls        []Call
	InputTokens  int64
	OutputTokens int64

	Status int
	Body   string

	// Hang streams the text, then waits until the client goes away.
	Hang bool
}

// Request is a request the server received.
type Request struct {
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Server is a scripted Responses server on loopback. Point a Codex model
// provider's base_url at URL+"/v1".
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []Request
}

// New starts a server that plays turns in order; the caller closes it. A
// request after the last turn is answered with HTTP 400.
func New(turns ...Turn) *Server {
	s := &Server{turns: turns}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", s.responses)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.store(r, nil)
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"codextest: not served"}}`, http.StatusNotFound)
	})
	s.Server = httptest.NewServer(mux)
	return s
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	t, ok := s.store(r, raw)
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"type":"invalid_request_error","message":"codextest: script exhausted"}}`)
		return
	}
	if t.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		_, _ = io.WriteString(w, t.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	flush := func() { _ = rc.Flush() }
	n := s.served()
	write(w, flush, t, fmt.Sprintf("resp_%d", n))
	if t.Hang {
		<-r.Context().Done()
	}
}

// store records a request and, for raw bodies, pops the next turn.
func (s *Server) store(r *http.Request, raw []byte) (Turn, bool) {
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw})
	if raw == nil || s.next >= len(s.turns) {
		return Turn{}, false
	}
	t := s.turns[s.next]
	s.next++
	return t, true
}

func (s *Server) served() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// write streams one turn: response.created, the message's text deltas and
// item, each call's item, then response.completed (unless it hangs).
func write(w io.Writer, flush func(), t Turn, id string) {
	seq := 0
	ev := func(typ string, data map[string]any) {
		data["type"] = typ
		data["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	ev("response.created", map[string]any{"response": map[string]any{"id": id, "object": "response",
		"status": "in_progress", "output": []any{}}})
	flush()
	out := 0
	if len(t.Text) > 0 {
		msgID := id + "_msg"
		ev("response.output_item.added", map[string]any{"output_index": out, "item": map[string]any{
			"type": "message", "id": msgID, "role": "assistant", "status": "in_progress", "content": []any{}}})
		full := ""
		for _, d := range t.Text {
			full += d
			ev("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": out,
				"content_index": 0, "delta": d})
			flush()
		}
		if t.Hang {
			return
		}
		ev("response.output_item.done", map[string]any{"output_index": out, "item": map[string]any{
			"type": "message", "id": msgID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": full, "annotations": []any{}}}}})
		out++
	} else if t.Hang {
		return
	}
	for _, c := range t.Calls {
		item := map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name,
			"arguments": c.Arguments, "status": "completed"}
		if c.Custom {
			item = map[string]any{"type": "custom_tool_call", "id": "ctc_" + c.ID, "call_id": c.ID,
				"name": c.Name, "input": c.Input, "status": "completed"}
		}
		ev("response.output_item.added", map[string]any{"output_index": out, "item": item})
		ev("response.output_item.done", map[string]any{"output_index": out, "item": item})
		out++
	}
	in, outTok := t.InputTokens, t.OutputTokens
	if in == 0 && outTok == 0 {
		in, outTok = 100, 20
	}
	ev("response.completed", map[string]any{"response": map[string]any{"id": id, "object": "response",
		"status": "completed", "output": []any{}, "usage": map[string]any{"input_tokens": in,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": outTok,
			"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": in + outTok}}})
	flush()
}

// Requests returns a copy of the requests received so far, model requests
// and any other.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ModelRequests returns the POST /v1/responses requests received so far.
func (s *Server) ModelRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Path == "/v1/responses" {
			out = append(out, r)
		}
	}
	return out
}

// Remaining is the number of turns not yet played.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) - s.next
}

// Outputs returns the tool outputs (function_call_output and
// custom_tool_call_output items) a request sent the model, by call id.
func (r Request) Outputs() map[string]string {
	out := map[string]string{}
	items, _ := r.Body["input"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		switch m["type"] {
		case "function_call_output", "custom_tool_call_output":
			id, _ := m["call_id"].(string)
			out[id] = outputText(m["output"])
		}
	}
	return out
}

// Texts returns the text of every user and developer message of a request.
func (r Request) Texts() []string {
	var out []string
	items, _ := r.Body["input"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["type"] != "message" && m["role"] == nil {
			continue
		}
		out = append(out, outputText(m["content"]))
	}
	return out
}

// outputText flattens an output or content value: a string, or a list of
// parts with text.
func outputText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		s := ""
		for _, p := range x {
			pm, _ := p.(map[string]any)
			if t, ok := pm["text"].(string); ok {
				s += t
			}
		}
		return s
	case map[string]any:
		if t, ok := x["content"]; ok {
			return outputText(t)
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}
