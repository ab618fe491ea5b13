package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"agenthub/backend"
)

// bulkEvents fills a fresh store with runs×perRun events of 300-byte
// payloads in one SQL statement per 100,000 rows (the fastest bulk path: no
// row crosses cgo). Events are interleaved across runs in commit order, as
// concurrent runs write them, so one run's rows are spread over the file.
func bulkEvents(b *testing.B, runs, perRun int) *Store {
	b.Helper()
	s, _ := benchStore(b, runs)
	ctx := context.Background()
	t0 := time.Now()
	exec := func(q string, args ...any) {
		if _, err := s.w.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("bulk load: %v", err)
		}
	}
	exec(`PRAGMA synchronous=OFF`)
	total := runs * perRun
	for from := 0; from < total; from += 100_000 {
		// x is the global commit index; run x % runs gets sequence x / runs + 2
		// (run.created is sequence 1).
		exec(`INSERT INTO events (run_id, seq, id, type, session_id, agent_id, ts, schema_version, payload)
			WITH RECURSIVE c(x) AS (SELECT ?1 UNION ALL SELECT x + 1 FROM c WHERE x + 1 < ?2)
			SELECT CASE x % ?3 WHEN 0 THEN ?4 ELSE printf('%s_%04d', ?4, x % ?3) END, x / ?3 + 2,
				printf('evt_%016x%016x', 1767225600000 + x, x), 'run.message.delta', ?5, 'bench',
				strftime('%Y-%m-%dT%H:%M:%fZ', 1767225600 + x / 1000.0, 'unixepoch'), 1,
				'{"messageId":"msg_bench","text":"' || printf('%08d', x) || ' ' || ?6 || '"}'
			FROM c`, from, min(from+100_000, total), runs, benchRun, benchSes, benchPad)
	}
	exec(`UPDATE runs SET last_seq = ? + 1`, perRun)
	exec(`PRAGMA synchronous=NORMAL`)
	exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	exec(`ANALYZE`)
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil || n != total+runs {
		b.Fatalf("bulk load: %d events, want %d (%v)", n, total+runs, err)
	}
	b.Logf("loaded %d events in %d runs in %v", total, runs, time.Since(t0).Round(time.Millisecond))
	return s
}

// BenchmarkReplay100k reads a 100,000-event run back from a cursor (EV8):
// from the start in one query, from the middle, and in pages of 1,000 as a
// reconnecting subscriber replays (engine.Subscribe). Target: < 300 ms.
func BenchmarkReplay100k(b *testing.B) {
	const n = 100_000
	s := bulkEvents(b, 1, n)
	defer s.Close()
	ctx := context.Background()
	for _, c := range []struct {
		name         string
		after, pages int64
	}{{"from-0", 0, 0}, {"from-50000", 50_000, 0}, {"from-0-pages-of-1000", 0, 1000}} {
		b.Run(c.name, func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				got, after := 0, c.after
				for {
					evs, err := s.Events(ctx, benchRun, after, int(c.pages))
					if err != nil {
						b.Fatal(err)
					}
					got += len(evs)
					if len(evs) == 0 || c.pages == 0 || len(evs) < int(c.pages) {
						break
					}
					after = evs[len(evs)-1].Sequence
				}
				if want := n + 1 - int(c.after); got != want {
					b.Fatalf("replayed %d events, want %d", got, want)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/replay")
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/replay")
		})
	}
}

// BenchmarkLastEvents1M reads the last 500 events of one run in a database
// of 1,000,000 events over 1,000 runs (what a window opening a run shows
// first). Target: < 20 ms.
func BenchmarkLastEvents1M(b *testing.B) {
	s := bulkEvents(b, 1000, 1000)
	defer s.Close()
	ctx := context.Background()
	run := fmt.Sprintf("%s_%04d", benchRun, 500)
	c0 := cpuTime()
	for b.Loop() {
		evs, err := s.LastEvents(ctx, run, 500)
		if err != nil {
			b.Fatal(err)
		}
		if len(evs) != 500 || evs[499].Sequence != 1001 || evs[499].Type != backend.EvMessageDelta {
			b.Fatalf("got %d events ending at #%d", len(evs), evs[len(evs)-1].Sequence)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/read")
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/read")
}
