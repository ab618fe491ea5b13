// Package store owns AgentHub's SQLite database: the embedded schema
// migrations, the single writer, and every query over workspaces, settings,
// sessions, runs, events, tool calls, approvals, checkpoints and the audit
// chain.
//
// Invariants: all writes go through one connection (w), so SQLite's single
// writer never contends with itself; reads use a separate pool and never block
// the writer (WAL). The database file is backed up before any pending
// migration, and no migration drops history. This package is the only importer
// of the SQLite driver and goose; it must not import engine, app or UI code,
// and it never stores secrets.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver, registered as "sqlite3"
	"github.com/pressly/goose/v3"

	"agenthub/backend"
)

//go:embed migrations/*.sql
var embedded embed.FS

// Migrations returns the embedded migration files (goose applies them in order).
func Migrations() fs.FS {
	sub, err := fs.Sub(embedded, "migrations")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder exists
	}
	return sub
}

// dsnParams: WAL, foreign keys, a busy timeout and BEGIN IMMEDIATE for every
// transaction, so a write transaction takes the lock up front instead of
// failing with SQLITE_BUSY on upgrade. synchronous=NORMAL is durable against
// process crashes in WAL mode (only an OS crash may lose the last commits).
const dsnParams = "_foreign_keys=on&_journal_mode=WAL&_busy_timeout=5000&_txlock=immediate&_synchronous=NORMAL"

// Store is the database handle. It is safe for concurrent use.
type Store struct {
	path string
	w    *sql.DB // the single writer: one connection
	r    *sql.DB // readers
	ckpt *checkpointer

	// The committer's statements, prepared once on w: every job runs them.
	insEvent, spBegin, spRelease *sql.Stmt

	jobs          chan jobReq
	jobsMu        sync.RWMutex
	jobsClosed    bool
	committerDone chan struct{}
	meta          map[string]runMeta // committer-only cache of run sequences
	ins           eventInserter      // committer-only: the emits' inserts
	stamp         stamper            // committer-only: event timestamps

	pubMu sync.RWMutex
	pub   backend.Sink

	red redactorSlot // see [Store.SetRedactor]
	// scanned holds the sha256 of artifact contents ScanArtifact has
	// already redacted and checked, off the committer (artifact.go).
	scanned sync.Map

	audit auditState // the chain's key and anchor (audit.go); set by Open

	indexBehind bool        // committer-only: the search index may lag the events (search_index.go)
	searchable  atomic.Bool // the schema has the search index (false only under older test migrations)
}

// By says who made a change, for its audit entry.
type By struct {
	Actor   string
	Surface backend.Surface
}

// Open creates the file and its parent directory if needed, switches to WAL,
// backs the file up if migrations are pending, applies the embedded
// migrations and returns the store.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, Migrations())
}

func open(ctx context.Context, path string, migrations fs.FS) (*Store, error) {
	s, err := openStore(ctx, path, migrations)
	if err != nil {
		return nil, storageError(path, err)
	}
	return s, nil
}

func openStore(ctx context.Context, path string, migrations fs.FS) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open store: create directory: %w", err)
	}
	existed := fileHasData(path)
	w, err := sql.Open("sqlite3", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	if _, err := w.ExecContext(ctx, noAutoCheckpoint); err != nil { // see checkpoint.go
		w.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := requireFTS5(ctx, w); err != nil { // search.go: a build without the sqlite_fts5 tag
		w.Close()
		return nil, err
	}
	if err := migrate(ctx, w, path, existed, migrations); err != nil {
		var failed *migrationFailed
		if errors.As(err, &failed) {
			return nil, failed.restore(w, path)
		}
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite3", dsn(path)+"&_query_only=1")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store readers: %w", err)
	}
	r.SetMaxOpenConns(4)
	ckpt, err := startCheckpointer(path)
	if err != nil {
		return nil, errors.Join(err, r.Close(), w.Close())
	}
	s := &Store{path: path, w: w, r: r, ckpt: ckpt, jobs: make(chan jobReq, 4096),
		committerDone: make(chan struct{}), meta: map[string]runMeta{}, indexBehind: true}
	if err := s.prepare(ctx); err != nil {
		return nil, errors.Join(err, s.closeStmts(), ckpt.close(), r.Close(), w.Close())
	}
	if err := s.openAudit(ctx); err != nil {
		return nil, errors.Join(err, s.closeStmts(), ckpt.close(), r.Close(), w.Close())
	}
	searchable, err := hasSearchIndex(ctx, w)
	if err != nil {
		return nil, errors.Join(err, s.closeStmts(), ckpt.close(), r.Close(), w.Close())
	}
	s.searchable.Store(searchable)
	go s.committer()
	return s, nil
}

