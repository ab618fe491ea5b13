package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
