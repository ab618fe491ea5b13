package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"agenthub/backend"
)

func wantCode(t *testing.T, err error, code backend.FailureCode, says ...string) *backend.Error {
	t.Helper()
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != code {
		t.Fatalf("err = %v, want %s", err, code)
	}
	for _, w := range says {
		if !strings.Contains(be.Message+"\n"+be.Next, w) {
			t.Errorf("%s error lacks %q:\nmessage: %s\nnext: %s", code, w, be.Message, be.Next)
		}
	}
	if be.Err == nil {
		t.Errorf("%s error has no cause in its chain", code)
	}
	return be
}

// TestTooNewDatabaseIsRefused: a database stamped by a newer schema, by
// goose's table or by user_version, is refused before anything writes it.
func TestTooNewDatabaseIsRefused(t *testing.T) {
	for _, stamp := range []string{
		`INSERT INTO goose_db_version (version_id, is_applied) VALUES (999, 1)`,
		`PRAGMA user_version = 999`,
	} {
		t.Run(stamp, func(t *testing.T) {
			s, path := openTest(t)
			s.Close()
			rawSQL(t, path, stamp)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Open(t.Context(), path)
			wantCode(t, err, backend.CodeStoreTooNew, "schema version 999", "Install the AgentHub version")
			after, _ := os.ReadFile(path)
			if string(before) != string(after) {
				t.Error("the too-new database was written")
			}
			if _, err := os.Stat(path + "-wal"); err == nil {
				if fi, _ := os.Stat(path + "-wal"); fi.Size() > 0 {
					t.Errorf("the too-new database has %d bytes of WAL after the refusal", fi.Size())
				}
			}
		})
	}
}

// TestFailedMigrationRestoresItsBackup: a migration that fails after the
// backup leaves the database as it was, says so, and retries do not pile up
// backups (the newest keepBackups stay).
func TestFailedMigrationRestoresItsBackup(t *testing.T) {
	ctx := t.Context()
	s, path := openTest(t)
	if err := s.AddWorkspace(ctx, backend.Workspace{ID: "ws_1", Name: "p", Path: "/abs/p", DisplayPath: "~/p"},
		By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	bad := fstest.MapFS{}
	names, _ := fs.Glob(Migrations(), "*.sql")
	for _, n := range names {
		b, _ := fs.ReadFile(Migrations(), n)
		bad[n] = &fstest.MapFile{Data: b}
	}
	bad["00098_ok.sql"] = &fstest.MapFile{Data: []byte("-- +goose Up\nCREATE TABLE half (x INTEGER);\n")}
	bad["00099_broken.sql"] = &fstest.MapFile{Data: []byte("-- +goose Up\nALTER TABLE nosuch ADD COLUMN y INTEGER;\n")}
	for range 5 {
		_, err := open(ctx, path, bad)
		wantCode(t, err, backend.CodeStoreMigration, "restored from its backup", "nothing was lost")
	}
	if baks, _ := filepath.Glob(path + ".v*-*.bak"); len(baks) != keepBackups {
		t.Errorf("%d backups after 5 failed starts, want the newest %d", len(baks), keepBackups)
	}
	s = reopen(t, path)
	if ws, err := s.Workspaces(ctx); err != nil || len(ws) != 1 {
		t.Fatalf("workspaces after the restore = %v %v", ws, err)
	}
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'half'`).Scan(&n); err != nil ||
		n != 0 {
		t.Fatalf("the half-applied migration's table is still there (%d, %v)", n, err)
	}
	if r, err := s.CheckAudit(ctx, nil); err != nil || !r.OK {
		t.Fatalf("audit after the restore = %+v %v", r, err)
	}
}

// TestTruncatedDatabaseIsCorrupt: a database file cut short is
// store_corrupt with the backup to restore, not internal_error.
func TestTruncatedDatabaseIsCorrupt(t *testing.T) {
	ctx := t.Context()
	s, path := openTest(t)
	newRun(t, s, "run_1")
	s.Close()
	if err := os.WriteFile(path+".v2-20260101T000000.000000000.bak", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/2+100); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, path)
	wantCode(t, err, backend.CodeStoreCorrupt, "is damaged", "agenthub.db.v2-20260101T000000.000000000.bak")
	// Garbage where the header should be.
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	_, err = Open(ctx, path)
	wantCode(t, err, backend.CodeStoreCorrupt, "is damaged")
}