func dsn(path string) string {
	// Escape the characters that would end the path part of a SQLite URI.
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + esc + "?" + dsnParams
}

func fileHasData(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > 0
}

// migrate backs the database up (when it already held data) and applies every
// pending migration, each in its own transaction.
func migrate(ctx context.Context, db *sql.DB, path string, existed bool, migrations fs.FS) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migrate store: %w", err)
	}
	if err := refuseTooNew(ctx, db, p, path); err != nil {
		return err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("migrate store: check pending: %w", err)
	}
	if !pending {
		return nil
	}
	var bak string
	var cur int64
	if existed {
		if cur, err = p.GetDBVersion(ctx); err != nil {
			return fmt.Errorf("migrate store: read version: %w", err)
		}
		if bak, err = backup(ctx, db, path, cur); err != nil {
			return err
		}
	}
	res, err := p.Up(ctx)
	if err != nil {
		return &migrationFailed{backup: bak, from: cur, err: err}
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", maxVersion(p))); err != nil {
		return fmt.Errorf("migrate store: stamp version: %w", err)
	}
	for _, r := range res {
		slog.Info("store migrated", "version", r.Source.Version, "duration_ms", r.Duration.Milliseconds())
	}
	return nil
}

// backup writes a consistent copy next to the database with VACUUM INTO,
// which is safe with WAL and never touches the original.
// Backups are rotated: the newest keepBackups are kept.
func backup(ctx context.Context, db *sql.DB, path string, version int64) (string, error) {
	name := fmt.Sprintf("%s.v%d-%s.bak", path, version, time.Now().UTC().Format("20060102T150405.000000000"))
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", name); err != nil {
		return "", fmt.Errorf("back up store before migration: %w", errors.Join(err, removeIfExists(name)))
	}
	slog.Info("store backed up before migration", "from_version", version, "file", filepath.Base(name))
	if err := rotateBackups(path); err != nil {
		slog.Warn("old store backups not removed", "err", err)
	}
	return name, nil
}

func removeIfExists(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// maxVersion is the newest migration this build knows.
func maxVersion(p *goose.Provider) int64 {
	var v int64
	for _, src := range p.ListSources() {
		v = max(v, src.Version)
	}
	return v
}

// refuseTooNew refuses a database a newer AgentHub migrated (its goose
// version or its user_version stamp past this build's newest migration)
// before anything writes to it.
func refuseTooNew(ctx context.Context, db *sql.DB, p *goose.Provider, path string) error {
	known := maxVersion(p)
	var stamped int64
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&stamped); err != nil {
		return fmt.Errorf("migrate store: read user_version: %w", err)
	}
	var applied int64
	err := db.QueryRowContext(ctx, `SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied`).
		Scan(&applied)
	if err != nil && !strings.Contains(err.Error(), "no such table") {
		return fmt.Errorf("migrate store: read version: %w", err)
	}
	if v := max(stamped, applied); v > known {
		return &backend.Error{Code: backend.CodeStoreTooNew,
			Err: fmt.Errorf("database schema version %d, this build knows up to %d", v, known),
			Message: fmt.Sprintf("The database %s was written by a newer AgentHub (schema version %d; this one "+
				"knows up to %d), so it is not opened: writing it could lose what the newer version stored.",
				filepath.Base(path), v, known),
			Next: fmt.Sprintf("Install the AgentHub version that last used this data directory (schema %d or "+
				"later), or pass --home DIR to use another data directory.", v)}
	}
	return nil
}

// migrationFailed is a migration that failed after the backup was taken.
type migrationFailed struct {
	backup string // "" for a database that held nothing
	from   int64
	err    error
}

func (m *migrationFailed) Error() string { return "migrate store: " + m.err.Error() }
func (m *migrationFailed) Unwrap() error { return m.err }

