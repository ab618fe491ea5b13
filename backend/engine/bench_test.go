package engine

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/redact"
	"agenthub/backend/store"
)

// Benchmarks of the event path through the engine (docs/PERFORMANCE.md;
// bench/store/run.sh prints the ratio to the store's raw-insert reference).

// streamModel streams n deltas of text, then ends the run with a text
// answer: one step, n + 8 events.
type streamModel struct {
	n    int
	text string
}

func (m streamModel) Stream(ctx context.Context, _ backend.ModelRequest, delta func(string)) (backend.ModelResponse,
	error) {
	for range m.n {
		delta(m.text)
	}
	return backend.ModelResponse{Text: "done"}, ctx.Err()
}

// deltaText makes each run.message.delta payload 300 bytes:
// {"messageId":"msg_<32 hex>","text":"…"} is 62 bytes around the text. It
// ends with a space, as a model's deltas end at word boundaries, so the
// engine's secret-safe cutting (redact.Stream) lets each delta go as one
// event; text without a space would be held back and merged (EV5).
var deltaText = strings.Repeat("z", 300-62-1) + " "

// endSink counts the events it is handed (after their commit) and signals
// when want runs have ended.
type endSink struct {
	events atomic.Int64
	mu     sync.Mutex
	ended  int
	want   int
	done   chan struct{}
}

func (s *endSink) Publish(ev backend.Event) {
	s.events.Add(1)
	if !ev.Type.Terminal() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended++; s.ended == s.want {
		close(s.done)
	}
}

func benchEngine(b *testing.B, model backend.Model, sink backend.Sink) (*Engine, *store.Store) {
	b.Helper()
	quietLog()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	if err := st.AddWorkspace(ctx, backend.Workspace{ID: "ws_1", Name: "w", Path: "/abs/w", DisplayPath: "~/w"},
		store.By{Actor: "bench", Surface: backend.SurfaceCLI}); err != nil {
		b.Fatal(err)
	}
	e := New(Config{Store: st, GlobalLimit: 4, Default: "bench", Sink: sink,
		Profiles: map[string]Profile{"bench": {Runtime: "native", Model: model, Stop: DefaultStop}}})
	if err := e.Recover(ctx); err != nil {
		b.Fatal(err)
	}
	return e, st
}

func closeEngine(b *testing.B, e *Engine, st *store.Store) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
}

// runStream starts runs runs of one step that streams perRun deltas each,
// in separate sessions, and waits until every one has ended.
func runStream(b *testing.B, e *Engine, sink *endSink, runs int) []string {
	b.Helper()
	var ids []string
	for i := range runs {
		r, err := e.Start(context.Background(), StartRequest{WorkspaceID: "ws_1", Task: fmt.Sprint("stream ", i)})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	select {
	case <-sink.done:
	case <-time.After(5 * time.Minute):
		b.Fatal("runs did not end within 5 minutes")
	}
	return ids
}

// BenchmarkEngineStream: 100,000 streamed deltas per op through the engine,
// from Start until the runs are Completed, every event committed before the
// Sink sees it (EV6); one run, one run with the app's secret redactor, and
// four runs in four sessions at once. Each op also inserts the same number
// of rows with the raw reference on a fresh file (outside the timer), so
// pct-of-raw (wall) and pct-of-raw-cpu are paired op by op.
func BenchmarkEngineStream(b *testing.B) {
	const total = 100_000
	rows := rawRows(total)
	for _, c := range []struct {
		name string
		runs int
		red  store.Redactor
	}{{"1-runs", 1, nil}, {"1-runs-redacted", 1, redact.New()}, {"4-runs", 4, nil}} {
		b.Run(c.name, func(b *testing.B) {
			var eng, raw meter
			var events int64
			for b.Loop() {
				b.StopTimer()
				path := rawFile(b)
				raw.run(b, func() error { return rawInsert(path, rows) })
				sink := &endSink{want: c.runs, done: make(chan struct{})}
				e, st := benchEngine(b, streamModel{n: total / c.runs, text: deltaText}, sink)
				if c.red != nil {
					st.SetRedactor(c.red)
				}
				var ids []string
				b.StartTimer()
				eng.run(b, func() error { ids = runStream(b, e, sink, c.runs); return nil })
				b.StopTimer()
				events += streamedEvents(b, st, ids, total/c.runs)
				closeEngine(b, e, st)
				b.StartTimer()
			}
			b.ReportMetric(float64(events)/eng.wall.Seconds(), "events/s")
			b.ReportMetric(float64(eng.cpu.Microseconds())/float64(events), "cpu-us/event")
			n := float64(b.N * total)
			b.ReportMetric(n/raw.wall.Seconds(), "raw-events/s")
			b.ReportMetric(float64(raw.cpu.Microseconds())/n, "raw-cpu-us/event")
			// Per event: the engine's events include each run's lifecycle
			// (8 more per run), the raw rows do not.
			b.ReportMetric(100*(float64(events)/eng.wall.Seconds())/(n/raw.wall.Seconds()), "pct-of-raw")
			b.ReportMetric(100*(float64(raw.cpu)/n)/(float64(eng.cpu)/float64(events)), "pct-of-raw-cpu")
		})
	}
}

// streamedEvents checks that every run completed with at least perRun
// events (one per delta) and returns how many they stored.
func streamedEvents(b *testing.B, st *store.Store, ids []string, perRun int) int64 {
	b.Helper()
	var events int64
	for _, id := range ids {
		r, err := st.Run(context.Background(), id)
		if err != nil || r.State != backend.RunCompleted || r.LastSeq < int64(perRun) {
			b.Fatalf("run %s: %s #%d, %v; want Completed with at least %d events", id, r.State, r.LastSeq, err,
				perRun)
		}
		events += r.LastSeq
	}
	return events
}

// BenchmarkSubscribeReplay100k: a subscriber connects to a finished
// 100,000-event run with a cursor and receives the backlog (EV9; the engine
// reads it in pages of 1,000). Target: < 300 ms.
func BenchmarkSubscribeReplay100k(b *testing.B) {
	const n = 100_000
	sink := &endSink{want: 1, done: make(chan struct{})}
	e, st := benchEngine(b, streamModel{n: n, text: deltaText}, sink)
	defer closeEngine(b, e, st)
	id := runStream(b, e, sink, 1)[0]
	r, err := st.Run(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	for _, after := range []int64{0, n / 2} {
		b.Run(fmt.Sprintf("from-%d", after), func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				got := int64(0)
				for ev := range e.Subscribe(ctx, id, after) {
					if got++; ev.Sequence == r.LastSeq {
						break
					}
				}
				cancel()
				if got != r.LastSeq-after {
					b.Fatalf("replayed %d events, want %d", got, r.LastSeq-after)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/replay")
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/replay")
		})
	}
}

// quietLog drops slog output in benchmarks: "store migrated" lines written
// while a result line is being printed would split it, and bench/store/run.sh
// would lose that sample.
func quietLog() { slog.SetDefault(slog.New(slog.DiscardHandler)) }
