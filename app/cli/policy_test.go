package cli

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

const examplePolicy = `version = 1

[[shell]]
id = "git-read"
prefix = ["git", "status"]
verdict = "allow"
match = ["git status --short"]
not_match = ["git push"]
`

func TestPolicyCheckAndExplain(t *testing.T) {
	env, dir := newGitWorkspace(t)
	if err := os.MkdirAll(filepath.Join(dir, ".agenthub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".agenthub", "policy.toml"), []byte(examplePolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken.toml")
	wrongExample := strings.Replace(examplePolicy, `not_match = ["git push"]`, `not_match = ["git status -s"]`, 1)
	if err := os.WriteFile(broken, []byte(wrongExample), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"check ok", []string{"policy", "check", "--workspace", dir}, 0, []string{"policy OK"}},
		{"check fails", []string{"policy", "check", "--file", broken}, ExitFailed, []string{"FAIL rule", "git status"}},
		{"explain allow", []string{"policy", "explain", "--workspace", dir, "git status --short"}, 0,
			[]string{"decision: allow", "git-read"}},
		{"explain push always asks", []string{"policy", "explain", "--workspace", dir, "git push origin main"}, 0,
			[]string{"decision: ask"}},
		{"explain secret", []string{"policy", "explain", "--workspace", dir, "cat .env"}, 0, []string{"decision: deny"}},
		{"explain needs workspace", []string{"policy", "explain", "ls"}, ExitUsage, []string{"--workspace"}},
		{"check outside allowlist", []string{"policy", "check", "--workspace", t.TempDir()}, ExitFailed,
			[]string{"workspace_outside_allowlist"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, env, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Fatalf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
		})
	}
}

// TestPolicyCommandsAgreeWithTheGate is the attack of issue 14 item 12:
// check and explain read the policy the way the gate does, so a file the
// gate will not use (over 1 MiB, behind a symlinked .agenthub/) fails check
// and explains as ask, with the gate's own words.
func TestPolicyCommandsAgreeWithTheGate(t *testing.T) {
	allowLs := examplePolicy + "\n[[shell]]\nid = \"ls\"\nprefix = [\"ls\"]\nverdict = \"allow\"\n"
	huge := allowLs + "# " + strings.Repeat("x", 1<<20) + "\n"

	bigEnv, bigDir := newGitWorkspace(t)
	writePolicy(t, bigDir, huge)
	bigFile := filepath.Join(t.TempDir(), "big.toml")
	if err := os.WriteFile(bigFile, []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}

	linkEnv, linkDir := newGitWorkspace(t)
	elsewhere := t.TempDir()
	writePolicy(t, elsewhere, allowLs)
	if err := os.Symlink(filepath.Join(elsewhere, ".agenthub"), filepath.Join(linkDir, ".agenthub")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want []string
	}{
		{"check over 1 MiB", bigEnv, []string{"policy", "check", "--workspace", bigDir}, ExitFailed,
			[]string{"FAIL", "larger than 1048576 bytes"}},
		{"check file over 1 MiB", bigEnv, []string{"policy", "check", "--file", bigFile}, ExitFailed,
			[]string{"larger than 1048576 bytes"}},
		{"explain over 1 MiB asks", bigEnv, []string{"policy", "explain", "--workspace", bigDir, "ls -la"}, 0,
			[]string{"decision: ask", "builtin:broken-policy", "larger than 1048576 bytes"}},
		{"check symlinked dir", linkEnv, []string{"policy", "check", "--workspace", linkDir}, ExitFailed,
			[]string{"FAIL", ".agenthub is a symbolic link"}},
		{"explain symlinked dir asks", linkEnv, []string{"policy", "explain", "--workspace", linkDir, "ls -la"}, 0,
			[]string{"decision: ask", "builtin:broken-policy", ".agenthub is a symbolic link"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.env, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Fatalf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
		})
	}
}

func writePolicy(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".agenthub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".agenthub", "policy.toml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAuditVerifyCatchesAnEditedRow edits one audit row behind the store's
// back; verify must name it, and export must say the chain is broken.
func TestAuditVerifyCatchesAnEditedRow(t *testing.T) {
	env, dir := newGitWorkspace(t)
	if code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--on-approval", "approve", "tour"); code != 0 {
		t.Fatalf("run: %d\n%s%s", code, out, errOut)
	}
	code, out, _ := runCLI(t, env, "audit", "verify")
	if code != 0 || !strings.Contains(out, "audit chain OK") {
		t.Fatalf("verify before tampering: %d %s", code, out)
	}
	code, out, _ = runCLI(t, env, "audit", "export")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var tail map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &tail); code != 0 || err != nil || tail["verified"] != true || len(lines) < 3 {
		t.Fatalf("export: %d %v %s", code, err, out)
	}

	db, err := sql.Open("sqlite3", filepath.Join(env["AGENTHUB_HOME"], "agenthub.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE audit SET actor = 'mallory' WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, _ = runCLI(t, env, "audit", "verify", "--json")
	if code != ExitFailed || !strings.Contains(out, `"brokenSeq":2`) {
		t.Fatalf("verify after tampering: exit %d %s", code, out)
	}
	if code, _, errOut := runCLI(t, env, "audit", "export"); code != ExitFailed || !strings.Contains(errOut, "broken at entry 2") {
		t.Fatalf("export after tampering: exit %d %s", code, errOut)
	}
}
