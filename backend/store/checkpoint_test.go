package store

import (
	"database/sql"
	"encoding/json"
	"errors"
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

// TestWALStaysBounded: many writes with a reader that always holds a read
// transaction (the UI replaying runs), the load under which passive
// checkpoints never reset the WAL. The WAL file must stay under the bound
// (plus the writes of one checkpoint interval), and shrink once the writer
// is idle.
func TestWALStaysBounded(t *testing.T) {
	old := walLimit
	walLimit = 4 << 20
	t.Cleanup(func() { walLimit = old })
	s, path := openTest(t)
	newRun(t, s, "run_1")
	stop := make(chan struct{})
	readerDone := make(chan error, 1)
	go func() { // a reader that always has a snapshot open, overlapping the next
		db := rawReader(t, path)
		defer db.Close()
		for {
			select {
			case <-stop:
				readerDone <- nil
				return
			default:
			}
			tx, err := db.Begin()
			if err != nil {
				readerDone <- err
				return
			}
			var n int
			if err := tx.QueryRow(`SELECT seq FROM events ORDER BY pos DESC LIMIT 1`).Scan(&n); err != nil {
				tx.Rollback()
				readerDone <- err
				return
			}
			time.Sleep(2 * time.Millisecond)
			tx.Rollback()
		}
	}()
	pad := strings.Repeat("x", 2000)
	var peak int64
	const batches, perBatch = 20, 500 // about 20 MB of payloads, 5 times the bound
	for b := range batches {
		done := make(chan error, perBatch)
		for i := range perBatch {
			s.Emit("run_1", backend.EvMessageDelta, json.RawMessage(fmt.Sprintf(`{"i":%d,"p":%q}`, b*perBatch+i, pad)),
				func(_ []backend.Event, err error) { done <- err })
		}
		for range perBatch {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		peak = max(peak, walSize(t, path))
	}
	close(stop)
	if err := <-readerDone; err != nil {
		t.Fatal(err)
	}
	// The bound, plus what lands past a size check: the rest of the group
	// being committed (up to 500 of these 2 KB events, about 3 MB of WAL
	// pages) and the 256 KB between checks. Without the TRUNCATE the peak
	// was 91 MB.
	if limit := walLimit + 8<<20; peak > limit {
		t.Fatalf("WAL peaked at %d bytes under a busy reader, bound %d", peak, limit)
	}
	t.Logf("WAL peak %d bytes (bound %d) after %d MB of events", peak, walLimit, batches*perBatch*len(pad)>>20)
	// The idle truncate waits a second of quiet, then for its own fsync,
	// which took seconds at load 13-19: a generous deadline, checked often.
	deadline := time.Now().Add(90 * time.Second)
	for walSize(t, path) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("WAL still %d bytes 90 s after the writer went idle", walSize(t, path))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func rawReader(t *testing.T, path string) *sql.DB {
	db, err := sql.Open("sqlite3", "file:"+path+"?_query_only=1&_busy_timeout=5000")
	if err != nil {
		t.Error(err)
	}
	db.SetMaxOpenConns(1)
	return db
}
