package store

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"

	"agenthub/backend"
	"agenthub/backend/redact"
)

// Benchmarks of the event log (docs/PERFORMANCE.md; bench/store/run.sh
// prints the ratios). Every row is the same in every variant: 300-byte JSON
// payloads, time-ordered ids (UUIDv7) and per-run sequences, into the real
// events table of a migrated database with the store's connection settings
// (WAL, synchronous=NORMAL, foreign keys on).

const (
	benchEvents = 100_000 // events per ingestion op
	benchBatch  = 1_000   // rows per transaction on the raw and CLI paths
	benchRun    = "run_bench"
	benchSes    = "ses_bench"
)

// benchPad fills a payload up to 300 bytes: 33 + 8 + 1 + 256 + 2.
var benchPad = strings.Repeat("x", 256)

func benchPayload(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"messageId":"msg_bench","text":"%08d %s"}`, i, benchPad))
}

// benchRow is one event row, generated before the clock starts.
type benchRow struct {
	seq     int64
	id, ts  string
	payload json.RawMessage
}

func benchRows(n int) []benchRow {
	rows := make([]benchRow, n)
	for i := range rows {
		rows[i] = benchRow{seq: int64(i + 1), id: backend.NewID(backend.PrefixEvent),
			ts: backend.Stamp(time.Now()), payload: benchPayload(i)}
	}
	return rows
}

// benchStore opens a fresh store holding one workspace, session and run.
func benchStore(b *testing.B, runs int) (*Store, string) {
	b.Helper()
	quietLog()
	path := filepath.Join(b.TempDir(), "bench.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := s.AddWorkspace(ctx, backend.Workspace{ID: "ws_1", Name: "w", Path: "/abs/w", DisplayPath: "~/w"},
		By{Actor: "bench", Surface: backend.SurfaceCLI}); err != nil {
		b.Fatal(err)
	}
	_, err = s.Do(ctx, func(tx *Tx) error {
		if err := tx.CreateSession(benchSes, "ws_1", ""); err != nil {
			return err
		}
		for i := range runs {
			if _, err := tx.CreateRun(RunRecord{ID: benchRunID(i), SessionID: benchSes, WorkspaceID: "ws_1",
				Profile: "bench", AgentID: "bench", Runtime: "native", Task: "t"}, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return s, path
}

func benchRunID(i int) string {
	if i == 0 {
		return benchRun
	}
	return fmt.Sprintf("%s_%04d", benchRun, i)
}

const insertEvent = `INSERT INTO events (run_id, seq, id, type, session_id, agent_id, ts, schema_version, payload)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

// rawDB opens the reference's own connection to a store's file, with the
// store's connection settings and SQLite's defaults otherwise.
func rawDB(b *testing.B, path string) *sql.DB {
	b.Helper()
	db, err := sql.Open("sqlite3", dsn(path))
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		b.Fatal(err)
	}
	return db
}

