package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"agenthub/backend"
)

// Job is one unit of work committed by the group committer. It runs inside a
// savepoint: if it fails, only its own writes are undone.
type Job func(*Tx) error

type jobReq struct {
	fn   Job
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
	s.jobsMu.RLock()
	defer s.jobsMu.RUnlock()
	if s.jobsClosed {
		if done != nil {
			done(nil, ErrClosed)
		}
		return
	}
	s.jobs <- jobReq{fn: fn, done: done}
}

// SetPublisher sets where committed events go. It must never block (EV7).
func (s *Store) SetPublisher(p backend.Sink) {
	s.pubMu.Lock()
	s.pub = p
	s.pubMu.Unlock()
}

func (s *Store) committer() {
	defer close(s.committerDone)
	for first := range s.jobs {
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
	ctx := context.Background()
	commitErr := func() error {
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("begin group: %w", err)
		}
		t := &Tx{ctx: ctx, tx: tx, s: s, touched: map[string]runMeta{}}
		for i, j := range group {
			evs[i], errs[i] = t.runJob(j.fn)
		}
		if err := t.flushSeqs(); err != nil {
			return errors.Join(err, rollback(tx))
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("commit group: %w", err)
		}
		return nil
	}()
	if commitErr != nil {
		s.meta = map[string]runMeta{} // the cache may hold uncommitted sequences
		for i := range group {
			evs[i], errs[i] = nil, commitErr
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
	tx      *sql.Tx
	s       *Store
	touched map[string]runMeta // runs whose last_seq must be written back
	undo    map[string]*runMeta
	events  []backend.Event
}

func (t *Tx) runJob(fn Job) (evs []backend.Event, err error) {
	if _, err := t.tx.ExecContext(t.ctx, "SAVEPOINT job"); err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	t.undo, t.events = map[string]*runMeta{}, nil
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("job panicked: %v", r)
		}
		if err != nil {
			for id, m := range t.undo {
				if m == nil {
					delete(t.s.meta, id)
				} else {
					t.s.meta[id] = *m
				}
			}
			_, rbErr := t.tx.ExecContext(t.ctx, "ROLLBACK TO job; RELEASE job")
			err = errors.Join(err, rbErr)
			evs = nil
		}
	}()
	if err = fn(t); err != nil {
		return nil, err
	}
	if _, err = t.tx.ExecContext(t.ctx, "RELEASE job"); err != nil {
		return nil, fmt.Errorf("release savepoint: %w", err)
	}
	return t.events, nil
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
		return m, fmt.Errorf("run %s: %w", runID, backend.ErrNotFound)
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

func (t *Tx) append(runID string, m runMeta, typ backend.EventType, payload any) (backend.Event, error) {
	raw, err := rawJSON(payload)
	if err != nil {
		return backend.Event{}, fmt.Errorf("encode %s payload: %w", typ, err)
	}
	m.lastSeq++
	ev := backend.Event{SchemaVersion: backend.SchemaVersion, ID: backend.NewID(backend.PrefixEvent),
		Sequence: m.lastSeq, Type: typ, RunID: runID, SessionID: m.session, AgentID: m.agent,
		Timestamp: backend.Stamp(time.Now()), Payload: raw}
	if err := t.insertEvent(ev); err != nil {
		return backend.Event{}, err
	}
	t.setMeta(runID, m)
	t.events = append(t.events, ev)
	return ev, nil
}

func (t *Tx) insertEvent(ev backend.Event) error {
	stmt := t.tx.StmtContext(t.ctx, t.s.insEvent)
	_, err := stmt.ExecContext(t.ctx, ev.RunID, ev.Sequence, ev.ID, string(ev.Type), ev.SessionID, ev.AgentID,
		ev.Timestamp, ev.SchemaVersion, string(ev.Payload))
	if err != nil {
		return fmt.Errorf("insert event %s #%d: %w", ev.RunID, ev.Sequence, err)
	}
	return nil
}

// flushSeqs writes each touched run's last sequence once per transaction.
func (t *Tx) flushSeqs() error {
	for id, m := range t.touched {
		if _, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET last_seq = ?, last_event_at = ? WHERE id = ?`,
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
	return appendAudit(t.ctx, t.tx, e)
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
