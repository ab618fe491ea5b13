package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/app/api/conflicttest"
)

// TestConflictsResolveCommand: `runs show` lists a recovered conflict with
// its intent id and the command that settles it; `conflicts resolve
// --restore` puts the content from before back; a second resolve fails
// with the conflict code; `runs show` then says how it was resolved, and
// `audit verify` passes.
func TestConflictsResolveCommand(t *testing.T) {
	home := t.TempDir()
	c, err := conflicttest.Make(t.Context(), home, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENTHUB_HOME": home}
	code, out, errOut := runCLI(t, env, "runs", "show", c.RunID)
	want := "agenthub conflicts resolve " + c.RunID + " " + c.IntentID + " --keep | --restore"
	if code != 0 || !strings.Contains(out, "Workspace conflict "+c.IntentID) || !strings.Contains(out, want) {
		t.Fatalf("runs show: exit %d\n%s%s\nwant %q", code, out, errOut, want)
	}
	for _, bad := range [][]string{{"conflicts"}, {"conflicts", "resolve", c.RunID, c.IntentID},
		{"conflicts", "resolve", c.RunID, c.IntentID, "--keep", "--restore"}} {
		if code, _, _ := runCLI(t, env, bad...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, ExitUsage)
		}
	}
	code, out, errOut = runCLI(t, env, "conflicts", "resolve", c.RunID, c.IntentID, "--restore")
	if code != 0 || !strings.Contains(out, "resolved") {
		t.Fatalf("resolve --restore: exit %d\n%s%s", code, out, errOut)
	}
	if data, err := os.ReadFile(filepath.Join(c.Root, "f.txt")); err != nil || string(data) != "old" {
		t.Errorf("f.txt = %q, %v; want the content before the change", data, err)
	}
	code, out, errOut = runCLI(t, env, "conflicts", "resolve", c.RunID, c.IntentID, "--keep")
	if code == 0 || !strings.Contains(out+errOut, "already resolved") {
		t.Errorf("second resolve: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, env, "runs", "show", c.RunID)
	if code != 0 || !strings.Contains(out, "Resolved: restore by ") || strings.Contains(out, want) {
		t.Errorf("runs show after the resolve:\n%s", out)
	}
	if code, out, errOut := runCLI(t, env, "audit", "verify"); code != 0 {
		t.Errorf("audit verify: exit %d\n%s%s", code, out, errOut)
	}
}
