package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"agenthub/app/api"
	"agenthub/app/protocol"
	"agenthub/backend"
)

// What the AG-UI (agui.go) and AI SDK (aisdk.go) endpoints share: how a
// request names its run, how a decision is delivered after the stream is
// attached (seed 000: reconnect, then deliver), and how a run's events are
// followed with gaps re-read.

// hubProps is AgentHub's part of a protocol request: AG-UI's
// forwardedProps.agenthub, the AI SDK body's agenthub.
type hubProps struct {
	WorkspaceID string `json:"workspaceId,omitempty"`
	Profile     string `json:"profile,omitempty"`
	Isolation   string `json:"isolation,omitempty"`
	RunID       string `json:"runId,omitempty"` // attach to this run
	After       *int64 `json:"after,omitempty"` // from this sequence
	Cancel      bool   `json:"cancel,omitempty"`
}

// maxProtocolBody bounds a protocol request's body.
const maxProtocolBody = 32 << 20

// readLenient decodes a protocol body: clients add fields of their own, so
// unknown ones are ignored (unlike readJSON for AgentHub's own routes).
func readLenient(r *http.Request, v any) error {
	// A chat client sends the whole conversation every time, tool inputs
	// (whole files) included: more room than AgentHub's own requests.
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxProtocolBody)).Decode(v); err != nil {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			return &backend.Error{Code: backend.CodeInvalidInput, Err: err,
				Message: fmt.Sprintf("the request body is larger than %d MiB", maxProtocolBody>>20),
				Next:    "Start a new chat: the conversation is sent whole with every request."}
		}
		return &backend.Error{Code: backend.CodeInvalidInput, Message: "the request body is not the protocol's JSON", Err: err}
	}
	return nil
}

// startFor starts a run for a protocol request.
func (s *Server) startFor(p hubProps, task, session string) (backend.RunSummary, error) {
	if strings.TrimSpace(task) == "" {
		return backend.RunSummary{}, &backend.Error{Code: backend.CodeInvalidInput,
			Message: "the request has no user message to run as the task", Next: "Send the task as the last user message."}
	}
	if p.WorkspaceID == "" {
		return backend.RunSummary{}, &backend.Error{Code: backend.FailOutsideAllowlist,
			Message: "the request names no workspace", Next: "Pass agenthub.workspaceId (an id from GET /api/workspaces)."}
	}
	return s.runs.Start(api.StartRun{WorkspaceID: p.WorkspaceID, Profile: p.Profile, Isolation: p.Isolation,
		Task: task, SessionID: session})
}

// pendingOf returns the run's pending approvals ("" = every run).
func (s *Server) pendingOf(runID string) ([]backend.ApprovalRequest, error) {
	return s.approvals.ForRun(runID)
}

// findPending returns the pending ticket id among list.
func findPending(list []backend.ApprovalRequest, id string) (backend.ApprovalRequest, bool) {
	for _, a := range list {
		if a.ID == id {
			return a, true
		}
		for _, m := range a.MergedApprovalIDs {
			if m == id {
				return a, true
			}
		}
	}
	return backend.ApprovalRequest{}, false
}

// checkAnswer refuses, before anything is delivered, an answer that the
// approval would refuse: a decision it does not offer, or a hash that is
// not the pending one (stale: nothing executes). Checking every answer
// first keeps a request with several from half-applying.
func checkAnswer(t backend.ApprovalRequest, a protocol.Answer) error {
	if a.Decision == "" || a.SubjectHash == "" {
		return backend.Errorf(backend.CodeInvalidInput, "the answer to %s needs a decision and the subjectHash shown", t.ID)
	}
	if a.SubjectHash != t.SubjectHash {
		return &backend.Error{Code: backend.CodeApprovalStale, Message: "the request changed after it was shown",
			Next: "Reload the approval and decide on what is shown now."}
	}
	if len(t.DecisionsOffered) > 0 && !containsKind(t.DecisionsOffered, a.Decision) {
		return backend.Errorf(backend.CodeInvalidInput, "%s does not offer the decision %q", t.ID, a.Decision)
	}
	return nil
}

func containsKind(list []backend.DecisionKind, k backend.DecisionKind) bool {
	for _, x := range list {
		if x == k {
			return true
		}
	}
	return false
}

// survey is what a response needs to know of a run's past events.
type survey struct {
	steps     []stepMark
	requested map[string]int64 // approval id → the sequence of its request
	terminal  int64            // the sequence of the run's end, 0 while it goes on
}

type stepMark struct {
	seq  int64
	step int
}

// survey reads a run's events, handing each to each when it is not nil.
func (s *Server) survey(runID string, each func(backend.Event)) (survey, error) {
	v := survey{requested: map[string]int64{}}
	var after int64
	for {
		page, err := s.runs.Events(runID, after, 0)
		if err != nil {
			return v, err
		}
		if len(page) == 0 {
			return v, nil
		}
		for _, ev := range page {
			if each != nil {
				each(ev)
			}
			switch {
			case ev.Type == backend.EvCheckpointCreated:
				var c protocol.Checkpoint
				if protocol.Decode(ev, &c) && c.Kind == "step" {
					v.steps = append(v.steps, stepMark{ev.Sequence, c.Step})
				}
			case ev.Type == backend.EvApprovalRequested:
				if t, err := protocol.TicketOf(ev); err == nil {
					v.requested[t.ID] = ev.Sequence
				}
			case ev.Type.Terminal():
				v.terminal = ev.Sequence
			}
			after = ev.Sequence
		}
	}
}

// stepsAt is the last step checkpointed at or before cursor.
func (v survey) stepsAt(cursor int64) int {
	n := 0
	for _, m := range v.steps {
		if m.seq <= cursor {
			n = m.step
		}
	}
	return n
}

