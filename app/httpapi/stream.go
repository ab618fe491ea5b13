package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
)

// EventSource replays committed events after a cursor and then continues
// live, in sequence order per run (EV9). runID "" means every run, and then
// the cursor is ignored: clients re-read each run with RunsAPI.Events.
type EventSource interface {
	Subscribe(ctx context.Context, runID string, after int64) (<-chan backend.Event, error)
}

func (s *Server) streamRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/stream", func(w http.ResponseWriter, r *http.Request) {
		s.serveSSE(w, r, "", 0)
	})
	mux.HandleFunc("GET /api/runs/{id}/stream", func(w http.ResponseWriter, r *http.Request) {
		s.serveSSE(w, r, r.PathValue("id"), cursorOf(r))
	})
}

// cursorOf reads Last-Event-ID (a sequence, or runId:sequence), else ?after=.
func cursorOf(r *http.Request) int64 {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		v = v[i+1:]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func (s *Server) serveSSE(w http.ResponseWriter, r *http.Request, runID string, after int64) {
	flusher, ok := w.(http.Flusher)
	if !ok || s.events == nil {
		writeError(w, backend.Errorf(backend.FailInternal, "event streaming is unavailable"), http.StatusInternalServerError)
		return
	}
	events, err := s.events.Subscribe(r.Context(), runID, after)
	if err != nil {
		writeError(w, err, 0)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n")
	flusher.Flush()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keepalive.C:
			fmt.Fprint(w, ": keepalive\n\n")
			flusher.Flush()
		case ev, open := <-events:
			if !open {
				return
			}
			writeEvent(w, runID, ev)
			flusher.Flush()
		}
	}
}

func writeEvent(w http.ResponseWriter, runID string, ev backend.Event) {
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	// A gap carries no sequence of its own (EV10), nor does system.changed:
	// neither may move the client's resume cursor.
	if ev.Type != backend.EvSystemGap && ev.Type != api.EvSystemChanged {
		if runID == "" {
			fmt.Fprintf(w, "id: %s:%d\n", ev.RunID, ev.Sequence)
		} else {
			fmt.Fprintf(w, "id: %d\n", ev.Sequence)
		}
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
}
