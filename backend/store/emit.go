package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"time"
	"unsafe"

	"github.com/mattn/go-sqlite3"

	"agenthub/backend"
)

// emitReq is one event appended with [Store.Emit]: everything but its
// sequence and timestamp is ready before it reaches the committer.
type emitReq struct {
	runID   string
	typ     backend.EventType
	id      string
	payload []byte // encoded and redacted JSON
}

// Emit appends one event of a run without a job: the payload is encoded and
// redacted, and the event id generated, on the caller's goroutine, so the
// single committer only assigns the sequence and inserts the row (several
// emits in one statement). It keeps every rule of [Tx.Append]: the event is
// refused for a run in a terminal state (LC2), it is committed before it is
// published (EV6), emits and jobs commit in submission order, and a refused
// or failed emit takes no sequence. done (optional) runs like [Store.Go]'s.
// A payload given as JSON bytes is stored as it is: it must not change after
// the call.
func (s *Store) Emit(runID string, typ backend.EventType, payload any, done func([]backend.Event, error)) {
	raw, err := rawJSON(payload)
	if err != nil {
		if done != nil {
			done(nil, fmt.Errorf("encode %s payload: %w", typ, err))
		}
		return
	}
	s.submit(jobReq{done: done, emit: emitReq{runID: runID, typ: typ, id: backend.NewID(backend.PrefixEvent),
		payload: s.red.json(raw)}}) // payloads are secret-free (EV11)
}

// emitRow is a staged emit: its index in the group and its event.
type emitRow struct {
	i  int
	ev backend.Event
}

// maxEmitRows bounds the rows of one insert statement: measured, batching
// rows saves most of the per-row driver cost by 8 rows and little after 32.
// There is one statement per power of two up to it.
const (
	emitCols    = 10 // the columns of one event row
	emitSizes   = 6
	maxEmitRows = 1 << (emitSizes - 1)
)

// flushEmits inserts the staged emits of a group (indexes into group) in
// order, up to maxEmitRows per statement. Failures stay per emit: when a
// statement fails (nothing of it is stored), its rows are inserted again one
// by one, so only the bad ones fail and the others keep gap-free sequences.
func (t *Tx) flushEmits(c *sql.Conn, group []jobReq, staged []int, evs [][]backend.Event, errs []error) {
	buf := make([]backend.Event, len(staged)) // one allocation for every emit's done slice
	for len(staged) > 0 {
		n := min(len(staged), maxEmitRows)
		chunk := staged[:n]
		staged = staged[n:]
		saved := t.saveMeta(group, chunk)
		rows := t.assign(group, chunk, errs)
		err := t.insertRows(c, rows)
		if err != nil {
			for _, i := range chunk {
				errs[i] = nil // oneByOne assigns them again
			}
			t.restoreMeta(saved)
			rows = t.oneByOne(c, group, chunk, errs)
		}
		for _, r := range rows {
			buf[0] = r.ev
			evs[r.i], buf = buf[:1:1], buf[1:]
		}
	}
}

// oneByOne inserts each emit of a failed chunk on its own and keeps those
// that succeed.
func (t *Tx) oneByOne(c *sql.Conn, group []jobReq, chunk []int, errs []error) []emitRow {
	var kept []emitRow
	for _, i := range chunk {
		saved := []savedMeta{t.saved(group[i].emit.runID)}
		rows := t.assign(group, []int{i}, errs)
		if len(rows) == 0 {
			continue
		}
		if err := t.insertRows(c, rows); err != nil {
			t.restoreMeta(saved)
			errs[i] = err
			continue
		}
		kept = append(kept, rows[0])
	}
	return kept
}

// assign gives each emit of chunk its run's next sequence, or an error.
func (t *Tx) assign(group []jobReq, chunk []int, errs []error) []emitRow {
	rows := make([]emitRow, 0, len(chunk))
	for _, i := range chunk {
		e := group[i].emit
		m, err := t.meta(e.runID)
		if err == nil && m.state.Terminal() {
			err = fmt.Errorf("append %s to run %s: run is %s: %w", e.typ, e.runID, m.state,
				backend.ErrIllegalTransition)
		}
		if err != nil {
			errs[i] = err
			continue
		}
		m.lastSeq++
		t.s.meta[e.runID], t.touched[e.runID] = m, m
		rows = append(rows, emitRow{i: i, ev: backend.Event{SchemaVersion: backend.SchemaVersion, ID: e.id,
			Sequence: m.lastSeq, Type: e.typ, RunID: e.runID, SessionID: m.session, AgentID: m.agent,
			Timestamp: t.s.stamp.now(), Payload: e.payload}})
	}
	return rows
}

// savedMeta is a run's cached record before a chunk changed it.
type savedMeta struct {
	runID         string
	meta          runMeta
	cached, dirty bool // present in the cache; in touched
}

func (t *Tx) saved(runID string) savedMeta {
	m, cached := t.s.meta[runID]
	_, dirty := t.touched[runID]
	return savedMeta{runID: runID, meta: m, cached: cached, dirty: dirty}
}

func (t *Tx) saveMeta(group []jobReq, chunk []int) []savedMeta {
	var out []savedMeta
	for _, i := range chunk {
		id := group[i].emit.runID
		if len(out) > 0 && out[len(out)-1].runID == id {
			continue // a chunk is mostly one run's events
		}
		out = append(out, t.saved(id))
	}
	return out
}

