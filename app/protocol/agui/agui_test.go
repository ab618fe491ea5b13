package agui

import (
	"encoding/json"
	"flag"
	"strings"
	"testing"
	"time"

	"agenthub/app/protocol"
	"agenthub/app/protocol/protocoltest"
	"agenthub/backend"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func fixed(tr *Translator) *Translator {
	tr.Now = func() time.Time { return time.Date(2026, 11, 25, 8, 50, 0, 0, time.UTC) }
	return tr
}

// streams plays the recorded run the way the handler serves it: one AG-UI
// run per connection, each ending at a pending approval with an interrupt,
// the next resuming from that approval's sequence.
func streams(t *testing.T, evs []backend.Event) [][]Event {
	var out [][]Event
	tr := fixed(New("thread-1", "agui-run-1", "run_1"))
	cur := tr.Start("Created")
	for _, ev := range evs {
		cur = append(cur, tr.Event(ev)...)
		if ev.Type == backend.EvApprovalRequested {
			tk, err := protocol.TicketOf(ev)
			if err != nil {
				t.Fatal(err)
			}
			cur = append(cur, tr.Interrupt([]backend.ApprovalRequest{tk}, ev.Sequence)...)
			out = append(out, cur)
			steps := tr.Steps
			tr = fixed(New("thread-1", "agui-run-"+string(rune('1'+len(out))), "run_1"))
			tr.Steps = steps
			cur = tr.Start("NeedsApproval")
		}
		if tr.Ended() {
			break
		}
	}
	return append(out, cur)
}

// TestRecordedRunGolden pins the whole mapping of a real run.
func TestRecordedRunGolden(t *testing.T) {
	got := streams(t, protocoltest.Recorded(t))
	if len(got) != 3 {
		t.Fatalf("%d streams, want 3 (two approvals)", len(got))
	}
	for i, s := range got {
		checkWellFormed(t, i, s)
	}
	protocoltest.Golden(t, "run.golden.json", got, *update)
}

// checkWellFormed is the part of the AG-UI verifier's rules the Go side can
// state: RUN_STARTED first, exactly one terminal event and last, every
// message, tool call and step closed before it.
func checkWellFormed(t *testing.T, n int, s []Event) {
	t.Helper()
	if len(s) == 0 || s[0].Type != RunStarted {
		t.Fatalf("stream %d does not open with RUN_STARTED", n)
	}
	open := map[string]bool{}
	for i, e := range s {
		end := e.Type == RunFinished || e.Type == RunError
		if end != (i == len(s)-1) {
			t.Errorf("stream %d: %s at %d of %d", n, e.Type, i, len(s))
		}
		switch e.Type {
		case TextStart, ToolCallStart, StepStarted, ReasoningMsgStart:
			k := e.Type + e.MessageID + e.ToolCallID + e.StepName
			if open[k] {
				t.Errorf("stream %d: %s opened twice", n, k)
			}
			open[k] = true
		case TextEnd, ToolCallEnd, StepFinished, ReasoningMsgEnd:
			k := opener[e.Type] + e.MessageID + e.ToolCallID + e.StepName
			if !open[k] {
				t.Errorf("stream %d: %s closes nothing open", n, k)
			}
			delete(open, k)
		}
	}
	if len(open) > 0 {
		t.Errorf("stream %d ends with %v open", n, open)
	}
}

// opener is the event each closing event closes.
var opener = map[string]string{TextEnd: TextStart, ToolCallEnd: ToolCallStart, StepFinished: StepStarted,
	ReasoningMsgEnd: ReasoningMsgStart}

func ev(seq int64, typ backend.EventType, payload string) backend.Event {
	return backend.Event{Sequence: seq, Type: typ, RunID: "run_1", Payload: json.RawMessage(payload)}
}

// TestEventTable pins single mappings, including the ones the recorded run
// does not show.
func TestEventTable(t *testing.T) {
	for _, c := range []struct {
		name  string
		evs   []backend.Event
		types string
	}{
		{"a message completed without deltas is sent whole",
			[]backend.Event{ev(1, backend.EvMessageCompleted, `{"messageId":"m","role":"assistant","text":"hi"}`)},
			"STEP_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END"},
		{"reasoning deltas are REASONING_*",
			[]backend.Event{ev(1, backend.EvMessageDelta, `{"messageId":"r","text":"hm","reasoning":true}`),
				ev(2, backend.EvMessageCompleted, `{"messageId":"r","text":"hm","reasoning":true}`)},
			"STEP_STARTED REASONING_START REASONING_MESSAGE_START REASONING_MESSAGE_CONTENT REASONING_MESSAGE_END REASONING_END"},
		{"an empty delta opens the message and sends no content",
			[]backend.Event{ev(1, backend.EvMessageDelta, `{"messageId":"m","text":""}`)},
			"STEP_STARTED TEXT_MESSAGE_START"},
		{"a failure is RUN_ERROR with the code and closes what is open",
			[]backend.Event{ev(1, backend.EvMessageDelta, `{"messageId":"m","text":"a"}`),
				ev(2, backend.EvRunFailed, `{"from":"Running","doneReason":"failed","code":"runtime_unavailable","message":"gone","next":"start it"}`)},
			"STEP_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STEP_FINISHED RUN_ERROR"},
		{"a cancel is RUN_FINISHED cancelled",
			[]backend.Event{ev(1, backend.EvRunCancelled, `{"from":"NeedsApproval","doneReason":"cancelled"}`)},
			"RUN_FINISHED"},
		{"unknown and AgentHub-only events are CUSTOM",
			[]backend.Event{ev(1, "run.future.thing", `{"x":1}`), ev(2, backend.EvArtifactReady, `{"path":"a"}`)},
			"CUSTOM CUSTOM"},
		{"a gap is the handler's and produces nothing",
			[]backend.Event{ev(0, backend.EvSystemGap, `{"runId":"run_1","fromSequence":1,"toSequence":9}`)}, ""},
		{"nothing after the end",
			[]backend.Event{ev(1, backend.EvRunCompleted, `{"doneReason":"natural"}`), ev(2, backend.EvMessageDelta, `{"messageId":"m","text":"a"}`)},
			"RUN_FINISHED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := fixed(New("th", "r", "run_1"))
			var types []string
			var all []Event
			for _, e := range c.evs {
				for _, o := range tr.Event(e) {
					types = append(types, o.Type)
					all = append(all, o)
				}
			}
			if got := strings.Join(types, " "); got != c.types {
				t.Errorf("got %q, want %q", got, c.types)
			}
			for _, o := range all {
				if o.Type == RunError && (o.Code != "runtime_unavailable" || !strings.Contains(o.Message, "start it")) {
					t.Errorf("RUN_ERROR %+v lacks the code or the next step", o)
				}
				if o.Type == RunFinished && c.evs[0].Type == backend.EvRunCancelled && o.Outcome.Type != "cancelled" {
					t.Errorf("outcome %+v", o.Outcome)
				}
				if o.Type == Custom && (o.Name == "" || len(o.Value) == 0) {
					t.Errorf("CUSTOM without name or value: %+v", o)
				}
			}
		})
	}
}

