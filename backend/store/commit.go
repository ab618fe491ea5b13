package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"agenthub/backend"
	"agenthub/workspace/crashpoint"
)

// Job is one unit of work committed by the group committer. If it fails (an
// error or a panic), only its own writes are undone: its savepoint is rolled
// back and the events it appended before opening one are deleted.
type Job func(*Tx) error

// jobReq is a job or, when fn is nil, an emit ([Store.Emit]).
type jobReq struct {
	fn   Job
	emit emitReq
	done func([]backend.Event, error)
}

// maxGroup bounds how many jobs share one transaction (group commit, §3).
const maxGroup = 2000

// ErrClosed is returned for jobs submitted after Close.
var ErrClosed = errors.New("store closed")

// Do runs fn in the next group-commit transaction and waits for the commit.
// The returned events are committed; they were already handed to the
// publisher, in order, before Do returns (EV6).
func (s *Store) Do(ctx context.Context, fn Job) ([]backend.Event, error) {
	type result struct {
		evs []backend.Event
		err error
	}
	ch := make(chan result, 1)
	s.Go(fn, func(evs []backend.Event, err error) { ch <- result{evs, err} })
	select {
	case r := <-ch:
		return r.evs, r.err
	case <-ctx.Done():
		// The job may still commit; its events are published either way.
		return nil, fmt.Errorf("wait for commit: %w", ctx.Err())
	}
}

// Go submits fn without waiting; done (optional) runs on the committer after
// the commit and after publication. Jobs commit in submission order, so one
// goroutine's events keep their order.
func (s *Store) Go(fn Job, done func([]backend.Event, error)) {
	s.submit(jobReq{fn: fn, done: done})
}

func (s *Store) submit(j jobReq) {
	s.jobsMu.RLock()
	defer s.jobsMu.RUnlock()
	if s.jobsClosed {
		if j.done != nil {
			j.done(nil, ErrClosed)
		}
		return
	}
	s.jobs <- j
}

// SetPublisher sets where committed events go. It must never block (EV7).
func (s *Store) SetPublisher(p backend.Sink) {
	s.pubMu.Lock()
	s.pub = p
	s.pubMu.Unlock()
}

func (s *Store) committer() {
	defer close(s.committerDone)
	for {
		first, ok := s.nextJob() // search_index.go: indexes behind the commits while no job waits
		if !ok {
			return
		}
		group := []jobReq{first}
	drain:
		for len(group) < maxGroup {
			select {
			case j, ok := <-s.jobs:
				if !ok {
					break drain
				}
				group = append(group, j)
			default:
				break drain
			}
		}
		s.runGroup(group)
	}
}

func (s *Store) runGroup(group []jobReq) {
	evs := make([][]backend.Event, len(group))
	errs := make([]error, len(group))
	if err := s.commitGroup(group, evs, errs); err != nil {
		err = storageError(s.path, err)
		s.meta = map[string]runMeta{} // the cache may hold uncommitted sequences
		for i := range group {
			evs[i], errs[i] = nil, err
		}
	} else {
		n := 0
		for _, e := range evs {
			for _, ev := range e {
				n += len(ev.Payload)
			}
		}
		if s.ckpt.committed(n) {
			s.truncateWAL()
		}
	}
	s.pubMu.RLock()
	pub := s.pub
	s.pubMu.RUnlock()
	for i, j := range group {
		if errs[i] == nil && pub != nil {
			for _, ev := range evs[i] {
				pub.Publish(ev)
			}
		}
		if j.done != nil {
			j.done(evs[i], errs[i])
		}
	}
}

// commitGroup runs the group's jobs and emits, in order, in one
// transaction. Emits are staged and inserted together up to the next job,
// which must see them written.
func (s *Store) commitGroup(group []jobReq, evs [][]backend.Event, errs []error) error {
	ctx := context.Background()
	// A connection rather than the pool, so that emits reach its driver
	// connection inside the transaction (flushEmits).
	c, err := s.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin group: %w", err)
	}
	defer c.Close()
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin group: %w", err)
	}
	t := &Tx{ctx: ctx, s: s, touched: map[string]runMeta{}, undo: map[string]*runMeta{},
		ins: tx.StmtContext(ctx, s.insEvent), tx: &jobTx{Tx: tx, ctx: ctx,
			spBegin: tx.StmtContext(ctx, s.spBegin), spRelease: tx.StmtContext(ctx, s.spRelease)}}
	var staged []int
	for i, j := range group {
		if j.fn == nil {
			staged = append(staged, i)
			continue
		}
		t.flushEmits(c, group, staged, evs, errs)
		staged = staged[:0]
		evs[i], errs[i] = t.runJob(j.fn)
	}
	t.flushEmits(c, group, staged, evs, errs)
	if t.broken != nil { // a failed job could not be undone: keep none of the group
		return errors.Join(t.broken, rollback(tx))
	}
	if err := t.flushSeqs(); err != nil {
		return errors.Join(err, rollback(tx))
	}
	if err := crashpoint.Hit("store.commit"); err != nil { // the crash suite's failed commit
		return errors.Join(fmt.Errorf("commit group: %w", err), rollback(tx))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit group: %w", err)
	}
	// A crash right after the commit; an injected fault here has nothing to
	// fail, the group is committed.
	_ = crashpoint.Hit("store.committed")
	if t.audited { // after the commit, never before: see anchor.go
		t.s.anchorHead(ctx)
	}
	return nil
}

