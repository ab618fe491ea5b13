package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"agenthub/app/api"
	"agenthub/app/protocol"
	"agenthub/app/protocol/agui"
	"agenthub/backend"
)

// aguiInput is the part of AG-UI's RunAgentInput this endpoint reads.
type aguiInput struct {
	ThreadID       string        `json:"threadId"`
	RunID          string        `json:"runId"`
	Messages       []aguiMessage `json:"messages"`
	ForwardedProps struct {
		AgentHub hubProps `json:"agenthub"`
	} `json:"forwardedProps"`
	Resume []aguiResume `json:"resume"`
}

type aguiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type aguiResume struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"` // resolved | cancelled
	Payload     json.RawMessage `json:"payload"`
}

// aguiRoutes serve AG-UI (docs/API.md, "AG-UI"): POST /agui takes a
// RunAgentInput and answers with the AG-UI event stream of an AgentHub run:
// a new run (forwardedProps.agenthub.workspaceId, the last user message as
// the task), the run an interrupt belongs to (resume[]), or a run to
// reattach to from a cursor (forwardedProps.agenthub.runId and after).
func (s *Server) aguiRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /agui", s.serveAGUI)
}

func (s *Server) serveAGUI(w http.ResponseWriter, r *http.Request) {
	if s.events == nil {
		writeError(w, backend.Errorf(backend.FailInternal, "event streaming is unavailable"), http.StatusInternalServerError)
		return
	}
	var in aguiInput
	if err := readLenient(r, &in); err != nil {
		writeError(w, err, 0)
		return
	}
	if in.ThreadID == "" || in.RunID == "" {
		writeError(w, backend.Errorf(backend.CodeInvalidInput, "a RunAgentInput needs threadId and runId"), 0)
		return
	}
	props := in.ForwardedProps.AgentHub
	runID, cursor := props.RunID, int64(0)
	if props.After != nil {
		cursor = *props.After
	}
	var decisions []backend.Decision
	approvalID := ""
	switch {
	case len(in.Resume) > 0:
		var err error
		runID, decisions, err = s.aguiDecisions(in, props.RunID)
		if err != nil {
			writeError(w, err, 0)
			return
		}
		approvalID = decisions[0].ApprovalID
		if props.After == nil {
			cursor = -1 // from the request of the approval answered
		}
	case runID != "":
	default:
		run, err := s.startFor(props, aguiTask(in.Messages), "")
		if err != nil {
			writeError(w, err, 0)
			return
		}
		runID = run.ID
	}
	run, err := s.runs.Get(runID)
	if err != nil {
		writeError(w, err, 0)
		return
	}
	// A client that reattaches mid-run gets the conversation before its
	// cursor as MESSAGES_SNAPSHOT.
	conv := agui.NewConversation(runID)
	reattach := runID == props.RunID && len(decisions) == 0 && cursor > 0
	v, err := s.survey(runID, func(ev backend.Event) {
		if reattach && ev.Sequence <= cursor {
			conv.Add(ev)
		}
	})
	if err != nil {
		writeError(w, err, 0)
		return
	}
	if cursor < 0 { // from the request of the approval answered
		cursor = v.requested[approvalID]
	}
	if len(decisions) == 0 && !props.Cancel {
		if cursor, err = s.startAt(runID, cursor, v); err != nil {
			writeError(w, err, 0)
			return
		}
	}
	tr := agui.New(in.ThreadID, in.RunID, runID)
	tr.Steps = v.stepsAt(cursor)
	serveRun(s, w, r, runID, cursor, decisions, props.Cancel, response[agui.Event]{
		start: append(tr.Start(string(run.State)), tr.Snapshot(conv)...), tr: tr, suspend: tr.Interrupt,
		fail: func(err error) []agui.Event {
			e := api.ErrorOf(err)
			return tr.Fail(string(e.Code), e.Message)
		},
	})
}

// aguiDecisions turns resume[] into decisions, all for one run, each
// checked against the pending ticket before any is delivered.
func (s *Server) aguiDecisions(in aguiInput, hint string) (string, []backend.Decision, error) {
	pending, err := s.pendingOf(hint)
	if err != nil {
		return "", nil, err
	}
	runID := ""
	var out []backend.Decision
	for _, e := range in.Resume {
		t, ok := findPending(pending, e.InterruptID)
		if !ok {
			return "", nil, &backend.Error{Code: backend.CodeApprovalAlreadyResolved,
				Message: "interrupt " + e.InterruptID + " is not a pending approval",
				Next:    "Reattach to the run with forwardedProps.agenthub.runId to see what happened."}
		}
		if runID != "" && t.RunID != runID {
			return "", nil, backend.Errorf(backend.CodeInvalidInput, "resume[] answers approvals of two runs")
		}
		runID = t.RunID
		var a protocol.Answer
		switch e.Status {
		case "cancelled": // abandoned: nothing runs and the run stops
			a = protocol.Answer{Decision: backend.RejectAndStop, SubjectHash: t.SubjectHash,
				Reason: "the AG-UI client cancelled the interrupt"}
		case "resolved":
			if err := json.Unmarshal(e.Payload, &a); err != nil {
				return "", nil, &backend.Error{Code: backend.CodeInvalidInput, Err: err,
					Message: "resume payload of " + e.InterruptID + " is not {decision, subjectHash, hunks?, reason?}"}
			}
		default:
			return "", nil, backend.Errorf(backend.CodeInvalidInput, "resume status %q is not resolved or cancelled", e.Status)
		}
		if err := checkAnswer(t, a); err != nil {
			return "", nil, err
		}
		out = append(out, a.For(e.InterruptID, "agui:"+in.RunID+":"+e.InterruptID))
	}
	return runID, out, nil
}

// aguiTask is the text of the last user message.
func aguiTask(ms []aguiMessage) string {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(ms[i].Content, &s) == nil {
			return s
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(ms[i].Content, &parts) // other shapes carry no text
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}