// restore closes the writer and puts the backup back in place of the
// partly migrated file (its -wal and -shm removed), so that the database is
// exactly as it was before; it says so in the error.
func (m *migrationFailed) restore(w *sql.DB, path string) error {
	cerr := w.Close()
	if m.backup == "" {
		err := errors.Join(cerr, removeIfExists(path), removeIfExists(path+"-wal"), removeIfExists(path+"-shm"))
		return &backend.Error{Code: backend.CodeStoreMigration, Err: errors.Join(m, err),
			Message: "Creating the database failed: " + m.err.Error() + "; the new, empty file was removed.",
			Next:    "Report the error, then install a fixed version of AgentHub."}
	}
	err := errors.Join(cerr, copyFile(m.backup, path+".restore"), removeIfExists(path+"-wal"),
		removeIfExists(path+"-shm"))
	if err == nil {
		err = os.Rename(path+".restore", path)
	}
	if err != nil {
		return &backend.Error{Code: backend.CodeStoreMigration, Err: errors.Join(m, err),
			Message: fmt.Sprintf("Updating the database from schema %d failed, and putting back its backup %s "+
				"failed too.", m.from, filepath.Base(m.backup)),
			Next: "Stop AgentHub, copy " + filepath.Base(m.backup) + " (in the data directory) to " +
				filepath.Base(path) + ", and install a fixed version of AgentHub."}
	}
	slog.Error("store migration failed; the backup was put back", "backup", filepath.Base(m.backup), "err", m.err)
	return &backend.Error{Code: backend.CodeStoreMigration, Err: m,
		Message: fmt.Sprintf("Updating the database from schema %d failed: %v. It was restored from its backup %s, "+
			"so nothing was lost.", m.from, m.err, filepath.Base(m.backup)),
		Next: "Report the error, then install a fixed version of AgentHub; this one fails the same way each start."}
}

// copyFile copies src to dst and syncs it.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Sync(), out.Close())
}

// Close closes both pools. The WAL is checkpointed by SQLite on the last close.
// Jobs already submitted are committed first.
func (s *Store) Close() error {
	s.jobsMu.Lock()
	if !s.jobsClosed {
		s.jobsClosed = true
		close(s.jobs)
	}
	s.jobsMu.Unlock()
	<-s.committerDone
	return errors.Join(s.closeInserter(), s.closeStmts(), s.ckpt.close(), s.r.Close(), s.w.Close())
}

// closeInserter finalizes the emits' statements on their connection, once
// the committer has stopped.
func (s *Store) closeInserter() error {
	if s.ins.conn == nil {
		return nil
	}
	c, err := s.w.Conn(context.Background())
	if err != nil {
		return fmt.Errorf("close event inserts: %w", err)
	}
	defer c.Close()
	return c.Raw(func(any) error { return s.ins.close() })
}

func (s *Store) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&s.insEvent, `INSERT INTO events (run_id, seq, id, type, session_id, agent_id, ts, schema_version, payload,
			sum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&s.spBegin, "SAVEPOINT job"},
		{&s.spRelease, "RELEASE job"},
	} {
		st, err := s.w.PrepareContext(ctx, p.query)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.query, err)
		}
		*p.stmt = st
	}
	return nil
}

func (s *Store) closeStmts() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.insEvent, s.spBegin, s.spRelease} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// Integrity runs PRAGMA integrity_check and returns nil when it says "ok".
func (s *Store) Integrity(ctx context.Context) error {
	var res string
	db, err := s.freshReader() // search_index.go: not a pooled reader
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("integrity check: %s", res)
	}
	return nil
}

// tx runs fn in one write transaction (BEGIN IMMEDIATE) and commits it.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return storageError(s.path, fmt.Errorf("begin: %w", err))
	}
	if err := fn(tx); err != nil {
		return storageError(s.path, errors.Join(err, rollback(tx)))
	}
	if err := tx.Commit(); err != nil {
		return storageError(s.path, fmt.Errorf("commit: %w", err))
	}
	return nil
}

func rollback(tx *sql.Tx) error {
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("rollback: %w", err)
	}
	return nil
}

func now() string { return backend.Stamp(time.Now()) }
