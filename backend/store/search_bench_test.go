package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
)

// Benchmarks of search (issue 19; docs/PERFORMANCE.md, bench/store/run.sh).

// benchWords is the vocabulary of the benchmarks' messages: 20,000 words.
func benchWord(i int) string { return fmt.Sprintf("w%05d", i%20000) }

// benchText is a ~300-byte message of 40 words, deterministic in i.
func benchText(i int) string {
	var b strings.Builder
	for k := range 40 {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(benchWord((i*2654435761 + k*40503) % 20000))
	}
	return b.String()
}

// BenchmarkIndexCost: what indexing costs ingestion. Each op appends
// 100,000 events through Store.Emit into a fresh store twice, paired in the
// same op: with the search index (indexed right behind the commits, between
// jobs) and with indexing switched off, for the events search indexes
// (run.message.completed, 40 words each) and for streamed deltas
// (run.message.delta, which it skips). index-lag-ms is how long after the
// last commit the index caught up.
func BenchmarkIndexCost(b *testing.B) {
	for _, tc := range []struct {
		name string
		typ  backend.EventType
	}{{"indexed-messages", backend.EvMessageCompleted}, {"deltas", backend.EvMessageDelta}} {
		payloads := make([]json.RawMessage, benchEvents)
		for i := range payloads {
			payloads[i], _ = json.Marshal(map[string]string{"messageId": "msg_bench", "text": benchText(i)})
		}
		emit := func(s *Store) error {
			return ingest(payloads, func(p json.RawMessage, done func([]backend.Event, error)) {
				s.Emit(benchRun, tc.typ, p, done)
			})
		}
		b.Run(tc.name, func(b *testing.B) {
			var with, without meter
			var lag time.Duration
			for b.Loop() {
				b.StopTimer()
				s0, _ := benchStore(b, 1)
				s0.searchable.Store(false)
				without.run(b, func() error { return emit(s0) })
				s0.Close()
				s1, _ := benchStore(b, 1)
				b.StartTimer()
				with.run(b, func() error { return emit(s1) })
				b.StopTimer()
				t0 := time.Now()
				for {
					behind, err := s1.IndexBehind(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					if !behind {
						break
					}
					time.Sleep(time.Millisecond)
				}
				lag += time.Since(t0)
				var n int
				if err := s1.r.QueryRow(`SELECT count(*) FROM search_text`).Scan(&n); err != nil {
					b.Fatal(err)
				}
				if want := 0; tc.typ == backend.EvMessageCompleted {
					want += benchEvents
					if n != want {
						b.Fatalf("%d events indexed, want %d", n, want)
					}
				} else if n != want {
					b.Fatalf("%d events indexed, want %d (deltas are not indexed)", n, want)
				}
				s1.Close()
				b.StartTimer()
			}
			with.report(b, "")
			without.report(b, "unindexed-")
			b.ReportMetric(100*(1-without.wall.Seconds()/with.wall.Seconds()), "pct-cost")
			b.ReportMetric(100*(1-without.cpu.Seconds()/with.cpu.Seconds()), "pct-cost-cpu")
			b.ReportMetric(float64(lag.Milliseconds())/float64(b.N), "index-lag-ms")
		})
	}
}

// BenchmarkSearch1M: queries over 1,000,000 indexed messages in 1,000 runs:
// a word in 1 message in 10,000, a word of the vocabulary (about 2,000
// messages), a word in every tenth message (100,000), two words together
// and a prefix. store.Search (joins, filters, bm25, snippet) against the
// reference: the bare FTS5 query for the same best 50 rowids. Each op runs
// every query once; the metrics are medians over the queries of all ops.
func BenchmarkSearch1M(b *testing.B) {
	const runs, perRun = 1000, 1000
	s, _ := benchStore(b, runs)
	defer s.Close()
	ctx := context.Background()
	t0 := time.Now()
	exec := func(q string, args ...any) {
		if _, err := s.w.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("bulk load: %v", err)
		}
	}
	exec(`PRAGMA synchronous=OFF`)
	total := runs * perRun
	for from := 0; from < total; from += 50_000 {
		// x is the commit index; run x % runs gets sequence x / runs + 2.
		// The words are w(hash) as in benchText; every tenth message says
		// "agent", one in 10,000 "zephyr".
		exec(`INSERT INTO events (run_id, seq, id, type, session_id, agent_id, ts, schema_version, payload)
			WITH RECURSIVE c(x) AS (SELECT ?1 UNION ALL SELECT x + 1 FROM c WHERE x + 1 < ?2),
			k(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM k WHERE j + 1 < 40)
			SELECT CASE x % ?3 WHEN 0 THEN ?4 ELSE printf('%s_%04d', ?4, x % ?3) END, x / ?3 + 2,
				printf('evt_%016x', x), 'run.message.completed', ?5, 'bench',
				strftime('%Y-%m-%dT%H:%M:%fZ', 1767225600 + x / 1000.0, 'unixepoch'), 1,
				json_object('messageId', 'msg_bench', 'text',
					(SELECT group_concat(printf('w%05d', ((x * 2654435761 + j * 40503) % 20000)), ' ') FROM k)
					|| CASE WHEN x % 10 = 0 THEN ' agent' ELSE '' END
					|| CASE WHEN x % 10000 = 7 THEN ' zephyr' ELSE '' END)
			FROM c`, from, min(from+50_000, total), runs, benchRun, benchSes)
	}
	exec(`UPDATE runs SET last_seq = ? + 1`, perRun)
	exec(`PRAGMA synchronous=NORMAL`)
	exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	loaded := time.Since(t0)
	t1 := time.Now()
	if err := s.FlushIndex(ctx); err != nil {
		b.Fatal(err)
	}
	indexed := time.Since(t1)
	exec(`ANALYZE`)
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM search_text`).Scan(&n); err != nil || n != total {
		b.Fatalf("%d events indexed, want %d (%v)", n, total, err)
	}
	b.Logf("loaded %d events in %d runs in %v, indexed them in %v", total, runs, loaded.Round(time.Millisecond),
		indexed.Round(time.Millisecond))
	b.ReportMetric(float64(total)/indexed.Seconds(), "indexed-events/s")

	queries := []string{"zephyr", benchWord(4242), "agent", benchWord(0) + " " + benchWord(503), "w1234"}
	var mine, ref []float64
	per, perRef := map[string][]float64{}, map[string][]float64{}
	for b.Loop() {
		for _, q := range queries {
			t := time.Now()
			hits, err := s.Search(ctx, SearchFilter{Query: q})
			mine = append(mine, float64(time.Since(t).Microseconds())/1000)
			per[q] = append(per[q], mine[len(mine)-1])
			if err != nil || len(hits) == 0 {
				b.Fatalf("%q: %d hits, %v", q, len(hits), err)
			}
			t = time.Now()
			rows, err := s.r.QueryContext(ctx, `SELECT rowid FROM search_text WHERE search_text MATCH ?
				ORDER BY rank LIMIT 50`, MatchExpr(q))
			if err != nil {
				b.Fatal(err)
			}
			k := 0
			for rows.Next() {
				k++
			}
			rows.Close()
			ref = append(ref, float64(time.Since(t).Microseconds())/1000)
			perRef[q] = append(perRef[q], ref[len(ref)-1])
			if k == 0 {
				b.Fatalf("%q: the reference found nothing", q)
			}
		}
	}
	for _, q := range queries {
		b.Logf("%-16q store.Search median %7.2f ms, max %7.2f ms; bare FTS5 median %7.2f ms", q, median(per[q]),
			slices.Max(per[q]), median(perRef[q]))
	}
	b.ReportMetric(median(mine), "median-ms")
	b.ReportMetric(slices.Max(mine), "max-ms")
	b.ReportMetric(median(ref), "fts5-median-ms")
	b.ReportMetric(median(mine)/median(ref), "x-fts5")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