// restoreMeta gives back the sequences of a failed insert; restoring in
// reverse keeps each run's oldest saved state.
func (t *Tx) restoreMeta(saved []savedMeta) {
	for k := len(saved) - 1; k >= 0; k-- {
		sm := saved[k]
		if sm.cached {
			t.s.meta[sm.runID] = sm.meta
		} else {
			delete(t.s.meta, sm.runID)
		}
		if sm.dirty {
			t.touched[sm.runID] = sm.meta
		} else {
			delete(t.touched, sm.runID)
		}
	}
}

// insertRows inserts rows through the driver connection of the group's
// transaction, bypassing database/sql's per-argument conversion.
func (t *Tx) insertRows(c *sql.Conn, rows []emitRow) error {
	if len(rows) == 0 {
		return nil
	}
	err := c.Raw(func(dc any) error {
		conn, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("writer connection is a %T", dc)
		}
		return t.s.ins.insert(t.ctx, conn, rows)
	})
	if err != nil {
		first := rows[0].ev
		return fmt.Errorf("insert %d events from %s #%d: %w", len(rows), first.RunID, first.Sequence, err)
	}
	return nil
}

// eventInserter holds the event insert for 1, 2, 4, … maxEmitRows rows,
// prepared on the writer's driver connection; only the committer uses it.
type eventInserter struct {
	conn  *sqlite3.SQLiteConn
	stmts [emitSizes]*sqlite3.SQLiteStmt
	args  []driver.NamedValue
}

// insert writes rows with the fewest statements (a binary split of the
// count). Each statement runs through the driver's query path, which binds
// every argument and steps in one cgo call, instead of one call per
// argument on the exec path.
func (in *eventInserter) insert(ctx context.Context, conn *sqlite3.SQLiteConn, rows []emitRow) error {
	if in.conn != conn { // the pool replaced a broken connection
		in.close()
		in.conn = conn
		if _, err := conn.ExecContext(ctx, noAutoCheckpoint, nil); err != nil {
			return fmt.Errorf("writer connection: %w", err)
		}
	}
	for len(rows) > 0 {
		k := bits.Len(uint(min(len(rows), maxEmitRows))) - 1
		n := 1 << k
		st, err := in.stmt(ctx, k)
		if err != nil {
			return err
		}
		args := in.bind(rows[:n])
		rs, err := st.QueryContext(ctx, args)
		if err != nil {
			return err
		}
		// Step to the end rather than rely on the driver taking the first
		// step inside QueryContext.
		err = rs.Next(nil)
		if errors.Is(err, io.EOF) {
			err = nil
		}
		if err := errors.Join(err, rs.Close()); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

func (in *eventInserter) stmt(ctx context.Context, k int) (*sqlite3.SQLiteStmt, error) {
	if st := in.stmts[k]; st != nil {
		return st, nil
	}
	row := "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	q := `INSERT INTO events (run_id, seq, id, type, session_id, agent_id, ts, schema_version, payload, sum) VALUES ` +
		row + strings.Repeat(", "+row, 1<<k-1)
	st, err := in.conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("prepare the %d-row event insert: %w", 1<<k, err)
	}
	in.stmts[k] = st.(*sqlite3.SQLiteStmt)
	return in.stmts[k], nil
}

func (in *eventInserter) bind(rows []emitRow) []driver.NamedValue {
	if need := emitCols * len(rows); cap(in.args) < need {
		in.args = make([]driver.NamedValue, emitCols*maxEmitRows)
		for i := range in.args {
			in.args[i].Ordinal = i + 1
		}
	}
	args := in.args[:emitCols*len(rows)]
	for j := range rows {
		a, ev := args[emitCols*j:emitCols*j+emitCols], &rows[j].ev
		a[1].Value, a[2].Value, a[7].Value = ev.Sequence, ev.ID, int64(ev.SchemaVersion)
		// The payload column is TEXT in a STRICT table, so it is bound as a
		// string: a view of the bytes, which the driver copies before
		// binding and which nothing changes after Emit.
		a[8].Value = unsafe.String(unsafe.SliceData(ev.Payload), len(ev.Payload))
		a[9].Value = eventSum(ev) // checked on every read (checksum.go)
		// Rows mostly repeat the previous row's run, type and millisecond:
		// reuse its boxed values rather than allocate new ones.
		var p []driver.NamedValue
		pe := &backend.Event{}
		if j > 0 {
			p, pe = args[emitCols*(j-1):emitCols*j], &rows[j-1].ev
		}
		a[0].Value = box(p, 0, pe.RunID, ev.RunID)
		a[3].Value = box(p, 3, string(pe.Type), string(ev.Type))
		a[4].Value = box(p, 4, pe.SessionID, ev.SessionID)
		a[5].Value = box(p, 5, pe.AgentID, ev.AgentID)
		a[6].Value = box(p, 6, pe.Timestamp, ev.Timestamp)
	}
	return args
}

// box returns prev[i]'s value when v equals the previous row's, else v.
func box(prev []driver.NamedValue, i int, was, v string) driver.Value {
	if prev != nil && was == v {
		return prev[i].Value
	}
	return v
}

// close finalizes the statements; their connection must not be in use.
func (in *eventInserter) close() error {
	var errs []error
	for k, st := range in.stmts {
		if st != nil {
			errs = append(errs, st.Close())
			in.stmts[k] = nil
		}
	}
	return errors.Join(errs...)
}

// stamper formats event timestamps for the committer. Events committed in
// the same millisecond (the format's precision) share one string, which
// saves a time.Format per event at full ingestion rate.
type stamper struct {
	ms  int64
	str string
}

func (st *stamper) now() string {
	t := time.Now()
	if ms := t.UnixMilli(); ms != st.ms || st.str == "" {
		st.ms, st.str = ms, backend.Stamp(t)
	}
	return st.str
}
