package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"agenthub/backend"
)

// randomTranscript is a task, then steps of an assistant message with 0–3
// calls and one result per call, sometimes followed by a new user message.
func randomTranscript(r *rand.Rand) []backend.Message {
	msgs := []backend.Message{{Role: backend.RoleUser, Text: "task"}}
	for s := range 1 + r.IntN(12) {
		a := backend.Message{Role: backend.RoleAssistant, Text: strings.Repeat("t", r.IntN(400))}
		n := r.IntN(4)
		for c := range n {
			a.Calls = append(a.Calls, backend.ToolCallRequest{ID: fmt.Sprintf("s%dc%d", s, c), Name: "x",
				Arguments: []byte(`{}`)})
		}
		msgs = append(msgs, a)
		for _, c := range a.Calls {
			msgs = append(msgs, backend.Message{Role: backend.RoleTool, ToolCallID: c.ID,
				Text: strings.Repeat("r", r.IntN(5000))})
		}
		if r.IntN(4) == 0 {
			msgs = append(msgs, backend.Message{Role: backend.RoleUser, Text: "more"})
		}
	}
	return msgs
}

// checkPairing asserts TC6 on a view: every tool result answers a call of an
// earlier assistant message of the view, and every call has its result.
func checkPairing(t *testing.T, view []backend.Message) {
	t.Helper()
	open := map[string]bool{}
	for i, m := range view {
		switch m.Role {
		case backend.RoleAssistant:
			for _, c := range m.Calls {
				open[c.ID] = true
			}
		case backend.RoleTool:
			if !open[m.ToolCallID] {
				t.Fatalf("view[%d] answers %s, whose call is not in the view", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		}
	}
	if len(open) > 0 {
		t.Fatalf("calls without results: %v", open)
	}
}

// TestCompactionKeepsPairing: whatever the transcript, each of the three
// compactions cuts at an assistant turn, never moves back, keeps less, and
// leaves a view whose calls and results pair up; truncation keeps that.
func TestCompactionKeepsPairing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		tr := randomTranscript(r)
		var cs contextState
		prev := len(cs.view(tr))
		for k := 1; k <= maxCompactions; k++ {
			cut := cs.nextCut(tr, k)
			if cut < cs.cut {
				t.Fatalf("transcript %d, compaction %d: cut moved back %d → %d", i, k, cs.cut, cut)
			}
			if cut > 0 && tr[cut].Role != backend.RoleAssistant {
				t.Fatalf("transcript %d, compaction %d: cut at a %s message", i, k, tr[cut].Role)
			}
			cs.cut, cs.summary = cut, "summary"
			view := cs.view(tr)
			checkPairing(t, view)
			if len(view) > prev+1 {
				t.Fatalf("transcript %d, compaction %d: the view grew", i, k)
			}
			prev = len(view)
		}
		cs.truncLimit = 100
		checkPairing(t, cs.view(tr))
		for _, m := range cs.view(tr) {
			if m.Role == backend.RoleTool && len(m.Text) > 100 {
				t.Fatalf("a tool result of %d bytes survived truncation", len(m.Text))
			}
		}
	}
}
