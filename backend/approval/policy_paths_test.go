package approval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
)

// TestPolicyRefusalsAreTheGates: the gate, "always allow" and ReadPolicy
// refuse a symlinked .agenthub/ and an oversized file with the same words,
// and the gate's decision under them asks (issue 14 item 12).
func TestPolicyRefusalsAreTheGates(t *testing.T) {
	allowLs := "version = 1\n[[shell]]\nprefix = [\"ls\"]\nverdict = \"allow\"\n"
	huge := allowLs + "# " + strings.Repeat("x", maxPolicyBytes) + "\n"

	linked := t.TempDir()
	elsewhere := t.TempDir()
	if err := os.MkdirAll(filepath.Join(elsewhere, ".agenthub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, PolicyPath), []byte(allowLs), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, ".agenthub"), filepath.Join(linked, ".agenthub")); err != nil {
		t.Fatal(err)
	}
	big := t.TempDir()
	if err := os.MkdirAll(filepath.Join(big, ".agenthub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(big, PolicyPath), []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		root, words string
	}{{linked, ".agenthub is a symbolic link"}, {big, "larger than 1048576 bytes"}} {
		gate := NewGate(func(string) (string, error) { return tc.root, nil })
		_, gateErr := gate.Policy("w")
		_, appendErr := AppendRule(tc.root, Grant{Kind: backend.ActionCommit})
		for name, err := range map[string]error{"gate": gateErr, "always allow": appendErr} {
			if err == nil || !strings.Contains(err.Error(), tc.words) {
				t.Errorf("%s: error %v, want one saying %q", name, err, tc.words)
			}
		}
		r := gate.Decide("w", Action{Kind: backend.ActionShell, Command: "ls", Cwd: "."})
		if r.Verdict != backend.Ask || r.RuleID != RuleBrokenPolicy {
			t.Errorf("decision under %q: %s by %s, want ask by %s", tc.words, r.Verdict, r.RuleID, RuleBrokenPolicy)
		}
	}
	if _, err := ReadPolicy(strings.NewReader(huge)); err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Errorf("ReadPolicy of an oversized text: %v", err)
	}
}