// runMeta caches what an event append needs about its run; only the
// committer goroutine touches it.
type runMeta struct {
	session, agent string
	lastSeq        int64
	state          backend.RunState
}

// Tx is a write transaction of the group committer. Its methods assign event
// sequences and keep the run's lifecycle rules.
type Tx struct {
	ctx     context.Context
	tx      *jobTx
	s       *Store
	ins     *sql.Stmt          // the event insert, bound to this transaction once
	touched map[string]runMeta // runs whose last_seq must be written back
	undo    map[string]*runMeta
	events  []backend.Event
	early   []int64 // rowids of events the job appended before its savepoint
	broken  error   // a failed job whose writes could not be undone
	audited bool    // an audit entry was appended: move the anchor after the commit
}

// jobTx is the group's transaction as a job sees it. The job's savepoint is
// opened by its first write other than an event append (every write but
// [Tx.insertEvent] goes through ExecContext), so a job that only appends
// events, as every streamed delta does, runs without one: measured, a
// SAVEPOINT and RELEASE pair per event cost a sixth of the ingestion rate.
type jobTx struct {
	*sql.Tx
	ctx                context.Context
	spBegin, spRelease *sql.Stmt
	open               bool // the current job's savepoint is open
}

// ExecContext opens the job's savepoint, then runs the statement.
func (j *jobTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := j.savepoint(); err != nil {
		return nil, err
	}
	return j.Tx.ExecContext(ctx, query, args...)
}

func (j *jobTx) savepoint() error {
	if j.open {
		return nil
	}
	if _, err := j.spBegin.ExecContext(j.ctx); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	j.open = true
	return nil
}

func (t *Tx) runJob(fn Job) (evs []backend.Event, err error) {
	clear(t.undo)
	t.events, t.early = nil, t.early[:0]
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("job panicked: %v", r)
		}
		if err != nil {
			for id, m := range t.undo { // and what flushSeqs writes back
				if m == nil {
					delete(t.s.meta, id)
					delete(t.touched, id)
				} else {
					t.s.meta[id], t.touched[id] = *m, *m
				}
			}
			if uerr := t.undoJob(); uerr != nil {
				t.broken = fmt.Errorf("undo a failed job: %w", uerr)
				err = errors.Join(err, t.broken)
			}
			evs = nil
		}
	}()
	if err = fn(t); err != nil {
		return nil, err
	}
	if t.tx.open {
		t.tx.open = false
		if _, err = t.tx.spRelease.ExecContext(t.ctx); err != nil {
			return nil, fmt.Errorf("release savepoint: %w", err)
		}
	}
	return t.events, nil
}

