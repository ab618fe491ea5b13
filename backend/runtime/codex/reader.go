package codex

import (
	"encoding/json"
	"fmt"
	"strings"

	"agenthub/backend/scrub"
)

// onLine is the reader of `codex app-server`: it runs on proc's output
// goroutine, in line order, and must not block (answers are written by
// other goroutines).
func (s *session) onLine(b []byte, cut bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Lines++
	if cut {
		s.CutLine()
		s.Signal()
		return
	}
	l := parseLine(b)
	switch l.Kind {
	case kindInvalid, kindUnknown:
		s.Problem(l.Problem, b)
	case kindResponse:
		s.response(l)
	case kindRequest:
		s.serverRequest(l, b)
	case kindDelta:
		s.Queue = append(s.Queue, event{kind: evDelta, text: l.Delta})
	case kindItemStarted:
		s.itemState(l.Item.ID).started = l.Item
	case kindItemCompleted:
		s.itemCompleted(l.Item)
	case kindTurnCompleted:
		s.turnCompleted(l.Turn)
	case kindError:
		f := l.Fail
		s.lastErr = &f
	case kindUsage:
		s.usage = l.Usage
	}
	s.Signal()
}

// response routes the answer to one of AgentHub's requests; s.Mu is held.
func (s *session) response(l line) {
	id := strings.Trim(string(l.ID), `"`)
	ch, ok := s.pending[id]
	if !ok {
		s.Problem("an answer to no request of AgentHub's (id "+scrub.Clip(id, 20)+")", nil)
		return
	}
	delete(s.pending, id)
	if ch != nil {
		ch <- l
	}
}

// itemState returns the state of an item, created on first sight; s.Mu is
// held.
func (s *session) itemState(id string) *itemState {
	st, ok := s.items[id]
	if !ok {
		st = &itemState{}
		s.items[id] = st
	}
	return st
}

// itemCompleted records a finished item; s.Mu is held. An agent message is
// text for Stream; a command or file change that no approval request named
// is something Codex did without asking, which the run records.
func (s *session) itemCompleted(it threadItem) {
	st := s.itemState(it.ID)
	st.done = &it
	switch it.Type {
	case "agentMessage":
		s.Queue = append(s.Queue, event{kind: evText, text: it.Text})
	case "commandExecution", "fileChange":
		if !st.asked && it.Status != "declined" {
			s.Queue = append(s.Queue, event{kind: evObserved, item: it})
		}
	}
}

// turnCompleted ends the turn; s.Mu is held.
func (s *session) turnCompleted(t turn) {
	if s.turn != "" && t.ID != "" && t.ID != s.turn {
		return // another turn (none is started by AgentHub): kept in the raw output only
	}
	s.turnDone = true
	s.Queue = append(s.Queue, event{kind: evTurnDone, turn: t})
}

// serverRequest handles a request from Codex; s.Mu is held. Approval
// requests go to the gate; every other request is answered at once, so
// Codex never waits on something AgentHub does not serve.
func (s *session) serverRequest(l line, b []byte) {
	switch l.Method {
	case methodCommandApproval:
		var a commandApproval
		if err := json.Unmarshal(l.Params, &a); err != nil || a.ItemID == "" || a.Command == "" {
			s.Problem("a command approval request without item or command", b)
			s.reply(l.ID, map[string]any{"decision": "decline"})
			return
		}
		s.itemState(a.ItemID).asked = true
		s.queueRequest(&request{rpcID: l.ID, method: l.Method, itemID: a.ItemID, cmd: a})
	case methodFileApproval:
		var a fileApproval
		if err := json.Unmarshal(l.Params, &a); err != nil || a.ItemID == "" {
			s.Problem("a file change approval request without item", b)
			s.reply(l.ID, map[string]any{"decision": "decline"})
			return
		}
		st := s.itemState(a.ItemID)
		st.asked = true
		files, err := s.fileArgs(st.started.Changes)
		if err != nil || len(files) == 0 {
			s.Problem("a file change approval request for an item whose changes are unknown", b)
			s.reply(l.ID, map[string]any{"decision": "decline"})
			return
		}
		s.queueRequest(&request{rpcID: l.ID, method: l.Method, itemID: a.ItemID, files: files})
	case "applyPatchApproval", "execCommandApproval":
		// The legacy v1 approvals: AgentHub only gates through the v2
		// requests above, so these are denied.
		s.reply(l.ID, map[string]any{"decision": "denied"})
	default:
		go func(id json.RawMessage, method string) {
			_ = s.send(map[string]any{"id": id, "error": map[string]any{"code": -32601,
				"message": "AgentHub does not serve " + method}})
		}(l.ID, l.Method)
	}
}

// reply answers a request of Codex without blocking the reader.
func (s *session) reply(id json.RawMessage, result any) {
	go func() { _ = s.send(map[string]any{"id": id, "result": result}) }()
}

// queueRequest hands an approval request to Stream; s.Mu is held.
func (s *session) queueRequest(r *request) {
	r.key = strings.Trim(string(r.rpcID), `"`)
	if len(r.files) == 0 {
		r.calls = []string{fmt.Sprintf("codex-%s-r%s", s.ID, r.key)}
	}
	for i := range r.files {
		r.calls = append(r.calls, fmt.Sprintf("codex-%s-r%s-f%d", s.ID, r.key, i))
	}
	for _, c := range r.calls {
		s.reqs[c] = r
		live.AddCall(c, s)
	}
	s.Queue = append(s.Queue, event{kind: evApproval, req: r})
}