// TestInterruptCarriesWhatTheDialogShows: the interrupt of a patch names
// the file, the diff, the hunks and the hash; its schema pins the hash and
// bounds the selection; a command's names the command and has no hunks.
func TestInterruptCarriesWhatTheDialogShows(t *testing.T) {
	var patch, shell backend.ApprovalRequest
	for _, e := range protocoltest.Recorded(t) {
		if e.Type == backend.EvApprovalRequested {
			tk, err := protocol.TicketOf(e)
			if err != nil {
				t.Fatal(err)
			}
			if tk.Kind == backend.ActionPatch {
				patch = tk
			} else {
				shell = tk
			}
		}
	}
	out := fixed(New("th", "r", "run_1")).Interrupt([]backend.ApprovalRequest{patch, shell}, 12)
	fin := out[len(out)-1]
	if fin.Type != RunFinished || fin.Outcome.Type != "interrupt" || len(fin.Outcome.Interrupts) != 2 {
		t.Fatalf("%+v", fin)
	}
	p, s := fin.Outcome.Interrupts[0], fin.Outcome.Interrupts[1]
	hub := p.Metadata["agenthub"].(protocol.Prompt)
	if p.ID != patch.ID || p.ToolCallID != patch.ToolCallID || hub.Path != "notes.txt" || hub.Hunks != 2 ||
		!strings.Contains(hub.Diff, "+line 40 changed") || hub.SubjectHash != patch.SubjectHash {
		t.Errorf("patch interrupt %+v", p)
	}
	props := p.ResponseSchema["properties"].(map[string]any)
	if props["subjectHash"].(map[string]any)["const"] != patch.SubjectHash {
		t.Errorf("schema does not pin the hash: %v", props["subjectHash"])
	}
	idx := props["hunks"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)["index"].(map[string]any)
	if idx["maximum"] != 1 {
		t.Errorf("hunk index bound %v, want 1", idx)
	}
	sh := s.Metadata["agenthub"].(protocol.Prompt)
	if sh.Command != "git status --short" || s.ResponseSchema["properties"].(map[string]any)["hunks"] != nil {
		t.Errorf("command interrupt %+v", s)
	}
}

// TestConversationBeforeACursor: a reattaching client's MESSAGES_SNAPSHOT
// holds the task, the agent's messages with their tool calls and the
// results, up to its cursor and no further.
func TestConversationBeforeACursor(t *testing.T) {
	for _, c := range []struct {
		cursor int64
		roles  string
	}{
		{0, ""},
		{11, "user assistant"},
		{20, "user assistant tool"},
		{99, "user assistant tool assistant tool assistant"},
	} {
		conv := NewConversation("run_1")
		for _, e := range protocoltest.Recorded(t) {
			if e.Sequence <= c.cursor {
				conv.Add(e)
			}
		}
		out := fixed(New("th", "r", "run_1")).Snapshot(conv)
		var msgs []Message
		if len(out) == 1 {
			if out[0].Type != MessagesSnapshot || len(out[0].Metadata) != 0 {
				t.Errorf("cursor %d: %+v", c.cursor, out[0])
			}
			if err := json.Unmarshal(out[0].Messages, &msgs); err != nil {
				t.Fatal(err)
			}
		}
		var roles []string
		for _, m := range msgs {
			roles = append(roles, m.Role)
		}
		if got := strings.Join(roles, " "); got != c.roles {
			t.Errorf("cursor %d: roles %q, want %q", c.cursor, got, c.roles)
		}
		if len(msgs) >= 2 && (msgs[0].Content == nil || *msgs[0].Content != "edit" ||
			len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].Function.Name != "write_file") {
			t.Errorf("cursor %d: %+v", c.cursor, msgs)
		}
	}
}