// undoJob removes a failed job's writes: everything after its savepoint,
// then the events it appended before opening one. A failed statement has
// already undone itself (SQLite statement atomicity).
func (t *Tx) undoJob() error {
	var errs []error
	if t.tx.open {
		t.tx.open = false
		_, err := t.tx.Tx.ExecContext(t.ctx, "ROLLBACK TO job; RELEASE job")
		errs = append(errs, err)
	}
	for _, pos := range t.early {
		_, err := t.tx.Tx.ExecContext(t.ctx, `DELETE FROM events WHERE pos = ?`, pos)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// meta loads the cached run record, reading it once per committer lifetime.
func (t *Tx) meta(runID string) (runMeta, error) {
	if m, ok := t.s.meta[runID]; ok {
		return m, nil
	}
	var m runMeta
	err := t.tx.QueryRowContext(t.ctx, `SELECT session_id, agent_id, last_seq, state FROM runs WHERE id = ?`,
		runID).Scan(&m.session, &m.agent, &m.lastSeq, &m.state)
	if errors.Is(err, sql.ErrNoRows) {
		return m, &backend.NotFound{Kind: "run", ID: runID}
	}
	if err != nil {
		return m, fmt.Errorf("read run %s: %w", runID, err)
	}
	return m, nil
}

func (t *Tx) setMeta(runID string, m runMeta) {
	if _, saved := t.undo[runID]; !saved {
		if old, ok := t.s.meta[runID]; ok {
			t.undo[runID] = &old
		} else {
			t.undo[runID] = nil
		}
	}
	t.s.meta[runID] = m
	t.touched[runID] = m
}

// Append stores one event of a run with the next sequence. Events of a run
// in a terminal state are refused (LC2) unless they are the terminal event
// itself, appended by Transition.
func (t *Tx) Append(runID string, typ backend.EventType, payload any) (backend.Event, error) {
	m, err := t.meta(runID)
	if err != nil {
		return backend.Event{}, err
	}
	if m.state.Terminal() {
		return backend.Event{}, fmt.Errorf("append %s to run %s: run is %s: %w", typ, runID, m.state,
			backend.ErrIllegalTransition)
	}
	return t.append(runID, m, typ, payload)
}

// Annotate appends to a run that may have ended an event about what the
// run left in the workspace, never a change of the run's state: a workspace
// conflict that recovery finds after the run ended, and the user's later
// resolution of a conflict (the one exception to LC2).
func (t *Tx) Annotate(runID string, typ backend.EventType, payload any) (backend.Event, error) {
	if typ != backend.EvWorkspaceConflictResolved && typ != backend.EvWorkspaceConflict {
		return backend.Event{}, fmt.Errorf("annotate run %s with %s: not an annotation: %w", runID, typ,
			backend.ErrIllegalTransition)
	}
	m, err := t.meta(runID)
	if err != nil {
		return backend.Event{}, err
	}
	return t.append(runID, m, typ, payload)
}

func (t *Tx) append(runID string, m runMeta, typ backend.EventType, payload any) (backend.Event, error) {
	raw, err := rawJSON(payload)
	if err != nil {
		return backend.Event{}, fmt.Errorf("encode %s payload: %w", typ, err)
	}
	raw = t.s.red.json(raw) // payloads are secret-free (EV11)
	m.lastSeq++
	ev := backend.Event{SchemaVersion: backend.SchemaVersion, ID: backend.NewID(backend.PrefixEvent),
		Sequence: m.lastSeq, Type: typ, RunID: runID, SessionID: m.session, AgentID: m.agent,
		Timestamp: t.s.stamp.now(), Payload: raw}
	if err := t.insertEvent(ev); err != nil {
		return backend.Event{}, err
	}
	t.setMeta(runID, m)
	t.events = append(t.events, ev)
	return ev, nil
}

func (t *Tx) insertEvent(ev backend.Event) error {
	res, err := t.ins.ExecContext(t.ctx, ev.RunID, ev.Sequence, ev.ID, string(ev.Type), ev.SessionID, ev.AgentID,
		ev.Timestamp, ev.SchemaVersion, string(ev.Payload), eventSum(&ev))
	if err != nil {
		return fmt.Errorf("insert event %s #%d: %w", ev.RunID, ev.Sequence, err)
	}
	if !t.tx.open { // not covered by a savepoint: remember it for undoJob
		pos, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("insert event %s #%d: rowid: %w", ev.RunID, ev.Sequence, err)
		}
		t.early = append(t.early, pos)
	}
	return nil
}

// flushSeqs writes each touched run's last sequence once per transaction.
func (t *Tx) flushSeqs() error {
	for id, m := range t.touched {
		if _, err := t.tx.Tx.ExecContext(t.ctx, `UPDATE runs SET last_seq = ?, last_event_at = ? WHERE id = ?`,
			m.lastSeq, now(), id); err != nil {
			return fmt.Errorf("update run %s sequence: %w", id, err)
		}
	}
	return nil
}

// Exec runs a raw statement inside the job (for tests and one-off writes).
func (t *Tx) Exec(query string, args ...any) error {
	if _, err := t.tx.ExecContext(t.ctx, query, args...); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	return nil
}

// Audit appends an audit entry in this transaction (AU1).
func (t *Tx) Audit(e backend.AuditEntry) (backend.AuditEntry, error) {
	if err := t.tx.savepoint(); err != nil {
		return e, err
	}
	t.audited = true
	return t.s.appendAudit(t.ctx, t.tx.Tx, t.s.red.audit(e))
}

func rawJSON(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		if len(x) == 0 {
			return json.RawMessage("{}"), nil
		}
		return x, nil
	case []byte:
		return json.RawMessage(x), nil
	}
	return json.Marshal(v)
}
