package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	sqlite3 "github.com/mattn/go-sqlite3"

	"agenthub/backend"
)

// storageError gives a storage fault its own stable code and next step
// (disk full, read-only, corrupt), keeping err as the cause in the chain, so
// that the cause is there whatever AGENTHUB_DEBUG says. Other errors, and
// errors already coded, pass through.
func storageError(path string, err error) error {
	if err == nil {
		return nil
	}
	var be *backend.Error
	if errors.As(err, &be) {
		return err
	}
	var se sqlite3.Error
	isSQLite := errors.As(err, &se)
	dir := filepath.Base(filepath.Dir(path))
	switch {
	case isSQLite && se.Code == sqlite3.ErrFull, errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT),
		errors.Is(err, syscall.EFBIG):
		return &backend.Error{Code: backend.CodeStorageFull, Err: err,
			Message: "The disk holding the data directory is full: " + usage(path) + ".",
			Next: "Free space on that disk (or raise the quota), then try again; nothing half-written was kept. " +
				"Old backups (" + filepath.Base(path) + ".v*.bak) in the data directory may be deleted."}
	case isSQLite && se.Code == sqlite3.ErrReadonly, errors.Is(err, syscall.EROFS), errors.Is(err, os.ErrPermission),
		isSQLite && se.Code == sqlite3.ErrCantOpen && !writable(path):
		return &backend.Error{Code: backend.CodeStorageReadOnly, Err: err,
			Message: "The database " + filepath.Base(path) + " cannot be written: the file, its directory (" + dir +
				") or the filesystem is read-only.",
			Next: "Make the data directory and " + filepath.Base(path) + "* writable by this user (or remount the " +
				"filesystem read-write), or pass --home DIR."}
	case isSQLite && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB):
		return corruptError(path, err)
	}
	return err
}

// corruptError is store_corrupt naming the backup to restore.
func corruptError(path string, err error) error {
	next := "Move " + filepath.Base(path) + " and its -wal/-shm files out of the data directory and start again " +
		"(a new, empty database is created); keep the damaged file for a report."
	if b := newestBackup(path); b != "" {
		next = "Stop AgentHub, move " + filepath.Base(path) + " and its -wal/-shm files aside, then copy the newest " +
			"backup " + b + " (in the data directory) to " + filepath.Base(path) + "."
	}
	return &backend.Error{Code: backend.CodeStoreCorrupt, Err: err,
		Message: "The database " + filepath.Base(path) + " is damaged.", Next: next}
}

// backups returns the database's migration backups, newest first (their
// names end in a UTC timestamp after the version).
func backups(path string) []string {
	names, _ := filepath.Glob(path + ".v*-*.bak")
	stamp := func(n string) string { return n[strings.LastIndex(n, "-")+1:] }
	sort.Slice(names, func(i, j int) bool { return stamp(names[i]) > stamp(names[j]) })
	return names
}

func newestBackup(path string) string {
	if b := backups(path); len(b) > 0 {
		return filepath.Base(b[0])
	}
	return ""
}

// keepBackups is how many migration backups are kept; older ones are
// deleted after each new one.
const keepBackups = 3

func rotateBackups(path string) error {
	var errs []error
	for i, b := range backups(path) {
		if i >= keepBackups {
			if err := os.Remove(b); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove old backup %s: %w", filepath.Base(b), err))
			}
		}
	}
	return errors.Join(errs...)
}

// usage says where the space of the data directory went.
func usage(path string) string {
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	var bak int64
	bs := backups(path)
	for _, b := range bs {
		bak += size(b)
	}
	return fmt.Sprintf("%s is %s, its -wal %s, %d backup(s) %s", filepath.Base(path), mb(size(path)),
		mb(size(path+"-wal")), len(bs), mb(bak))
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// Check runs PRAGMA quick_check, or integrity_check when full is set (it
// also compares every index with its table: slower), and returns nil for
// "ok", else store_corrupt with SQLite's first findings and the backup to
// restore.
func (s *Store) Check(ctx context.Context, full bool) error {
	pragma := "PRAGMA quick_check(20)"
	if full {
		pragma = "PRAGMA integrity_check(20)"
	}
	db, err := s.freshReader() // search_index.go: not a pooled reader
	if err != nil {
		return storageError(s.path, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, pragma)
	if err != nil {
		return storageError(s.path, fmt.Errorf("%s: %w", pragma, err))
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return storageError(s.path, fmt.Errorf("%s: %w", pragma, err))
		}
		found = append(found, line)
	}
	if err := rows.Err(); err != nil {
		return storageError(s.path, fmt.Errorf("%s: %w", pragma, err))
	}
	if len(found) == 1 && found[0] == "ok" {
		return nil
	}
	return corruptError(s.path, fmt.Errorf("%s: %s", pragma, strings.Join(found, "; ")))
}
