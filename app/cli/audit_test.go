package cli

import (
	"database/sql"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestAuditVerifyCatchesTruncation deletes the newest audit entries behind
// the store's back: verify names what the anchor says and what the database
// has, and a head kept from an export fails too.
func TestAuditVerifyCatchesTruncation(t *testing.T) {
	env, dir := newGitWorkspace(t)
	if code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--on-approval", "approve", "tour"); code != 0 {
		t.Fatalf("run: %d\n%s%s", code, out, errOut)
	}
	code, _, errOut := runCLI(t, env, "audit", "export")
	m := regexp.MustCompile(`audit head (\d+):([0-9a-f]{64})`).FindStringSubmatch(errOut)
	if code != 0 || m == nil {
		t.Fatalf("export: %d, no head printed: %s", code, errOut)
	}
	head := m[1] + ":" + m[2]
	if code, out, _ := runCLI(t, env, "audit", "verify", "--head", head); code != 0 || !strings.Contains(out, "audit chain OK") {
		t.Fatalf("verify --head before tampering: %d %s", code, out)
	}
	db, err := sql.Open("sqlite3", filepath.Join(env["AGENTHUB_HOME"], "agenthub.db"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT max(seq) FROM audit`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM audit WHERE seq > ?`, n-2); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, _ := runCLI(t, env, "audit", "verify")
	want := "the anchor says " + itoa(n) + " entries, the database has " + itoa(n-2)
	if code != ExitFailed || !strings.Contains(out, "BROKEN at entry "+itoa(n-1)) || !strings.Contains(out, want) {
		t.Fatalf("verify after truncation: exit %d, want %q:\n%s", code, want, out)
	}
	code, out, _ = runCLI(t, env, "audit", "verify", "--head", head)
	if code != ExitFailed || !strings.Contains(out, "the exported head is entry "+itoa(n)+", the database has "+itoa(n-1)) {
		t.Fatalf("verify --head after truncation: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, env, "audit", "verify", "--head", "12:abc"); code == 0 || !strings.Contains(errOut, "64-digit") {
		t.Fatalf("verify --head with a bad head: exit %d %s", code, errOut)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
