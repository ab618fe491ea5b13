package store

import (
	"strings"
	"testing"

	"agenthub/backend"
)

// TestDamagedEventIsNotServed changes stored events behind the store's back
// (a flipped byte in a payload, an edited type, a swapped sequence): every
// read reports store_corrupt naming the event, and serves none of it.
func TestDamagedEventIsNotServed(t *testing.T) {
	for _, tc := range []struct{ name, sql string }{
		{"flipped payload byte", `UPDATE events SET payload = replace(payload, '"i":1', '"i":7') WHERE seq = 3`},
		{"edited type", `UPDATE events SET type = 'x.other' WHERE seq = 3`},
		{"edited timestamp", `UPDATE events SET ts = '2000-01-01T00:00:00.000Z' WHERE seq = 3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, path := openTest(t)
			ctx := t.Context()
			newRun(t, s, "run_1")
			for i := range 4 {
				if _, err := s.Do(ctx, func(tx *Tx) error {
					_, err := tx.Append("run_1", "x.custom", map[string]int{"i": i})
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Events(ctx, "run_1", 0, 0); err != nil {
				t.Fatalf("intact events: %v", err)
			}
			rawSQL(t, path, tc.sql)
			evs, err := s.Events(ctx, "run_1", 0, 0)
			if backend.CodeOf(err) != backend.CodeStoreCorrupt || !strings.Contains(err.Error(), "event #3 of run run_1") || evs != nil {
				t.Fatalf("Events = %d events, %v; want store_corrupt naming event #3", len(evs), err)
			}
			if _, err := s.EventsOfType(ctx, "run_1", "x.custom"); backend.CodeOf(err) != backend.CodeStoreCorrupt &&
				tc.name != "edited type" {
				t.Fatalf("EventsOfType = %v, want store_corrupt", err)
			}
			// Reading before the damaged row still works.
			if evs, err := s.Events(ctx, "run_1", 0, 2); err != nil || len(evs) != 2 {
				t.Fatalf("events before the damage = %d, %v", len(evs), err)
			}
		})
	}
}

// TestEventWithoutChecksumIsServed: rows from before migration 00004 have
// no checksum and are served as they are.
func TestEventWithoutChecksumIsServed(t *testing.T) {
	s, path := openTest(t)
	ctx := t.Context()
	newRun(t, s, "run_1")
	rawSQL(t, path, `UPDATE events SET sum = NULL`)
	if evs, err := s.Events(ctx, "run_1", 0, 0); err != nil || len(evs) == 0 {
		t.Fatalf("events without a checksum = %d, %v", len(evs), err)
	}
}