// startAt is where a response that delivers nothing starts: at cursor,
// unless nothing would come after it: a run that ended at or before the
// cursor replays its end, and a run waiting for approvals requested at or
// before the cursor replays the first request, so the response ends as it
// should (finished, or suspended at the approval) instead of waiting for
// events that come only after a decision.
func (s *Server) startAt(runID string, cursor int64, v survey) (int64, error) {
	if v.terminal > 0 && cursor >= v.terminal {
		return v.terminal - 1, nil
	}
	pending, err := s.pendingOf(runID)
	if err != nil {
		return cursor, err
	}
	first := cursor + 1
	for _, a := range pending {
		if seq, ok := v.requested[a.ID]; ok && seq > 0 && seq < first {
			first = seq
		}
	}
	return first - 1, nil
}

// follow feeds fn the run's events after cursor, in order, re-reading the
// range of a gap (EV10) from the store, until fn says stop, the events end
// or ctx ends. events was subscribed before any decision was delivered.
func (s *Server) follow(ctx context.Context, runID string, cursor int64, events <-chan backend.Event, fn func(backend.Event) (more bool)) error {
	last := cursor
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, open := <-events:
			if !open {
				return nil
			}
			if ev.Type == backend.EvSystemGap {
				var g backend.Gap
				if !protocol.Decode(ev, &g) {
					return errors.New("unreadable gap event")
				}
				for last < g.ToSequence {
					page, err := s.runs.Events(runID, last, 0)
					if err != nil {
						return err
					}
					if len(page) == 0 {
						break
					}
					for _, p := range page {
						if p.Sequence > g.ToSequence {
							break
						}
						last = p.Sequence
						if !fn(p) {
							return nil
						}
					}
				}
				continue
			}
			if ev.Sequence <= last {
				continue
			}
			last = ev.Sequence
			if !fn(ev) {
				return nil
			}
		}
	}
}

// stillPending reports whether the approval an approval.requested event
// announced is still waiting, and the run's pending approvals if so: a
// stream that replays an approval decided since goes on past it.
func (s *Server) stillPending(ev backend.Event) ([]backend.ApprovalRequest, bool) {
	t, err := protocol.TicketOf(ev)
	if err != nil {
		return nil, false
	}
	list, err := s.pendingOf(ev.RunID)
	if err != nil {
		return nil, false
	}
	if _, ok := findPending(list, t.ID); !ok {
		return nil, false
	}
	return list, true
}

// translator is what a protocol's translator does for one response.
type translator[T any] interface {
	Event(backend.Event) []T
	Ended() bool
}

// response is one protocol response of a run: its translator, what it
// opens with, how it ends at a pending approval and at an error of its own.
type response[T any] struct {
	header  map[string]string
	start   []T
	tr      translator[T]
	suspend func(pending []backend.ApprovalRequest, seq int64) []T
	fail    func(error) []T
	trailer string // written once the response ended
}

// serveRun attaches the run's events from cursor, then delivers the
// decisions (and the cancel), then streams the response (seed 000:
// reconnect, then deliver: every event the decision causes is after the
// cursor, so it reaches this stream). A refused decision is an error
// response, before any byte of the stream.
func serveRun[T any](s *Server, w http.ResponseWriter, r *http.Request, runID string, cursor int64,
	decisions []backend.Decision, cancelRun bool, resp response[T]) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	events, err := s.events.Subscribe(ctx, runID, cursor)
	if err != nil {
		writeError(w, err, 0)
		return
	}
	if err := s.deliver(decisions); err != nil {
		writeError(w, err, 0)
		return
	}
	if cancelRun {
		if _, err := s.runs.Cancel(runID); err != nil {
			writeError(w, err, 0)
			return
		}
	}
	f, ok := sseStart(w, resp.header)
	if !ok {
		return
	}
	sseWrite(w, f, resp.start)
	err = s.follow(ctx, runID, cursor, events, func(ev backend.Event) bool {
		sseWrite(w, f, resp.tr.Event(ev))
		if resp.tr.Ended() {
			return false
		}
		if ev.Type == backend.EvApprovalRequested {
			if pending, ok := s.stillPending(ev); ok {
				sseWrite(w, f, resp.suspend(pending, ev.Sequence))
				return false
			}
		}
		return true
	})
	if err != nil && !resp.tr.Ended() {
		sseWrite(w, f, resp.fail(err))
	}
	if resp.tr.Ended() && resp.trailer != "" {
		_, _ = io.WriteString(w, resp.trailer)
		f.Flush()
	}
}

// deliver hands the decisions to the approvals facade, in order.
func (s *Server) deliver(ds []backend.Decision) error {
	for _, d := range ds {
		if _, err := s.approvals.Decide(d); err != nil {
			return err
		}
	}
	return nil
}

// sseStart writes the event-stream headers.
func sseStart(w http.ResponseWriter, extra map[string]string) (http.Flusher, bool) {
	f, ok := w.(http.Flusher)
	if !ok {
		return nil, false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	for k, v := range extra {
		h.Set(k, v)
	}
	w.WriteHeader(http.StatusOK)
	return f, true
}

// sseWrite writes each value as one data: message and flushes once, so the
// events of one envelope event reach the client together.
func sseWrite[T any](w http.ResponseWriter, f http.Flusher, vs []T) {
	if len(vs) == 0 {
		return
	}
	var b strings.Builder
	for _, v := range vs {
		data, err := json.Marshal(v)
		if err != nil {
			continue
		}
		b.WriteString("data: ")
		b.Write(data)
		b.WriteString("\n\n")
	}
	_, _ = io.WriteString(w, b.String())
	f.Flush()
}
