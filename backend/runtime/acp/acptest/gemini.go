// Package acptest holds the test side of the ACP runtime: a scripted Gemini
// API (v1beta) server on loopback that the real Gemini CLI talks to, and an
// ACP agent written with acp-go-sdk (see agent.go) that stands in for any
// other ACP agent.
//
// It must not import package testing or the runtime under test: it is the
// other side of the wire, written from the wire formats.
package acptest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Call is a scripted functionCall part.
type Call struct {
	Name string
	Args map[string]any
}

// Turn is one scripted streamGenerateContent answer: text parts, then
// function calls, with finishReason STOP. With Status set the server answers
// that HTTP status and Body instead; with Hang it streams the text and then
// waits until the client goes away.
type Turn struct {
	Text   []string
	Calls  []Call
	Status int
	Body   string
	Hang   bool
}

// Request is a request the server received.
type Request struct {
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Gemini is a scripted Gemini API server on loopback. Every
// :generateContent request (the CLI's routing classifier and other side
// calls) gets a small JSON answer; :streamGenerateContent requests play the
// turns in order (past the last one, a plain "Done." text); :countTokens
// answers a count.
type Gemini struct {
	*httptest.Server
	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []Request
	hanging  chan struct{}
}

// NewGemini starts a server playing turns.
func NewGemini(turns ...Turn) *Gemini {
	g := &Gemini{turns: turns, hanging: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1beta/models/{call}", g.serve)
	mux.HandleFunc("GET /v1beta/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"models":[]}`)
	})
	g.Server = httptest.NewServer(mux)
	return g
}

// Requests returns the streamGenerateContent requests received so far.
func (g *Gemini) Requests() []Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Request(nil), g.requests...)
}

// Hanging is closed once a Hang turn has started streaming.
func (g *Gemini) Hanging() <-chan struct{} { return g.hanging }

func (g *Gemini) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	call := r.PathValue("call")
	_, method, _ := strings.Cut(call, ":")
	switch method {
	case "countTokens":
		writeJSON(w, map[string]any{"totalTokens": 100})
	case "generateContent":
		g.side(w, body)
	case "streamGenerateContent":
		g.mu.Lock()
		g.requests = append(g.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw})
		t := Turn{Text: []string{"Done."}}
		if g.next < len(g.turns) {
			t = g.turns[g.next]
			g.next++
		}
		g.mu.Unlock()
		g.stream(w, r, t)
	default:
		http.Error(w, `{"error":{"code":404,"message":"unknown method","status":"NOT_FOUND"}}`, http.StatusNotFound)
	}
}

// side answers a non-streaming call: the routing classifier wants JSON
// with a complexity score; anything else gets a short text.
func (g *Gemini) side(w http.ResponseWriter, body map[string]any) {
	text := "ok"
	if cfg, _ := body["generationConfig"].(map[string]any); cfg["responseMimeType"] == "application/json" {
		text = `{"complexity_reasoning":"simple","complexity_score":1}`
	}
	writeJSON(w, response([]any{map[string]any{"text": text}}))
}

func (g *Gemini) stream(w http.ResponseWriter, r *http.Request, t Turn) {
	if t.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		_, _ = io.WriteString(w, t.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	frame := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	for _, s := range t.Text {
		frame(chunk([]any{map[string]any{"text": s}}, ""))
	}
	if t.Hang {
		g.mu.Lock()
		select {
		case <-g.hanging:
		default:
			close(g.hanging)
		}
		g.mu.Unlock()
		<-r.Context().Done()
		return
	}
	var parts []any
	for _, c := range t.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Args}})
	}
	if len(parts) == 0 {
		parts = []any{map[string]any{"text": ""}}
	}
	frame(chunk(parts, "STOP"))
}

func chunk(parts []any, finish string) map[string]any {
	c := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		c["finishReason"] = finish
	}
	return map[string]any{"candidates": []any{c}, "modelVersion": "gemini-mock",
		"usageMetadata": map[string]any{"promptTokenCount": 300, "candidatesTokenCount": 60, "totalTokenCount": 360}}
}

func response(parts []any) map[string]any {
	return chunk(parts, "STOP")
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// LastFunctionResponse is the last functionResponse part a recorded request
// sent the model: its name and response object.
func LastFunctionResponse(req Request) (string, map[string]any) {
	contents, _ := req.Body["contents"].([]any)
	var name string
	var resp map[string]any
	for _, c := range contents {
		cm, _ := c.(map[string]any)
		parts, _ := cm["parts"].([]any)
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			if fr, ok := pm["functionResponse"].(map[string]any); ok {
				name, _ = fr["name"].(string)
				resp, _ = fr["response"].(map[string]any)
			}
		}
	}
	return name, resp
}
