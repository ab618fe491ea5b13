package store

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
)

// TestCheckpointsOffTheWriter: the writer never checkpoints (its automatic
// checkpoint is off), yet once more than 1,000 pages of events are
// committed the checkpointer copies them into the database file.
func TestCheckpointsOffTheWriter(t *testing.T) {
	s, path := openTest(t)
	var auto int
	if err := s.w.QueryRowContext(t.Context(), "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("writer wal_autocheckpoint = %d (%v), want 0", auto, err)
	}
	newRun(t, s, "run_1")
	before := fileSize(t, path)
	pad := strings.Repeat("x", 1000)
	const n = 8000 // about 8 MB of payloads: two checkpoints' worth
	done := make(chan error, n)
	for i := range n {
		s.Emit("run_1", backend.EvMessageDelta, json.RawMessage(fmt.Sprintf(`{"i":%d,"p":%q}`, i, pad)),
			func(_ []backend.Event, err error) { done <- err })
	}
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for fileSize(t, path) < before+4<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("database file %d bytes after committing %d events (was %d): nothing checkpointed",
				fileSize(t, path), n, before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
