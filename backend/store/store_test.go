package store

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
)

var update = flag.Bool("update", false, "rewrite golden files")

func openTest(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "agenthub.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestOpenPragmas(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	for _, tc := range []struct{ pragma, want string }{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"synchronous", "1"},
	} {
		var got string
		if err := s.w.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("PRAGMA %s = %q, want %q", tc.pragma, got, tc.want)
		}
	}
	if err := s.Integrity(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.r.ExecContext(ctx, "INSERT INTO settings VALUES ('a','b')"); err == nil {
		t.Error("reader pool accepted a write; it must be query-only")
	}
}

// TestSchemaGolden compares sqlite_master with testdata/schema.golden; run
// with -update after changing a migration on purpose.
func TestSchemaGolden(t *testing.T) {
	s, _ := openTest(t)
	got := schemaDump(t, s)
	golden := filepath.Join("testdata", "schema.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("schema differs from golden (-want +got):\n%s", diff)
	}
}

func schemaDump(t *testing.T, s *Store) string {
	t.Helper()
	rows, err := s.r.QueryContext(t.Context(), `SELECT type, name, coalesce(sql, '') FROM sqlite_master
		WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, sql string
		if err := rows.Scan(&typ, &name, &sql); err != nil {
			t.Fatal(err)
		}
		b.WriteString("-- " + typ + " " + name + "\n" + sql + ";\n\n")
	}
	return b.String()
}

func TestEveryTableIsStrict(t *testing.T) {
	s, _ := openTest(t)
	rows, err := s.r.QueryContext(t.Context(), `SELECT name, strict FROM pragma_table_list
		WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'goose_db_version'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var name string
		var strict int
		if err := rows.Scan(&name, &strict); err != nil {
			t.Fatal(err)
		}
		n++
		if strict != 1 {
			t.Errorf("table %s is not STRICT", name)
		}
	}
	if n < 15 {
		t.Errorf("found %d tables, want the whole schema (>= 15)", n)
	}
}

func TestJSONColumnsAreChecked(t *testing.T) {
	s, _ := openTest(t)
	_, err := s.w.ExecContext(t.Context(), `INSERT INTO audit (seq, at, actor, surface, kind, data, prev_hash, hash)
		VALUES (1, 'x', 'a', 'cli', 'k', '{not json', 'p', 'h')`)
	if err == nil {
		t.Fatal("invalid JSON accepted in audit.data")
	}
}

// historyDrop matches statements that would lose history.
var historyDrop = regexp.MustCompile(`(?i)\b(DROP\s+TABLE|DROP\s+COLUMN|DELETE\s+FROM|TRUNCATE)\b`)

// stripComments removes "--" comments so prose about history is not flagged.
func stripComments(b []byte) []byte {
	return regexp.MustCompile(`--[^\n]*`).ReplaceAll(b, nil)
}

func TestMigrationsNeverDropHistory(t *testing.T) {
	err := fs.WalkDir(Migrations(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Migrations(), p)
		if err != nil {
			return err
		}
		// search_text (00005) is derived from events, not history: its
		// trigger removes the index row of an event a failed job took back.
		b = regexp.MustCompile(`(?i)DELETE\s+FROM\s+search_text\b`).ReplaceAll(stripComments(b), nil)
		if m := historyDrop.Find(b); m != nil {
			t.Errorf("%s contains %q: migrations must not drop history", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMigrateOldDatabaseKeepsHistory opens a database at the current
// version, holding data, with a newer migration set (testdata/extra): the
// file is backed up first and every row survives.
func TestMigrateOldDatabaseKeepsHistory(t *testing.T) {
	ctx := t.Context()
	s, path := openTest(t)
	ws := backend.Workspace{ID: "ws_1", Name: "proj", Path: "/abs/proj", DisplayPath: "~/proj"}
	if err := s.AddWorkspace(ctx, ws, By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSetting(ctx, "theme", "dark"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	next := fstest.MapFS{}
	for _, dir := range []fs.FS{Migrations(), os.DirFS("testdata/extra")} {
		names, _ := fs.Glob(dir, "*.sql")
		for _, n := range names {
			b, _ := fs.ReadFile(dir, n)
			next[n] = &fstest.MapFile{Data: b}
		}
	}
	s2, err := open(ctx, path, next)
	if err != nil {
		t.Fatalf("reopen with a pending migration: %v", err)
	}
	defer s2.Close()
	baks, _ := filepath.Glob(path + ".v*-*.bak")
	if len(baks) != 1 {
		t.Fatalf("backups = %v, want one file named after the version it had", baks)
	}
	got, err := s2.Workspaces(ctx)
	if err != nil || len(got) != 1 || got[0].ID != "ws_1" {
		t.Fatalf("workspaces after migration = %v, %v", got, err)
	}
	if v, ok, _ := s2.Setting(ctx, "theme"); !ok || v != "dark" {
		t.Errorf("setting after migration = %q, %v", v, ok)
	}
	if broken, _, err := s2.VerifyAudit(ctx); err != nil || broken != 0 {
		t.Errorf("audit after migration: broken=%d err=%v", broken, err)
	}
	// The backup is a complete database at the old version (read with raw
	// SQL: as a store of its own it would have no audit key).
	b, err := sql.Open("sqlite3", "file:"+baks[0]+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var n int
	if err := b.QueryRowContext(ctx, `SELECT count(*) FROM workspaces`).Scan(&n); err != nil || n != 1 {
		t.Errorf("backup holds %d workspaces (%v), want 1", n, err)
	}
	// A fresh database is never backed up (nothing to lose).
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	f, err := Open(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if baks, _ := filepath.Glob(fresh + "*.bak"); len(baks) != 0 {
		t.Errorf("fresh database was backed up: %v", baks)
	}
}

func TestReopenAppliesNothing(t *testing.T) {
	_, path := openTest(t)
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if baks, _ := filepath.Glob(path + "*.bak"); len(baks) != 0 {
		t.Errorf("reopen without pending migrations made a backup: %v", baks)
	}
}

func TestBackendErrorIsReturnedForConflict(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	ws := backend.Workspace{ID: "ws_a", Name: "a", Path: "/abs/a", DisplayPath: "~/a"}
	by := By{Actor: "me", Surface: backend.SurfaceWindow}
	if err := s.AddWorkspace(ctx, ws, by); err != nil {
		t.Fatal(err)
	}
	ws.ID = "ws_b"
	err := s.AddWorkspace(ctx, ws, by)
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != backend.CodeWorkspaceExists {
		t.Fatalf("duplicate path: err = %v, want code workspace_exists", err)
	}
	if strings.Contains(be.Message, "/abs") {
		t.Errorf("message shows an absolute path: %q", be.Message)
	}
}
