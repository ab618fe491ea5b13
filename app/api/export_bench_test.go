//go:build unix

package api

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/store"
)

// BenchmarkExport100k exports a run of 100,000 events (300-byte messages)
// as a bundle: store read, redaction and path scrubbing of every line, the
// digest chain, Markdown and HTML transcripts, zip. The reference, in the
// same op: the same events read and written as plain JSON lines into a zip,
// with nothing else (the least an export can do). Target: < 2 s.
func BenchmarkExport100k(b *testing.B) {
	core, err := Open(context.Background(), Config{Home: b.TempDir(), Version: "bench", Surface: backend.SurfaceCLI})
	if err != nil {
		b.Fatal(err)
	}
	defer core.Close()
	ws, err := NewWorkspacesAPI(core).Add(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	const n = 100_000
	db := core.Store()
	_, err = db.Do(context.Background(), func(tx *store.Tx) error {
		if err := tx.CreateSession("ses_bench", ws.ID, ""); err != nil {
			return err
		}
		if _, err := tx.CreateRun(store.RunRecord{ID: "run_bench0000", SessionID: "ses_bench", WorkspaceID: ws.ID,
			Profile: "bench", AgentID: "bench", Runtime: "native", Task: "bench"}, map[string]any{"task": "bench"}); err != nil {
			return err
		}
		if err := tx.Exec(`INSERT INTO events (run_id, seq, id, type, session_id, agent_id, ts, schema_version, payload)
			WITH RECURSIVE c(x) AS (SELECT 2 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
			SELECT 'run_bench0000', x, printf('evt_%016x', x), 'run.message.completed', 'ses_bench', 'bench',
				strftime('%Y-%m-%dT%H:%M:%fZ', 1767225600 + x / 1000.0, 'unixepoch'), 1,
				json_object('messageId', 'msg_bench', 'text', printf('%08d ', x) || ?)
			FROM c`, n, string(bytes.Repeat([]byte("lorem ipsum "), 21))); err != nil {
			return err
		}
		return tx.Exec(`UPDATE runs SET last_seq = ?, state = 'Completed' WHERE id = 'run_bench0000'`, n)
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := db.FlushIndex(context.Background()); err != nil { // not while timing
		b.Fatal(err)
	}
	var mine, ref, cpu time.Duration
	for b.Loop() {
		t0, c0 := time.Now(), processCPU()
		data, m, err := ExportRunBytes(core, "run_bench0000")
		mine += time.Since(t0)
		cpu += processCPU() - c0
		if err != nil || m.Events.Count != n {
			b.Fatalf("export: %d events, %v", m.Events.Count, err)
		}
		t0 = time.Now()
		evs, err := db.Events(context.Background(), "run_bench0000", 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		z := zip.NewWriter(&buf)
		w, _ := z.Create("events.jsonl")
		enc := json.NewEncoder(w)
		for _, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				b.Fatal(err)
			}
		}
		if err := z.Close(); err != nil {
			b.Fatal(err)
		}
		ref += time.Since(t0)
		b.ReportMetric(float64(len(data))/1e6, "bundle-MB")
	}
	b.ReportMetric(float64(mine.Milliseconds())/float64(b.N), "ms/export")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/export")
	b.ReportMetric(float64(ref.Milliseconds())/float64(b.N), "reference-ms")
	b.ReportMetric(mine.Seconds()/ref.Seconds(), "x-reference")
}

// processCPU is the process's user and system CPU time so far: on a loaded
// machine it says what an export costs, where wall time says how long it
// waited too.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
