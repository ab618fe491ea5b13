package store

import (
	"fmt"
	"testing"

	"agenthub/backend"
)

// TestIntegrityWhileIndexing: the integrity checks stay ok while the index
// grows behind the commits. On a pooled reader, FTS5's check used totals the
// connection had cached before and reported a checksum mismatch that was not
// there (the engine's crash and kill suites failed on every run).
func TestIntegrityWhileIndexing(t *testing.T) {
	s, _ := openTest(t)
	searchFixture(t, s)
	for k := range 3 {
		_, err := s.Do(t.Context(), func(tx *Tx) error {
			for i := range 2000 {
				if _, err := tx.Append("run_a1", backend.EvToolResult,
					map[string]any{"content": fmt.Sprintf("word%d other%d", i, k)}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			if err := s.Integrity(t.Context()); err != nil {
				t.Fatalf("round %d, check %d: %v", k, j, err)
			}
			if err := s.Check(t.Context(), true); err != nil {
				t.Fatalf("round %d, check %d: %v", k, j, err)
			}
		}
	}
}
