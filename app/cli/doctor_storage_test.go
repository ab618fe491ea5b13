package cli

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/store"
)

// TestDoctorStorageChecks: doctor's storage lines pass on a sound database
// and fail, with the next step, on a damaged index page and on an audit
// chain that lost its newest entries.
func TestDoctorStorageChecks(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agenthub.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := st.AddWorkspace(ctx, backend.Workspace{ID: "ws_" + itoa(i), Name: "w", Path: "/abs/w" + itoa(i),
			DisplayPath: "~/w"}, store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range storageChecks(ctx, st, true) {
		if !c.ok {
			t.Fatalf("sound database: %+v", c)
		}
	}
	st.Close()

	// Damage the index of the workspaces table, which opening never reads.
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	var root, pageSize int64
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'workspaces_active_path'`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM audit WHERE seq > 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff", 64)), (root-1)*pageSize); err != nil {
		t.Fatal(err)
	}
	f.Close()

	st, err = store.Open(ctx, path)
	if err != nil {
		t.Fatalf("open with a damaged index page: %v", err)
	}
	defer st.Close()
	got := map[string]check{}
	for _, c := range storageChecks(ctx, st, false) {
		got[c.name] = c
	}
	if c := got["database integrity (quick_check)"]; c.ok || !strings.Contains(c.detail, "store_corrupt") ||
		!strings.Contains(c.fix, "agenthub.db") {
		t.Errorf("quick_check line = %+v", c)
	}
	if c := got["audit chain"]; c.ok || !strings.Contains(c.detail, "the anchor says 3 entries, the database has 1") {
		t.Errorf("audit line = %+v", c)
	}
}
