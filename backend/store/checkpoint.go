package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// The writer runs with wal_autocheckpoint off and this checkpointer copies
// the WAL into the database file on its own connection instead. SQLite's
// automatic checkpoint runs inside the commit that crosses 1,000 WAL pages:
// it copies every page and syncs the file on the single writer's path.
// Measured, that was the tail of the commit latency at 2,000 events/s (p99
// 8–10 ms with it, 0.4–1.7 ms without), and moving it took the engine's
// ingestion from 73–86 % to 103–134 % of the raw insert rate. A PASSIVE
// checkpoint runs beside the writer without blocking it, so this keeps
// checkpoints (every checkpointBytes of WAL) off the commit path. The file
// stays as durable: committed frames are in the WAL either way.

// A PASSIVE checkpoint never resets the WAL while a reader holds a snapshot
// that needs it, so under a busy reader the file only grows (seen: 572 MB of
// WAL beside a 79 MB database after 1,800 short runs). The checkpointer
// therefore also runs a TRUNCATE checkpoint, which waits for the readers to
// move to the newest snapshot, copies every frame and truncates the file to
// zero bytes: when the WAL passes walLimit, and when the writer has been
// idle for idleAfter. TRUNCATE holds the write lock while it waits, so it is
// kept off the steady path; a busy answer (a reader outlasted the busy
// timeout) is retried at the next occasion.

// walLimit is the WAL size past which the checkpointer truncates it.
var walLimit int64 = 64 << 20

// idleAfter is how long the writer must be idle before the WAL is truncated.
const idleAfter = time.Second

// noAutoCheckpoint is run on the writer's connection.
const noAutoCheckpoint = "PRAGMA wal_autocheckpoint=0"

// checkpointBytes is how much WAL the committer lets accumulate before it
// asks for a checkpoint: 8,000 pages of 4 KiB (32 MB, half of walLimit).
// It was SQLite's default of 1,000 pages; measured (BenchmarkIngest/store,
// six alternating runs, docs/PERFORMANCE.md), eight times fewer
// checkpoints took the store's CPU per event down by a fifth (pages
// rewritten between two checkpoints are copied once, and each checkpoint's
// fsync stalls the writer's WAL appends on the same disk) and its
// ingestion from 52 % to 85 % of the fastest reference in the median.
// Durability does not change (committed frames are in the WAL); a crash
// replays at most this much more WAL on the next open.
const checkpointBytes = 8000 * 4096

// groupPages estimates the WAL pages a commit writes beyond its events'
// bytes: the leaf pages of the events table, its index and the runs row.
const groupPages = 3

type checkpointer struct {
	db        *sql.DB
	walPath   string
	kick      chan struct{}
	active    chan struct{} // a group committed: the idle timer starts again
	stopped   chan struct{}
	once      sync.Once
	pending   int // estimated WAL bytes since the last kick; committer-only
	sinceStat int // estimated WAL bytes since the last size check; committer-only
}

func startCheckpointer(path string) (*checkpointer, error) {
	db, err := sql.Open("sqlite3", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open checkpointer: %w", err)
	}
	db.SetMaxOpenConns(1)
	c := &checkpointer{db: db, walPath: path + "-wal", kick: make(chan struct{}, 1),
		active: make(chan struct{}, 1), stopped: make(chan struct{})}
	go c.run()
	return c, nil
}

// committed adds a group's estimated WAL bytes and kicks a checkpoint once
// enough have accumulated; it never blocks the committer. It reports
// whether the WAL has passed walLimit: the committer then truncates it
// itself, between two groups, where it never competes for the write lock
// (from the checkpointer's connection, a TRUNCATE lost that race to a busy
// writer often enough to let the WAL reach 15 times the bound).
func (c *checkpointer) committed(eventBytes int) (overLimit bool) {
	select {
	case c.active <- struct{}{}:
	default:
	}
	c.pending += eventBytes + groupPages*4096
	c.sinceStat += eventBytes + groupPages*4096
	if c.sinceStat >= statBytes {
		c.sinceStat = 0
		overLimit = c.walSize() > walLimit
	}
	if c.pending < checkpointBytes {
		return overLimit
	}
	c.pending = 0
	select {
	case c.kick <- struct{}{}:
	default: // one is already due
	}
	return overLimit
}

