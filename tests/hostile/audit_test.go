package hostile

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/canon"
)

// A tamper edits the data directory the way someone with the user's file
// access would, between two `agenthub audit verify` runs (issue 14 item 5).
type tamper struct {
	name string
	do   func(t *testing.T, db *sql.DB)
}

var tampers = []tamper{
	{"edit-data", sqlTamper(`UPDATE audit SET data = json_set(data, '$.tampered', 1) WHERE seq = 2`)},
	{"edit-actor-newest", sqlTamper(`UPDATE audit SET actor = 'policy' WHERE seq = (SELECT max(seq) FROM audit)`)},
	{"edit-kind", sqlTamper(`UPDATE audit SET kind = 'approval.rejected' WHERE seq = 2`)},
	{"edit-hash-only", sqlTamper(`UPDATE audit SET hash = '` + strings.Repeat("0", 64) + `' WHERE seq = (SELECT max(seq) FROM audit)`)},
	{"delete-newest", sqlTamper(`DELETE FROM audit WHERE seq = (SELECT max(seq) FROM audit)`)},
	{"delete-newest-three", sqlTamper(`DELETE FROM audit WHERE seq > (SELECT max(seq) FROM audit) - 3`)},
	{"delete-all", sqlTamper(`DELETE FROM audit`)},
	{"delete-oldest", sqlTamper(`DELETE FROM audit WHERE seq = 1`)},
	{"delete-middle", sqlTamper(`DELETE FROM audit WHERE seq = 2`)},
	{"truncate-to-first", sqlTamper(`DELETE FROM audit WHERE seq > 1`)},
	{"drop-and-recreate-table", func(t *testing.T, db *sql.DB) {
		var ddl string
		must(t, db.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'audit'`).Scan(&ddl))
		sqlExec(t, db, `DROP TABLE audit`)
		sqlExec(t, db, ddl)
	}},
	{"reorder-swap-rows", func(t *testing.T, db *sql.DB) {
		sqlExec(t, db, `UPDATE audit SET seq = -2 WHERE seq = 2`)
		sqlExec(t, db, `UPDATE audit SET seq = 2 WHERE seq = 3`)
		sqlExec(t, db, `UPDATE audit SET seq = 3 WHERE seq = -2`)
	}},
	{"reorder-swap-and-recompute", func(t *testing.T, db *sql.DB) {
		sqlExec(t, db, `UPDATE audit SET seq = -2 WHERE seq = 2`)
		sqlExec(t, db, `UPDATE audit SET seq = 2 WHERE seq = 3`)
		sqlExec(t, db, `UPDATE audit SET seq = 3 WHERE seq = -2`)
		recomputeUnkeyed(t, db)
	}},
	{"edit-and-recompute-unkeyed", func(t *testing.T, db *sql.DB) {
		sqlExec(t, db, `UPDATE audit SET data = json_set(data, '$.tampered', 1) WHERE seq = 2`)
		recomputeUnkeyed(t, db)
	}},
	{"delete-middle-renumber-recompute", func(t *testing.T, db *sql.DB) {
		sqlExec(t, db, `DELETE FROM audit WHERE seq = 2`)
		sqlExec(t, db, `UPDATE audit SET seq = -seq WHERE seq > 2`)
		sqlExec(t, db, `UPDATE audit SET seq = -seq - 1 WHERE seq < 0`)
		recomputeUnkeyed(t, db)
	}},
	{"forge-appended-entry", func(t *testing.T, db *sql.DB) {
		sqlExec(t, db, `INSERT INTO audit (seq, at, actor, surface, kind, run_id, tool_call_id, subject_hash, data, prev_hash, hash)
			SELECT seq + 1, at, 'alice', 'cli', 'approval.granted', run_id, 'call_forged', subject_hash, '{"forged":true}', hash, ''
			FROM audit WHERE seq = (SELECT max(seq) FROM audit)`)
		recomputeUnkeyed(t, db)
	}},
}

func sqlTamper(stmt string) func(t *testing.T, db *sql.DB) {
	return func(t *testing.T, db *sql.DB) { sqlExec(t, db, stmt) }
}

func sqlExec(t *testing.T, db *sql.DB, stmt string) {
	t.Helper()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// recomputeUnkeyed rewrites every entry's prev_hash and hash with the
// chain's published unkeyed formula, hex(SHA-256(prev || canonical JSON)),
// as an attacker who read the source would.
func recomputeUnkeyed(t *testing.T, db *sql.DB) {
	t.Helper()
	rows, err := db.Query(`SELECT seq, at, actor, surface, kind, run_id, tool_call_id, subject_hash, data FROM audit ORDER BY seq`)
	must(t, err)
	var entries []backend.AuditEntry
	for rows.Next() {
		var e backend.AuditEntry
		var data string
		must(t, rows.Scan(&e.Seq, &e.At, &e.Actor, &e.Surface, &e.Kind, &e.RunID, &e.ToolCallID, &e.SubjectHash, &data))
		must(t, json.Unmarshal([]byte(data), &e.Data))
		entries = append(entries, e)
	}
	must(t, rows.Err())
	must(t, rows.Close())
	prev := backend.GenesisHash
	for _, e := range entries {
		e.PrevHash, e.Hash = prev, ""
		if e.Data == nil {
			e.Data = map[string]any{}
		}
		body, err := canon.Marshal(e)
		must(t, err)
		sum := sha256.Sum256(append([]byte(prev), body...))
		h := hex.EncodeToString(sum[:])
		if _, err := db.Exec(`UPDATE audit SET prev_hash = ?, hash = ? WHERE seq = ?`, prev, h, e.Seq); err != nil {
			t.Fatalf("recompute %d: %v", e.Seq, err)
		}
		prev = h
	}
}

// snapshot is every file of a data directory (but profiles), to restore
// between tampers.
type snapshot map[string][]byte

func takeSnapshot(t *testing.T, home string) snapshot {
	s := snapshot{}
	must(t, filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		s[p] = b
		return err
	}))
	return s
}

// restore puts the snapshot back byte for byte and removes files it lacks.
func (s snapshot) restore(t *testing.T, home string, only func(string) bool) {
	must(t, filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, ok := s[p]; !ok && only(p) {
			return os.Remove(p)
		}
		return nil
	}))
	for p, b := range s {
		if only(p) {
			must(t, os.WriteFile(p, b, 0o600))
		}
	}
}

func everything(string) bool { return true }

func databaseOnly(p string) bool {
	base := filepath.Base(p)
	return base == "agenthub.db" || base == "agenthub.db-wal" || base == "agenthub.db-shm"
}

// playAudit records a real run's approvals in the audit chain, then plays
// each tamper on a restored copy of the data directory: `agenthub audit
// verify` must fail every time.
func playAudit(t *testing.T, l *ledger) {
	w := newWorld(t)
	auditRun := func(name string) {
		w.putScriptProfile(name, script(
			call{Tool: "write_file", Args: map[string]any{"path": name + ".txt", "content": "one\n"}},
			call{Tool: "run_shell", Args: map[string]any{"command": "true"}},
			call{Tool: "write_file", Args: map[string]any{"path": name + "-2.txt", "content": "two\n"}},
		), "2m")
		if res := w.run(name, "approve", 2*time.Minute, nil); terminal(res.events) != backend.EvRunCompleted {
			t.Fatalf("the audited run did not complete: exit %d %s", res.code, res.stderr)
		}
	}
	auditRun("first")
	older := takeSnapshot(t, w.home)
	auditRun("second")
	verify := func() (bool, string) {
		code, out, errOut := w.cli(context.Background(), "audit", "verify")
		return code == 0, strings.TrimSpace(out + errOut)
	}
	if ok, out := verify(); !ok {
		t.Fatalf("the untouched chain does not verify: %s", out)
	}
	var count int
	withDB(t, w.home, func(db *sql.DB) { must(t, db.QueryRow(`SELECT count(*) FROM audit`).Scan(&count)) })
	if count < 6 {
		t.Fatalf("only %d audit entries; the tampers need at least 6", count)
	}
	clean := takeSnapshot(t, w.home)
	for _, tp := range tampers {
		withDB(t, w.home, func(db *sql.DB) { tp.do(t, db) })
		ok, out := verify()
		l.check(t, "audit/"+tp.name, !ok, "audit verify passed after the tamper: %s", out)
		clean.restore(t, w.home, everything)
		if ok, out := verify(); !ok {
			t.Fatalf("the restored chain does not verify after %s: %s", tp.name, out)
		}
	}
	// A lost database: every file of it removed, a fresh one created.
	for _, f := range []string{"agenthub.db", "agenthub.db-wal", "agenthub.db-shm"} {
		_ = os.Remove(filepath.Join(w.home, f))
	}
	ok, out := verify()
	l.check(t, "audit/database-removed", !ok, "audit verify passed on a fresh database: %s", out)
	clean.restore(t, w.home, everything)
	// A rollback: the database as it was before the second run, the rest
	// of the data directory as it is now.
	older.restore(t, w.home, databaseOnly)
	ok, out = verify()
	l.check(t, "audit/rollback-to-older-database", !ok, "audit verify passed on an older copy of the database: %s", out)
	clean.restore(t, w.home, everything)
}

// withDB opens the data directory's database directly (the sqlite3 driver
// the store registers), as an attacker with file access would.
func withDB(t *testing.T, home string, f func(*sql.DB)) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(home, "agenthub.db")+"?_busy_timeout=10000")
	must(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	f(db)
	_, _ = db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
}