// rawInsert is the reference: mattn/go-sqlite3 through database/sql, one
// prepared statement, benchBatch rows per transaction. The run's
// run.created (sequence 1) is already stored, so rows start at 2.
//
// db must come from rawDB, not be the store's writer: the writer runs with
// SQLite's automatic checkpoint off (checkpoint.go), and the reference keeps
// SQLite's defaults.
func rawInsert(db *sql.DB, rows []benchRow) error {
	if db == nil {
		return errors.New("no raw connection")
	}
	stmt, err := db.Prepare(insertEvent)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for start := 0; start < len(rows); start += benchBatch {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		st := tx.Stmt(stmt)
		for _, r := range rows[start:min(start+benchBatch, len(rows))] {
			if _, err := st.Exec(benchRun, r.seq+1, r.id, string(backend.EvMessageDelta), benchSes, "bench", r.ts,
				backend.SchemaVersion, string(r.payload)); err != nil {
				return errors.Join(err, rollback(tx))
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// storeIngest appends the events through the path the engine uses for
// every streamed delta: one [Store.Emit] per event, each committed by the
// group committer and published before its done callback runs (EV6).
func storeIngest(s *Store, payloads []json.RawMessage) error {
	return ingest(payloads, func(p json.RawMessage, done func([]backend.Event, error)) {
		s.Emit(benchRun, backend.EvMessageDelta, p, done)
	})
}

// jobIngest appends the events with one [Store.Go] job per event, the path
// every delta took before [Store.Emit]: the job runs [Tx.Append] on the
// committer.
func jobIngest(s *Store, payloads []json.RawMessage) error {
	return ingest(payloads, func(p json.RawMessage, done func([]backend.Event, error)) {
		s.Go(func(tx *Tx) error {
			_, err := tx.Append(benchRun, backend.EvMessageDelta, p)
			return err
		}, done)
	})
}

func ingest(payloads []json.RawMessage, submit func(json.RawMessage, func([]backend.Event, error))) error {
	var left atomic.Int64
	left.Store(int64(len(payloads)))
	done := make(chan struct{})
	var failed atomic.Pointer[error]
	for _, p := range payloads {
		submit(p, func(_ []backend.Event, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, &err)
			}
			if left.Add(-1) == 0 {
				close(done)
			}
		})
	}
	<-done
	if p := failed.Load(); p != nil {
		return *p
	}
	return nil
}

func countEvents(b *testing.B, s *Store, want int) {
	b.Helper()
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM events WHERE run_id = ?`, benchRun).Scan(&n); err != nil {
		b.Fatal(err)
	}
	if n != want {
		b.Fatalf("%d events stored, want %d", n, want)
	}
}

type countSink struct{ n atomic.Int64 }

func (c *countSink) Publish(backend.Event) { c.n.Add(1) }

// BenchmarkIngest: 100,000 events per op into a fresh database.
//   - raw: the reference, mattn/go-sqlite3 with batches of 1,000 prepared
//     inserts, on its own connection with SQLite's defaults (a checkpoint
//     every 1,000 WAL pages, inside the commit that crosses them);
//   - raw-nockpt: the same with no checkpoint during the op, a bound (the
//     store's writer leaves checkpoints to a goroutine beside it);
//   - store: the store's durable append path ([Store.Emit]); each op also
//     runs raw and raw-multirow on fresh files (outside the timer), so
//     pct-of-raw (wall), pct-of-raw-cpu, pct-of-multirow and pct-of-fastest
//     (against the faster of the two in the same ops) are paired, which
//     keeps them steady when other work shares the machine;
//   - store-redacted: the same with the app's secret redactor installed;
//   - store-job: one [Store.Go] job per event (the path before Emit);
//   - raw-multirow: a second reference, the rows alone through the
//     driver-level multi-row inserts the store's emits use, so that
//     store / raw-multirow is the store's own overhead;
//   - sqlite3-cli: the sqlite3 shell running the same rows as SQL text,
//     BEGIN … 1,000 INSERTs … COMMIT, timed as a whole process.
func BenchmarkIngest(b *testing.B) {
	rows := benchRows(benchEvents)
	payloads := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		payloads[i] = r.payload
	}
	b.Run("raw", func(b *testing.B) { benchRaw(b, rows, "") })
	// The reference with no checkpoint at all during the op, as the store's
	// writer runs (its checkpoints run beside it): a bound for raw inserts.
	b.Run("raw-nockpt", func(b *testing.B) { benchRaw(b, rows, noAutoCheckpoint) })
	b.Run("store", func(b *testing.B) { benchStoreIngest(b, rows, payloads, nil, storeIngest) })
	// With the redactor the app installs (EV11): every payload is scanned
	// for secrets, by Emit on the submitting goroutine.
	b.Run("store-redacted", func(b *testing.B) { benchStoreIngest(b, rows, payloads, redact.New(), storeIngest) })
	b.Run("store-job", func(b *testing.B) { benchStoreIngest(b, rows, payloads, nil, jobIngest) })
	b.Run("raw-multirow", func(b *testing.B) {
		benchStoreIngest(b, rows, payloads, nil, func(s *Store, _ []json.RawMessage) error {
			return multirowInsert(s, rows)
		})
	})
	b.Run("sqlite3-cli", func(b *testing.B) { benchCLI(b, rows) })
}

// benchRaw times rawInsert into a fresh store's file, after pragma (if not
// empty) on the reference's connection.
func benchRaw(b *testing.B, rows []benchRow, pragma string) {
	var m meter
	for b.Loop() {
		b.StopTimer()
		s, path := benchStore(b, 1)
		db := rawDB(b, path)
		if pragma != "" {
			if _, err := db.Exec(pragma); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		m.run(b, func() error { return rawInsert(db, rows) })
		b.StopTimer()
		db.Close()
		countEvents(b, s, benchEvents+1)
		s.Close()
		b.StartTimer()
	}
	m.report(b, "")
}

// benchStoreIngest times ingest into a fresh store (with red, if not nil)
// and, outside the timer, rawInsert of the same rows into another fresh
// file, so the ratio is paired op by op.
func benchStoreIngest(b *testing.B, rows []benchRow, payloads []json.RawMessage, red Redactor,
	ingest func(*Store, []json.RawMessage) error) {
	var raw, multi, st meter
	for b.Loop() {
		b.StopTimer()
		r, path := benchStore(b, 1)
		db := rawDB(b, path)
		raw.run(b, func() error { return rawInsert(db, rows) })
		db.Close()
		r.Close()
		// The second reference, paired too: the store's own inserter alone.
		m, _ := benchStore(b, 1)
		multi.run(b, func() error { return multirowInsert(m, rows) })
		m.Close()
		s, _ := benchStore(b, 1)
		if red != nil {
			s.SetRedactor(red)
		}
		sink := &countSink{}
		s.SetPublisher(sink)
		b.StartTimer()
		st.run(b, func() error { return ingest(s, payloads) })
		b.StopTimer()
		if n := sink.n.Load(); n != benchEvents && b.Name() != "BenchmarkIngest/raw-multirow" {
			b.Fatalf("%d events published, want %d", n, benchEvents)
		}
		countEvents(b, s, benchEvents+1)
		s.Close()
		b.StartTimer()
	}
	st.report(b, "")
	raw.report(b, "raw-")
	b.ReportMetric(100*raw.wall.Seconds()/st.wall.Seconds(), "pct-of-raw")
	b.ReportMetric(100*raw.cpu.Seconds()/st.cpu.Seconds(), "pct-of-raw-cpu")
	b.ReportMetric(100*multi.wall.Seconds()/st.wall.Seconds(), "pct-of-multirow")
	// The ratio to the fastest reference of this run (docs/PERFORMANCE.md):
	// whichever of raw and raw-multirow took less wall time in these ops.
	b.ReportMetric(100*min(raw.wall, multi.wall).Seconds()/st.wall.Seconds(), "pct-of-fastest")
}

// multirowInsert writes the rows with the store's driver-level inserts
// (eventInserter), benchBatch rows per transaction, outside the committer:
// what the emits' inserts cost without anything else of the store.
func multirowInsert(s *Store, rows []benchRow) error {
	ctx := context.Background()
	c, err := s.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ers := make([]emitRow, len(rows))
	for i, r := range rows {
		ers[i] = emitRow{i: i, ev: backend.Event{RunID: benchRun, Sequence: r.seq + 1, ID: r.id,
			Type: backend.EvMessageDelta, SessionID: benchSes, AgentID: "bench", Timestamp: r.ts,
			SchemaVersion: backend.SchemaVersion, Payload: r.payload}}
	}
	var in eventInserter
	defer c.Raw(func(any) error { return in.close() })
	for start := 0; start < len(ers); start += benchBatch {
		tx, err := c.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		err = c.Raw(func(dc any) error {
			return in.insert(ctx, dc.(*sqlite3.SQLiteConn), ers[start:min(start+benchBatch, len(ers))])
		})
		if err != nil {
			return errors.Join(err, rollback(tx))
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// meter adds up the wall and CPU time of the measured sections.
type meter struct {
	wall, cpu time.Duration
	events    int
}

func (m *meter) run(b *testing.B, fn func() error) {
	b.Helper()
	c0, t0 := cpuTime(), time.Now()
	if err := fn(); err != nil {
		b.Fatal(err)
	}
	m.wall += time.Since(t0)
	m.cpu += cpuTime() - c0
	m.events += benchEvents
}

// report adds events/s and CPU µs per event (0 where CPU is not measured).
func (m *meter) report(b *testing.B, prefix string) {
	b.ReportMetric(float64(m.events)/m.wall.Seconds(), prefix+"events/s")
	b.ReportMetric(float64(m.cpu.Microseconds())/float64(m.events), prefix+"cpu-us/event")
}

// benchCLI runs `sqlite3 -bail file < script` on a copy of the same fresh
// database with the store's pragmas and the same rows.
func benchCLI(b *testing.B, rows []benchRow) {
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		b.Skip("the sqlite3 CLI is not installed (Debian: apt-get install sqlite3; scripts/deps.sh test)")
	}
	script := filepath.Join(b.TempDir(), "insert.sql")
	if err := writeInsertScript(script, rows); err != nil {
		b.Fatal(err)
	}
	var m meter
	for b.Loop() {
		b.StopTimer()
		s, path := benchStore(b, 1)
		s.Close()
		in, err := os.Open(script)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(bin, "-bail", path)
		cmd.Stdin = in
		var out []byte
		b.StartTimer()
		m.run(b, func() error {
			out, err = cmd.CombinedOutput()
			return err
		})
		b.StopTimer()
		in.Close()
		if err != nil {
			b.Fatalf("sqlite3: %v: %s", err, out)
		}
		s, err = Open(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		countEvents(b, s, benchEvents+1)
		s.Close()
		b.StartTimer()
	}
	m.report(b, "")
}

func writeInsertScript(path string, rows []benchRow) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000;")
	for i, r := range rows {
		if i%benchBatch == 0 {
			fmt.Fprintln(w, "BEGIN IMMEDIATE;")
		}
		fmt.Fprintf(w, "INSERT INTO events (run_id, seq, id, type, session_id, agent_id, ts, schema_version, payload) "+
			"VALUES ('%s', %d, '%s', '%s', '%s', 'bench', '%s', %d, '%s');\n", benchRun, r.seq+1, r.id,
			backend.EvMessageDelta, benchSes, r.ts, backend.SchemaVersion, r.payload)
		if i%benchBatch == benchBatch-1 || i == len(rows)-1 {
			fmt.Fprintln(w, "COMMIT;")
		}
	}
	return errors.Join(w.Flush(), f.Close())
}

// BenchmarkCommitLatency: one streamed delta every 500 µs (2,000 events/s)
// for one second per op, as the engine submits them ([Store.Emit] with a
// payload to encode); latency is from submission to the done callback,
// which runs after the commit and the publication.
func BenchmarkCommitLatency(b *testing.B) {
	s, _ := benchStore(b, 1)
	defer s.Close()
	s.SetPublisher(&countSink{})
	text := strings.Repeat("y", 240)
	var lat []time.Duration
	for b.Loop() {
		lat = append(lat, pacedDeltas(b, s, 2000, time.Second, text)...)
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/1e6, "max-ms")
}

func pacedDeltas(b *testing.B, s *Store, perSec int, d time.Duration, text string) []time.Duration {
	n := int(d.Seconds() * float64(perSec))
	every := time.Second / time.Duration(perSec)
	lat := make([]time.Duration, n)
	var left atomic.Int64
	left.Store(int64(n))
	done := make(chan struct{})
	start := time.Now()
	for i := range n {
		if wait := time.Until(start.Add(time.Duration(i) * every)); wait > 0 {
			time.Sleep(wait)
		}
		t0 := time.Now()
		s.Emit(benchRun, backend.EvMessageDelta, map[string]string{"messageId": "msg_bench", "text": text},
			func(_ []backend.Event, err error) {
				if err != nil {
					b.Error(err)
				}
				lat[i] = time.Since(t0)
				if left.Add(-1) == 0 {
					close(done)
				}
			})
	}
	<-done
	return lat
}

// quietLog drops slog output in benchmarks: "store migrated" lines written
// while a result line is being printed would split it, and bench/store/run.sh
// would lose that sample.
func quietLog() { slog.SetDefault(slog.New(slog.DiscardHandler)) }
