package store

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
)

// TestEventsAfterCursor covers EV8 around the sizes Events derives from
// runs.last_seq when no limit is given.
func TestEventsAfterCursor(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	newRun(t, s, "run_1")
	for range 40 {
		if _, err := s.Do(ctx, func(tx *Tx) error { _, err := tx.Append("run_1", "x.custom", nil); return err }); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		after       int64
		limit       int
		first, last int64 // 0, 0 = none
	}{
		{0, 0, 1, 41}, {0, -1, 1, 41}, {40, 0, 41, 41}, {41, 0, 0, 0}, {99, 0, 0, 0}, {10, 5, 11, 15}, {38, 5, 39, 41},
	} {
		evs, err := s.Events(ctx, "run_1", tc.after, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got [2]int64
		if len(evs) > 0 {
			got = [2]int64{evs[0].Sequence, evs[len(evs)-1].Sequence}
			if int64(len(evs)) != got[1]-got[0]+1 {
				t.Errorf("after %d limit %d: %d events from #%d to #%d", tc.after, tc.limit, len(evs), got[0], got[1])
			}
		}
		if diff := cmp.Diff([2]int64{tc.first, tc.last}, got); diff != "" {
			t.Errorf("after %d limit %d: first and last (-want +got):\n%s", tc.after, tc.limit, diff)
		}
	}
	if evs, err := s.Events(ctx, "run_unknown", 0, 0); err != nil || len(evs) != 0 {
		t.Errorf("unknown run: %d events, %v", len(evs), err)
	}
}

// TestEventsReadBackWhatWasStored: every field of an event reads back as it
// was published, including a row whose session and agent ids differ from
// its run's (Events hands over only those that differ).
func TestEventsReadBackWhatWasStored(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	newRun(t, s, "run_1")
	var published []backend.Event
	s.SetPublisher(sinkFunc(func(ev backend.Event) { published = append(published, ev) }))
	_, err := s.Do(ctx, func(tx *Tx) error {
		for _, p := range []any{map[string]string{"text": "héllo \u2028"}, json.RawMessage(`[1,2]`), nil} {
			if _, err := tx.Append("run_1", "x.custom", p); err != nil {
				return err
			}
		}
		return tx.Exec(`INSERT INTO events (run_id, seq, id, type, session_id, agent_id, ts, schema_version, payload)
			VALUES ('run_1', 5, 'evt_x', 'x.other', 'ses_other', 'agent_other', '2026-01-02T03:04:05.678Z', 2, '{}')`)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := append(published, backend.Event{SchemaVersion: 2, ID: "evt_x", Sequence: 5, Type: "x.other",
		RunID: "run_1", SessionID: "ses_other", AgentID: "agent_other", Timestamp: "2026-01-02T03:04:05.678Z",
		Payload: json.RawMessage(`{}`)})
	got, err := s.Events(ctx, "run_1", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-published +read):\n%s", diff)
	}
}
