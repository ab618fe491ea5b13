package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"agenthub/backend"
	"agenthub/backend/canon"
)

func TestMain(m *testing.M) {
	// Keep the tests' keys out of the OS keychain of whoever runs them; the
	// keychain test sets its own mock.
	os.Setenv(auditKeyEnv, keyInFile)
	os.Exit(m.Run())
}

func readKey(t *testing.T, dbPath string) []byte {
	t.Helper()
	k, err := readKeyFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// auditFixture writes n entries into a new store and closes it; it returns
// the database path and the entries as written.
func auditFixture(t *testing.T, n int) (string, []backend.AuditEntry) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "agenthub.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	var out []backend.AuditEntry
	for i := range n {
		e, err := s.AppendAudit(t.Context(), backend.AuditEntry{Actor: "me", Surface: backend.SurfaceCLI,
			Kind: "approval.resolved", RunID: "run_1", Data: map[string]any{"i": i, "decision": "approve"}})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if r, err := s.CheckAudit(t.Context(), nil); err != nil || !r.OK || r.Entries != int64(n) {
		t.Fatalf("fresh chain: %+v %v", r, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, out
}

// rawDB opens the database file behind the store's back, as an attacker with
// the user's file access would.
func rawSQL(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// rewriteChain replaces entries from..end with edit applied to the first,
// each rehashed by hash (the attacker's recomputation), with raw SQL.
func rewriteChain(t *testing.T, path string, entries []backend.AuditEntry, from int,
	edit func(*backend.AuditEntry), hash func(backend.AuditEntry) string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	prev := backend.GenesisHash
	if from > 1 {
		prev = entries[from-2].Hash
	}
	for i := from - 1; i < len(entries); i++ {
		e := entries[i]
		if i == from-1 {
			edit(&e)
		}
		e.PrevHash = prev
		e.Hash = hash(e)
		if _, err := db.Exec(`UPDATE audit SET actor = ?, data = ?, prev_hash = ?, hash = ? WHERE seq = ?`,
			e.Actor, mustJSON(t, e.Data), e.PrevHash, e.Hash, e.Seq); err != nil {
			t.Fatal(err)
		}
		prev = e.Hash
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := canon.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func unkeyed(t *testing.T) func(backend.AuditEntry) string {
	return func(e backend.AuditEntry) string {
		h, err := AuditHash(e)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
}

func keyed(t *testing.T, key []byte) func(backend.AuditEntry) string {
	return func(e backend.AuditEntry) string {
		e.Hash = ""
		b, err := canon.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(e.PrevHash))
		m.Write(b)
		return hex.EncodeToString(m.Sum(nil))
	}
}

func reopen(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestAuditAttacks tampers with a closed store's files the way a process
// with the user's file access could, reopens it, and requires verify to fail
// at the right entry, saying what changed.
func TestAuditAttacks(t *testing.T) {
	const n = 12
	for _, tc := range []struct {
		name   string
		attack func(t *testing.T, path string, entries []backend.AuditEntry)
		broken int64
		says   string
	}{
		{"truncate the newest entries", func(t *testing.T, path string, _ []backend.AuditEntry) {
			rawSQL(t, path, `DELETE FROM audit WHERE seq > 8`)
		}, 9, "the anchor says 12 entries, the database has 8: entries 9–12 were lost"},
		{"delete every entry", func(t *testing.T, path string, _ []backend.AuditEntry) {
			rawSQL(t, path, `DELETE FROM audit`)
		}, 1, "the anchor says 12 entries, the database has 0"},
		{"delete the database files", func(t *testing.T, path string, _ []backend.AuditEntry) {
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
			}
		}, 1, "the anchor says 12 entries, the database has 0"},
		{"edit a row and recompute the unkeyed chain", func(t *testing.T, path string, es []backend.AuditEntry) {
			rewriteChain(t, path, es, 5, func(e *backend.AuditEntry) { e.Data["decision"] = "reject" }, unkeyed(t))
		}, 5, "entry 5 was changed after it was written"},
		{"edit a row and recompute with a guessed key", func(t *testing.T, path string, es []backend.AuditEntry) {
			rewriteChain(t, path, es, 5, func(e *backend.AuditEntry) { e.Actor = "mallory" },
				keyed(t, make([]byte, 32)))
		}, 5, "entry 5 was changed after it was written"},
		{"reorder two entries", func(t *testing.T, path string, _ []backend.AuditEntry) {
			rawSQL(t, path, `UPDATE audit SET seq = 100 WHERE seq = 4`, `UPDATE audit SET seq = 4 WHERE seq = 5`,
				`UPDATE audit SET seq = 5 WHERE seq = 100`)
		}, 4, "entry 4 does not link to entry 3"},
		{"data no longer JSON", func(t *testing.T, path string, _ []backend.AuditEntry) {
			rawSQL(t, path, `PRAGMA ignore_check_constraints = ON`, `UPDATE audit SET data = '{"i": 6,' WHERE seq = 6`)
		}, 6, "entry 6 was changed: its data is no longer JSON"},
		{"delete the anchor", func(t *testing.T, path string, _ []backend.AuditEntry) {
			if err := os.Remove(anchorPath(path)); err != nil {
				t.Fatal(err)
			}
		}, 13, "the anchor file agenthub.db.audit-head is missing"},
		{"truncate and rewrite the anchor without the key", func(t *testing.T, path string, es []backend.AuditEntry) {
			rawSQL(t, path, `DELETE FROM audit WHERE seq > 8`)
			a := anchor{Version: anchorVersion, Seq: 8, Hash: es[7].Hash, KeyedFrom: 1, Key: keyInFile}
			a.MAC = a.mac(make([]byte, 32))
			b := fmt.Sprintf(`{"version":1,"seq":8,"hash":%q,"keyedFrom":1,"key":"file","mac":%q}`, a.Hash, a.MAC)
			if err := os.WriteFile(anchorPath(path), []byte(b), 0o600); err != nil {
				t.Fatal(err)
			}
		}, 9, "agenthub.db.audit-head was changed or damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, entries := auditFixture(t, n)
			tc.attack(t, path, entries)
			s := reopen(t, path)
			r, err := s.CheckAudit(t.Context(), nil)
			if err != nil {
				t.Fatalf("verify: %v (a tampered chain is a verdict, not an error)", err)
			}
			if r.OK || r.BrokenSeq != tc.broken || !strings.Contains(strings.Join(r.Problems, "\n"), tc.says) {
				t.Fatalf("verify = ok %v broken %d %q; want broken %d saying %q", r.OK, r.BrokenSeq, r.Problems,
					tc.broken, tc.says)
			}
			// It stays reported: the next start does not absorb it.
			s.Close()
			s = reopen(t, path)
			if r2, err := s.CheckAudit(t.Context(), nil); err != nil || r2.OK || r2.BrokenSeq != tc.broken {
				t.Fatalf("verify after another start = %+v %v", r2, err)
			}
		})
	}
}

// TestAuditTamperingWhileOpen: the live check compares with the anchor too,
// without a restart in between.
func TestAuditTamperingWhileOpen(t *testing.T) {
	path, _ := auditFixture(t, 6)
	s := reopen(t, path)
	rawSQL(t, path, `DELETE FROM audit WHERE seq > 3`)
	r, err := s.CheckAudit(t.Context(), nil)
	if err != nil || r.OK || r.BrokenSeq != 4 ||
		!strings.Contains(strings.Join(r.Problems, "\n"), "the anchor says 6 entries, the database has 3") {
		t.Fatalf("verify = %+v %v", r, err)
	}
	if broken, _, err := s.VerifyAudit(t.Context()); err != nil || broken != 4 {
		t.Fatalf("VerifyAudit = %d %v, want 4", broken, err)
	}
}

// TestAuditAnchorBehindIsACrashNotTampering: a crash after the commit and
// before the anchor write leaves the anchor one entry behind; that verifies
// and the next start moves the anchor forward.
func TestAuditAnchorBehindIsACrashNotTampering(t *testing.T) {
	path, _ := auditFixture(t, 5)
	old, err := os.ReadFile(anchorPath(path))
	if err != nil {
		t.Fatal(err)
	}
	s := reopen(t, path)
	if _, err := s.AppendAudit(t.Context(), backend.AuditEntry{Actor: "me", Surface: backend.SurfaceCLI,
		Kind: "x"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.WriteFile(anchorPath(path), old, 0o600); err != nil { // the anchor write "never happened"
		t.Fatal(err)
	}
	s = reopen(t, path)
	r, err := s.CheckAudit(t.Context(), nil)
	if err != nil || !r.OK || r.Entries != 6 || r.AnchorSeq != 6 || s.AuditStartProblem() != "" {
		t.Fatalf("verify after an anchor one behind = %+v %v (start problem %q)", r, err, s.AuditStartProblem())
	}
}

// TestAuditExportedHead: someone who also read the key file can rewrite the
// chain and the anchor; a head exported earlier still tells.
func TestAuditExportedHead(t *testing.T) {
	path, entries := auditFixture(t, 8)
	head := ExportedHead{Seq: 8, Hash: entries[7].Hash}
	key := readKey(t, path)
	rewriteChain(t, path, entries, 3, func(e *backend.AuditEntry) { e.Actor = "mallory" }, keyed(t, key))
	a, err := readAnchor(path)
	if err != nil {
		t.Fatal(err)
	}
	sdb, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sdb.QueryRow(`SELECT hash FROM audit WHERE seq = 8`).Scan(&a.Hash); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	if err := writeAnchor(path, key, a, true); err != nil {
		t.Fatal(err)
	}
	s := reopen(t, path)
	if r, err := s.CheckAudit(t.Context(), nil); err != nil || !r.OK {
		t.Fatalf("with the key, a full rewrite verifies against the anchor (the documented limit): %+v %v", r, err)
	}
	r, err := s.CheckAudit(t.Context(), &head)
	if err != nil || r.OK || r.BrokenSeq != 8 ||
		!strings.Contains(strings.Join(r.Problems, "\n"), "entry 8 is not the one exported") {
		t.Fatalf("verify --head = %+v %v", r, err)
	}
	if r, err := s.CheckAudit(t.Context(), &ExportedHead{Seq: 9, Hash: a.Hash}); err != nil || r.OK ||
		!strings.Contains(strings.Join(r.Problems, "\n"), "the exported head is entry 9, the database has 8 entries") {
		t.Fatalf("verify --head past the end = %+v %v", r, err)
	}
	if r, err := s.CheckAudit(t.Context(), &ExportedHead{Seq: 8, Hash: a.Hash}); err != nil || !r.OK {
		t.Fatalf("verify --head of the current head = %+v %v", r, err)
	}
}

// TestAuditUnkeyedChainIsMigrated: a chain written before the key keeps
// verifying with the old scheme up to the switch, which an audit.keyed entry
// records; rewriting the old part with a recomputed chain breaks the switch.
func TestAuditUnkeyedChainIsMigrated(t *testing.T) {
	path, entries := auditFixture(t, 6)
	// Make it a chain from before the key: unkeyed hashes, no anchor, no key.
	rewriteChain(t, path, entries, 1, func(*backend.AuditEntry) {}, unkeyed(t))
	rawSQL(t, path, `DELETE FROM settings WHERE key = 'audit.keyed_from'`)
	for _, p := range []string{anchorPath(path), keyFilePath(path)} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	s := reopen(t, path)
	r, err := s.CheckAudit(t.Context(), nil)
	if err != nil || !r.OK || r.KeyedFrom != 7 || r.Entries != 7 {
		t.Fatalf("migrated chain = %+v %v", r, err)
	}
	got, err := s.AuditEntries(t.Context(), 0, 0)
	if err != nil || len(got) != 7 || got[6].Kind != AuditKeyed || got[6].Data["unkeyedEntries"] != 6.0 {
		t.Fatalf("entries after the switch = %+v %v", got, err)
	}
	s.Close()
	if info, err := os.Stat(keyFilePath(path)); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v, want mode 0600", info, err)
	}
	// Entries before the switch cannot be rewritten with a recomputed chain.
	rewriteChain(t, path, got[:6], 2, func(e *backend.AuditEntry) { e.Actor = "mallory" }, unkeyed(t))
	s = reopen(t, path)
	r, err = s.CheckAudit(t.Context(), nil)
	if err != nil || r.OK || r.BrokenSeq != 7 {
		t.Fatalf("rewritten unkeyed part = %+v %v, want broken at the switch (7)", r, err)
	}
}

// TestAuditKeyInKeychain: with a keychain, the key goes there and no key file
// is written; a keychain that cannot be read later is a clear error, never a
// new key.
func TestAuditKeyInKeychain(t *testing.T) {
	keyring.MockInit()
	t.Setenv(auditKeyEnv, "")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
	path, _ := auditFixture(t, 3)
	if _, err := os.Stat(keyFilePath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("key file exists beside a keychain key: %v", err)
	}
	if a, err := readAnchor(path); err != nil || a.Key != keyInKeychain {
		t.Fatalf("anchor = %+v %v", a, err)
	}
	s := reopen(t, path)
	if r, err := s.CheckAudit(t.Context(), nil); err != nil || !r.OK {
		t.Fatalf("verify with the keychain key = %+v %v", r, err)
	}
	s.Close()
	keyring.MockInitWithError(errors.New("the keychain is locked"))
	_, err := Open(context.Background(), path)
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != backend.CodeAuditKeyUnavailable || !strings.Contains(be.Next, "Unlock") {
		t.Fatalf("open with a locked keychain = %v, want audit_key_unavailable", err)
	}
	if !strings.Contains(err.Error(), "the keychain is locked") {
		t.Errorf("the cause is not in the error chain: %v", err)
	}
}

// TestAuditEntriesRefusesADamagedRow: listing a row whose data is not JSON
// is store_corrupt, not internal_error.
func TestAuditEntriesRefusesADamagedRow(t *testing.T) {
	path, _ := auditFixture(t, 3)
	rawSQL(t, path, `PRAGMA ignore_check_constraints = ON`, `UPDATE audit SET data = 'x' WHERE seq = 2`)
	s := reopen(t, path)
	_, err := s.AuditEntries(t.Context(), 0, 0)
	if backend.CodeOf(err) != backend.CodeStoreCorrupt || !strings.Contains(err.Error(), "entry 2") {
		t.Fatalf("list = %v, want store_corrupt naming entry 2", err)
	}
}

// TestLostWALIsSaidAtTheNextStart: a run committed only to the -wal file,
// which is then lost (deleted with the database's older main file left),
// is noticed by the next start, which says what was lost.
func TestLostWALIsSaidAtTheNextStart(t *testing.T) {
	s, path := openTest(t)
	newRun(t, s, "run_1")
	s.Close()
	before, err := os.ReadFile(path) // the main file with everything up to here checkpointed
	if err != nil {
		t.Fatal(err)
	}
	s = reopen(t, path)
	newRun(t, s, "run_2") // its run row, events and audit entries
	s.Close()
	if err := os.WriteFile(path, before, 0o600); err != nil { // as if the -wal holding run_2 was lost
		t.Fatal(err)
	}
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	s = reopen(t, path)
	if _, err := s.Run(t.Context(), "run_2"); err == nil {
		t.Fatal("run_2 survived; the test lost nothing")
	}
	if p := s.AuditStartProblem(); !strings.Contains(p, "the anchor says") || !strings.Contains(p, "were lost") {
		t.Fatalf("start problem = %q, want the anchor's count against the database's", p)
	}
	if r, err := s.CheckAudit(t.Context(), nil); err != nil || r.OK {
		t.Fatalf("verify after a lost WAL = %+v %v", r, err)
	}
}
