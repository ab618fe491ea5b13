package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUndoRun (issue 18): `agenthub undo --run RUN` reverts a run's applied
// changes in one go, newest first, refusing with the changed file's name
// and restoring nothing while a file changed since; with nothing left it
// reverts nothing and succeeds; wrong flag sets are usage errors.
func TestUndoRun(t *testing.T) {
	env, dir := newGitWorkspace(t)
	commitFile(t, dir, "notes.txt", "before\n")
	pb := filepath.Join(t.TempDir(), "two.toml")
	if err := os.WriteFile(pb, []byte(`version = 1
[[step]]
[[step.call]]
tool = "write_file"
args = { path = "notes.txt", content = "after\n" }
[[step.call]]
tool = "write_file"
args = { path = "new.txt", content = "new\n" }
[[step]]
say = "done"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--playbook", pb, "--on-approval", "approve", "--json", "write two")
	if code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	runID := decodeNDJSON(t, out, 0)[0].RunID

	for _, args := range [][]string{{"undo"}, {"undo", "--run", runID, "--workspace", dir, "ck"}, {"undo", "--run", runID, "a", "b"}} {
		if code, _, errOut := runCLI(t, env, args...); code == ExitOK || !strings.Contains(errOut, "undo --run RUN") {
			t.Errorf("%v: exit %d, want a usage error naming --run:\n%s", args, code, errOut)
		}
	}

	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, env, "undo", "--run", runID)
	if code == ExitOK || !strings.Contains(errOut, "conflict") || !strings.Contains(errOut, "new.txt") {
		t.Fatalf("undo --run with new.txt edited: exit %d, want a conflict naming new.txt:\n%s", code, errOut)
	}
	if got := readText(t, dir, "notes.txt"); got != "after\n" {
		t.Fatalf("a refused undo restored notes.txt: %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, env, "undo", "--run", runID, "--json")
	var res struct {
		Reverted []struct {
			CheckpointID string `json:"checkpointId"`
		} `json:"reverted"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil || len(res.Reverted) != 2 {
		t.Fatalf("undo --run: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := readText(t, dir, "notes.txt"); got != "before\n" {
		t.Errorf("notes.txt after undo --run: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt after undo --run: %v, want it gone", err)
	}
	if code, _, errOut := runCLI(t, env, "undo", "--run", runID); code != ExitOK {
		t.Errorf("undo --run with nothing left to revert: exit %d\n%s", code, errOut)
	}
}

func readText(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
