package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"agenthub/app/api"
	"agenthub/app/protocol"
	"agenthub/app/protocol/aisdk"
	"agenthub/backend"
)

// aisdkBody is the part of the AI SDK's chat request (DefaultChatTransport:
// {id, messages, trigger, ...body}) this endpoint reads.
type aisdkBody struct {
	ID       string      `json:"id"`
	Messages []uiMessage `json:"messages"`
	AgentHub struct {
		hubProps
		Decisions []aisdkDecision `json:"decisions,omitempty"`
	} `json:"agenthub"`
}

// aisdkDecision is an explicit answer: any decision the approval offers and
// a hunk selection, which the SDK's yes/no approval response cannot carry.
type aisdkDecision struct {
	ApprovalID string `json:"approvalId"`
	protocol.Answer
}

type uiMessage struct {
	ID       string          `json:"id"`
	Role     string          `json:"role"`
	Metadata json.RawMessage `json:"metadata"`
	Parts    []uiPart        `json:"parts"`
}

type uiPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	State    string `json:"state"`
	Approval *struct {
		ID       string `json:"id"`
		Approved *bool  `json:"approved"`
		Reason   string `json:"reason"`
	} `json:"approval"`
}

// aisdkRoutes serve the AI SDK v6 UI message stream (docs/API.md, "AI
// SDK"): POST /aisdk/chat takes the chat transport's body and answers with
// the stream of an AgentHub run. A last message from the user starts a run
// (agenthub.workspaceId); a last message from the assistant continues the
// run its metadata names from its cursor, delivering the approval
// responses it carries (or agenthub.decisions) once attached.
func (s *Server) aisdkRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /aisdk/chat", s.serveAISDK)
}

func (s *Server) serveAISDK(w http.ResponseWriter, r *http.Request) {
	if s.events == nil {
		writeError(w, backend.Errorf(backend.FailInternal, "event streaming is unavailable"), http.StatusInternalServerError)
		return
	}
	var in aisdkBody
	if err := readLenient(r, &in); err != nil {
		writeError(w, err, 0)
		return
	}
	if len(in.Messages) == 0 {
		writeError(w, backend.Errorf(backend.CodeInvalidInput, "the chat request has no messages"), 0)
		return
	}
	props := in.AgentHub.hubProps
	last := in.Messages[len(in.Messages)-1]
	prev := lastCursor(in.Messages)
	var runID, messageID string
	var cursor int64
	var decisions []backend.Decision
	if last.Role == "user" {
		session := ""
		if prev.RunID != "" {
			if run, err := s.runs.Get(prev.RunID); err == nil {
				session = run.SessionID // the conversation goes on in the same session
			}
		}
		var err error
		runID, err = aisdkStarts.once(in.ID, last.ID, func() (string, error) {
			run, err := s.startFor(props, uiText(last), session)
			return run.ID, err
		})
		if err != nil {
			writeError(w, err, 0)
			return
		}
		messageID = "msg_aisdk_" + runID
	} else {
		runID, cursor = prev.RunID, prev.Sequence
		if props.RunID != "" {
			runID = props.RunID
		}
		if props.After != nil {
			cursor = *props.After
		}
		if runID == "" {
			writeError(w, &backend.Error{Code: backend.CodeInvalidInput,
				Message: "the last assistant message carries no AgentHub run in its metadata",
				Next:    "Send the messages as the stream left them (metadata.agenthub), or pass agenthub.runId."}, 0)
			return
		}
		var err error
		decisions, err = s.aisdkDecisions(in, last, runID)
		if err != nil {
			writeError(w, err, 0)
			return
		}
	}
	if _, err := s.runs.Get(runID); err != nil {
		writeError(w, err, 0)
		return
	}
	if len(decisions) == 0 && !props.Cancel {
		v, err := s.survey(runID, nil)
		if err == nil {
			cursor, err = s.startAt(runID, cursor, v)
		}
		if err != nil {
			writeError(w, err, 0)
			return
		}
	}
	tr := aisdk.New(runID, cursor)
	serveRun(s, w, r, runID, cursor, decisions, props.Cancel, response[aisdk.Chunk]{
		header: map[string]string{aisdk.HeaderName: aisdk.HeaderValue},
		start:  tr.Start(messageID), tr: tr,
		suspend: func([]backend.ApprovalRequest, int64) []aisdk.Chunk { return tr.Suspend() },
		fail:    func(err error) []aisdk.Chunk { return tr.Fail(api.ErrorOf(err).Message) },
		trailer: "data: [DONE]\n\n",
	})
}