// statBytes is how many estimated WAL bytes pass between two looks at the
// WAL file's size.
const statBytes = 256 << 10

func (c *checkpointer) run() {
	defer close(c.stopped)
	idle := time.NewTimer(idleAfter)
	defer idle.Stop()
	dirty := true // a WAL left by an earlier process is truncated once idle too
	for {
		select {
		case _, ok := <-c.kick:
			if !ok {
				return
			}
			if _, _, err := c.checkpoint(context.Background(), "PASSIVE"); err != nil {
				slog.Warn("wal checkpoint failed", "err", err)
			}
		case <-c.active:
			dirty = true
			idle.Reset(idleAfter)
		case <-idle.C:
			if dirty {
				if c.truncate("the writer is idle") {
					dirty = false
				} else {
					idle.Reset(idleAfter) // a reader held it off: try again
				}
			}
		}
	}
}

// truncate runs a TRUNCATE checkpoint and reports whether it completed.
func (c *checkpointer) truncate(why string) bool {
	busy, err := c.checkpointBusy(context.Background(), "TRUNCATE")
	if err != nil {
		slog.Warn("wal checkpoint failed", "mode", "TRUNCATE", "why", why, "err", err)
		return false
	}
	if busy {
		slog.Debug("wal checkpoint busy; retried at the next occasion", "why", why)
	}
	return !busy
}

func (c *checkpointer) walSize() int64 {
	fi, err := os.Stat(c.walPath)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// truncateWait bounds how long a TRUNCATE checkpoint waits for the write
// lock and for readers, all the while holding the writer off; the writer's
// own busy timeout is far longer.
const truncateWait = "PRAGMA busy_timeout = 200"

func (c *checkpointer) checkpointBusy(ctx context.Context, mode string) (bool, error) {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("wal checkpoint %s: %w", mode, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, truncateWait); err != nil {
		return false, fmt.Errorf("wal checkpoint %s: %w", mode, err)
	}
	var busy, frames, done int
	err = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &frames, &done)
	if _, rerr := conn.ExecContext(ctx, "PRAGMA busy_timeout = 5000"); err == nil {
		err = rerr
	}
	if isBusy(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("wal checkpoint %s: %w", mode, err)
	}
	return busy != 0, nil
}

func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// checkpoint runs one checkpoint of mode and returns the WAL's frames and
// how many of them are now in the database file.
func (c *checkpointer) checkpoint(ctx context.Context, mode string) (frames, done int, err error) {
	var busy int
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &frames, &done); err != nil {
		return 0, 0, fmt.Errorf("wal checkpoint: %w", err)
	}
	return frames, done, nil
}

// close stops the goroutine; call it after the committer has stopped.
func (c *checkpointer) close() error {
	c.once.Do(func() { close(c.kick) })
	<-c.stopped
	if err := c.db.Close(); err != nil {
		return fmt.Errorf("close checkpointer: %w", err)
	}
	return nil
}

// truncateWAL runs a TRUNCATE checkpoint on the writer's connection, between
// two groups: it waits (up to the busy timeout) only for readers that still
// use old WAL frames, then copies the rest and empties the file. A reader
// that keeps a snapshot past that makes it report busy; it is tried again,
// backing off, for up to truncateRetry before the writer goes on, so that a
// reader slowed down by a busy machine does not let the WAL grow past its
// bound by the next groups, and a reader stuck for good cannot stop the
// writes.
func (s *Store) truncateWAL() {
	deadline := time.Now().Add(truncateRetry)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		var busy, frames, done int
		err := s.w.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &done)
		if err != nil && !isBusy(err) {
			slog.Warn("wal checkpoint failed", "mode", "TRUNCATE", "why", "the WAL passed its bound", "err", err)
			return
		}
		if err == nil && busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			slog.Warn("the WAL stays past its bound: a reader kept its snapshot", "retried_for", truncateRetry.String())
			return
		}
		time.Sleep(wait)
	}
}

// truncateRetry bounds how long the writer retries a TRUNCATE that readers
// hold off once the WAL has passed walLimit.
const truncateRetry = 3 * time.Second
