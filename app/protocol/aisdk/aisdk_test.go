package aisdk

import (
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"agenthub/app/protocol/protocoltest"
	"agenthub/backend"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestRecordedRunGolden plays the recorded run the way the handler serves
// it (a response per POST, each suspended at a pending approval with
// finish tool-calls) and pins every chunk.
func TestRecordedRunGolden(t *testing.T) {
	var got [][]Chunk
	tr := New("run_1", 0)
	cur := tr.Start("msg_1")
	for _, ev := range protocoltest.Recorded(t) {
		cur = append(cur, tr.Event(ev)...)
		if ev.Type == backend.EvApprovalRequested {
			cur = append(cur, tr.Suspend()...)
			got = append(got, cur)
			tr = New("run_1", ev.Sequence)
			cur = tr.Start("")
		}
		if tr.Ended() {
			break
		}
	}
	got = append(got, cur)
	if len(got) != 3 {
		t.Fatalf("%d responses, want 3", len(got))
	}
	for i, r := range got {
		last := r[len(r)-1]
		want := map[bool]string{true: "stop", false: "tool-calls"}[i == 2]
		if last.Type != "finish" || last.FinishReason != want {
			t.Errorf("response %d ends with %+v, want finish %s", i, last, want)
		}
		if m, ok := last.MessageMetadata.(Metadata); !ok || m.AgentHub.RunID != "run_1" || m.AgentHub.Sequence == 0 {
			t.Errorf("response %d: finish without the cursor: %+v", i, last.MessageMetadata)
		}
	}
	protocoltest.Golden(t, "run.golden.json", got, *update)
}

func ev(seq int64, typ backend.EventType, payload string) backend.Event {
	return backend.Event{Sequence: seq, Type: typ, RunID: "run_1", Payload: json.RawMessage(payload)}
}

// TestChunkTable pins single mappings; message-metadata chunks are left
// out of the expected types.
func TestChunkTable(t *testing.T) {
	for _, c := range []struct {
		name  string
		evs   []backend.Event
		types string
	}{
		{"a reviewer's rejection is tool-output-denied",
			[]backend.Event{ev(1, backend.EvApprovalResolved, `{"approvalId":"a","toolCallId":"c","decision":"reject_and_tell"}`),
				ev(2, backend.EvToolResult, `{"toolCallId":"c","content":"rejected","isError":true,"status":"Cancelled"}`)},
			"data-agenthub-run-approval-resolved tool-output-denied"},
		{"a call cancelled with the run (no rejection) is data, not a denial the SDK would refuse",
			[]backend.Event{ev(1, backend.EvToolResult, `{"toolCallId":"c","content":"cancelled","isError":true,"status":"Cancelled"}`)},
			"data-agenthub-run-tool-result"},
		{"a tool that failed is tool-output-error",
			[]backend.Event{ev(1, backend.EvToolResult, `{"toolCallId":"c","content":"no such file","isError":true,"status":"Failed"}`)},
			"tool-output-error"},
		{"reasoning",
			[]backend.Event{ev(1, backend.EvMessageDelta, `{"messageId":"r","text":"hm","reasoning":true}`),
				ev(2, backend.EvMessageCompleted, `{"messageId":"r","text":"hm","reasoning":true}`)},
			"start-step reasoning-start reasoning-delta reasoning-end"},
		{"a failure is error then finish error",
			[]backend.Event{ev(1, backend.EvMessageDelta, `{"messageId":"m","text":"a"}`),
				ev(2, backend.EvRunFailed, `{"doneReason":"failed","code":"runtime_unavailable","message":"gone"}`)},
			"start-step text-start text-delta text-end finish-step error finish"},
		{"a cancel is abort",
			[]backend.Event{ev(1, backend.EvRunCancelled, `{"doneReason":"cancelled"}`)}, "abort"},
		{"a gap produces nothing",
			[]backend.Event{ev(0, backend.EvSystemGap, `{"runId":"run_1","fromSequence":1,"toSequence":9}`)}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := New("run_1", 0)
			var types []string
			for _, e := range c.evs {
				for _, o := range tr.Event(e) {
					if o.Type != "message-metadata" {
						types = append(types, o.Type)
					}
					if o.Type == "error" && !strings.Contains(o.ErrorText, "runtime_unavailable") {
						t.Errorf("error without the code: %q", o.ErrorText)
					}
				}
			}
			if got := strings.Join(types, " "); got != c.types {
				t.Errorf("got %q, want %q", got, c.types)
			}
		})
	}
}

// TestCursorFollowsTheEvents: each chunk-producing event is followed by
// the message's new cursor, so a client cut anywhere resumes after what it
// holds; events without chunks still move the cursor for the next one.
func TestCursorFollowsTheEvents(t *testing.T) {
	tr := New("run_1", 4)
	tr.Event(ev(5, backend.EvCheckpointCreated, `{"kind":"other"}`)) // a data part
	out := tr.Event(ev(7, backend.EvMessageDelta, `{"messageId":"m","text":"a"}`))
	last := out[len(out)-1]
	if m, ok := last.MessageMetadata.(Metadata); last.Type != "message-metadata" || !ok || m.AgentHub.Sequence != 7 {
		t.Fatalf("last chunk %+v, want message-metadata with cursor 7", last)
	}
}
