package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"agenthub/backend"
)

// The search index is written right behind the commits: the committer
// indexes committed events while no job waits (nextJob), a bounded batch at
// a time, so a run's commits never wait for more than one batch. The
// setting search.indexed_pos is the last event pos indexed (migration 00005).

// indexBatch bounds the events indexed in one transaction between jobs:
// about 40 to 70 µs each (docs/PERFORMANCE.md), so a job arriving meanwhile
// waits at most a couple of milliseconds.
const indexBatch = 32

// indexIdle is how long the jobs must pause before a batch is indexed.
const indexIdle = 2 * time.Millisecond

const indexedPosKey = "search.indexed_pos"

// indexText is the text of one event's payload: every string but ids and
// hashes, bounded. The same expression as migration 00005's.
const indexText = `(SELECT substr(group_concat(value, ' '), 1, 65536) FROM json_tree(e.payload)
	WHERE type = 'text' AND key NOT IN ('id', 'messageId', 'toolCallId', 'approvalId', 'decisionId', 'checkpointId',
		'subjectHash', 'preimage', 'postimage', 'runId', 'sessionId', 'agentId'))`

// notIndexed are the event types left out of the index: streamed deltas
// (their text arrives whole in the completed events) and bookkeeping.
const notIndexed = `('run.message.delta', 'run.tool.delta', 'run.checkpoint.created', 'run.status.changed',
	'run.context.compacted', 'runtime.started')`

// indexPending indexes up to limit committed events after the cursor and
// moves it; more reports whether events are left.
func (t *Tx) indexPending(limit int) (more bool, err error) {
	var raw string
	err = t.tx.QueryRowContext(t.ctx, `SELECT value FROM settings WHERE key = ?`, indexedPosKey).Scan(&raw)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("index search: read the cursor: %w", err)
	}
	cursor, _ := strconv.ParseInt(raw, 10, 64)
	var last, top sql.NullInt64
	err = t.tx.QueryRowContext(t.ctx, `SELECT max(pos), (SELECT max(pos) FROM events) FROM (SELECT pos FROM events
		WHERE pos > ? AND type NOT IN `+notIndexed+` ORDER BY pos LIMIT ?)`, cursor, limit).Scan(&last, &top)
	if err != nil {
		return false, fmt.Errorf("index search: %w", err)
	}
	if !top.Valid || top.Int64 <= cursor {
		return false, nil
	}
	next := top.Int64 // nothing indexable left: the cursor passes every event
	if last.Valid {
		if _, err := t.tx.ExecContext(t.ctx, `INSERT OR REPLACE INTO search_text (rowid, body)
			SELECT e.pos, `+indexText+` AS body FROM events e
			WHERE e.pos > ? AND e.pos <= ? AND e.type NOT IN `+notIndexed+` AND body IS NOT NULL`,
			cursor, last.Int64); err != nil {
			return false, fmt.Errorf("index search: %w", err)
		}
		var after int64
		err := t.tx.QueryRowContext(t.ctx, `SELECT count(*) FROM (SELECT 1 FROM events WHERE pos > ? AND type NOT IN `+
			notIndexed+` LIMIT 1)`, last.Int64).Scan(&after)
		if err != nil {
			return false, fmt.Errorf("index search: %w", err)
		}
		if after > 0 {
			next, more = last.Int64, true
		}
	}
	if _, err := t.tx.ExecContext(t.ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, indexedPosKey, strconv.FormatInt(next, 10)); err != nil {
		return false, fmt.Errorf("index search: move the cursor: %w", err)
	}
	return more, nil
}

// nextJob returns the next job; while none waits and the index is behind,
// it indexes one batch at a time in between.
func (s *Store) nextJob() (jobReq, bool) {
	for {
		select {
		case j, ok := <-s.jobs:
			s.indexBehind = true // whatever it commits may need indexing
			return j, ok
		default:
		}
		if !s.indexBehind || !s.searchable.Load() {
			j, ok := <-s.jobs
			s.indexBehind = true
			return j, ok
		}
		// Index only once the jobs pause: during a burst the commits go
		// first and the index catches up after it.
		idle := time.NewTimer(indexIdle)
		select {
		case j, ok := <-s.jobs:
			idle.Stop()
			return j, ok
		case <-idle.C:
		}
		more := false
		s.runGroup([]jobReq{{fn: func(t *Tx) error {
			var err error
			more, err = t.indexPending(indexBatch)
			return err
		}, done: func(_ []backend.Event, err error) {
			if err != nil { // tried again after the next job
				slog.Warn("search index not updated", "err", err)
			}
		}}})
		s.indexBehind = more
	}
}

// FlushIndex indexes every committed event not indexed yet, in the
// committer's next transaction, and returns once it is searchable.
func (s *Store) FlushIndex(ctx context.Context) error {
	_, err := s.Do(ctx, func(t *Tx) error {
		for {
			more, err := t.indexPending(4096)
			if err != nil || !more {
				return err
			}
		}
	})
	return err
}

// IndexBehind reports whether committed events wait to be indexed (read
// from a reader: no write).
func (s *Store) IndexBehind(ctx context.Context) (bool, error) {
	var behind bool
	err := s.r.QueryRowContext(ctx, `SELECT coalesce((SELECT max(pos) FROM events), 0) >
		coalesce((SELECT CAST(value AS INTEGER) FROM settings WHERE key = ?), 0)`, indexedPosKey).Scan(&behind)
	if err != nil {
		return false, fmt.Errorf("search index state: %w", err)
	}
	return behind, nil
}

// hasSearchIndex reports whether the schema holds search_text.
func hasSearchIndex(ctx context.Context, db *sql.DB) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'search_text'`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("open store: look for the search index: %w", err)
	}
	return n > 0, nil
}

// freshReader opens a reader of its own for an integrity check; the caller
// closes it. FTS5's check on a pooled reader compares the index with totals
// that connection cached before the index last grew, and reports a checksum
// mismatch that is not there (a fresh connection and the writer say ok).
func (s *Store) freshReader() (*sql.DB, error) {
	db, err := sql.Open("sqlite3", dsn(s.path)+"&_query_only=1")
	if err != nil {
		return nil, fmt.Errorf("open a reader for the check: %w", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}