// aisdkStarts remembers which run a chat's user message started, so that a
// retried POST of the same message (the transport retrying after a dropped
// connection, a second click) attaches to that run from its start instead
// of starting the task a second time. It is this process's memory: the
// engine owns the runs, and a retry comes within seconds.
var aisdkStarts = &startedRuns{byKey: map[string]string{}}

type startedRuns struct {
	mu    sync.Mutex
	byKey map[string]string // chat id and message id -> run id
	order []string          // oldest first, to forget past maxStarted
}

const maxStarted = 1024

// once returns the run key's first request started, starting it now when
// none did; a chat or message without an id always starts a run.
func (r *startedRuns) once(chatID, messageID string, start func() (string, error)) (string, error) {
	if chatID == "" || messageID == "" {
		return start()
	}
	key := chatID + "\x00" + messageID
	r.mu.Lock()
	defer r.mu.Unlock() // held while starting: a racing retry waits and attaches
	if id, ok := r.byKey[key]; ok {
		return id, nil
	}
	id, err := start()
	if err != nil {
		return "", err
	}
	r.byKey[key] = id
	r.order = append(r.order, key)
	if len(r.order) > maxStarted {
		delete(r.byKey, r.order[0])
		r.order = r.order[1:]
	}
	return id, nil
}

// aisdkDecisions collects the answers of the request: explicit
// agenthub.decisions first, then the approval responses in the last
// assistant message's tool parts (approved: approve_once; denied:
// reject_and_tell). An approval id is the token the stream sent
// (approval#hash), so a yes or no stays bound to what was shown. Answers to
// approvals no longer pending are left out (already delivered: a retry).
func (s *Server) aisdkDecisions(in aisdkBody, last uiMessage, runID string) ([]backend.Decision, error) {
	pending, err := s.pendingOf(runID)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []backend.Decision
	add := func(id string, a protocol.Answer) error {
		if seen[id] {
			return nil
		}
		seen[id] = true
		t, ok := findPending(pending, id)
		if !ok {
			return nil
		}
		if err := checkAnswer(t, a); err != nil {
			return err
		}
		out = append(out, a.For(id, "aisdk:"+in.ID+":"+id))
		return nil
	}
	for _, d := range in.AgentHub.Decisions {
		id, hash := protocol.SplitApprovalToken(d.ApprovalID)
		if d.SubjectHash == "" {
			d.SubjectHash = hash
		}
		if err := add(id, d.Answer); err != nil {
			return nil, err
		}
	}
	for _, p := range last.Parts {
		if p.State != "approval-responded" || p.Approval == nil || p.Approval.Approved == nil {
			continue
		}
		id, hash := protocol.SplitApprovalToken(p.Approval.ID)
		a := protocol.Answer{Decision: backend.RejectAndTell, SubjectHash: hash, Reason: p.Approval.Reason}
		if *p.Approval.Approved {
			a.Decision = backend.ApproveOnce
		}
		if err := add(id, a); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lastCursor is the run and cursor of the last assistant message that
// names one.
func lastCursor(ms []uiMessage) aisdk.Cursor {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role != "assistant" || len(ms[i].Metadata) == 0 {
			continue
		}
		var m aisdk.Metadata
		if json.Unmarshal(ms[i].Metadata, &m) == nil && m.AgentHub.RunID != "" {
			return m.AgentHub
		}
	}
	return aisdk.Cursor{}
}

// uiText is the text of a message's text parts.
func uiText(m uiMessage) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
