package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
)

// appliedCheckpoint runs the demo with approvals and returns the checkpoint
// of its applied patch, read from the run's events.
func appliedCheckpoint(t *testing.T, env map[string]string, dir string) string {
	t.Helper()
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--on-approval", "approve", "--json", "tour")
	if code != 0 {
		t.Fatalf("run: %d %s", code, errOut)
	}
	for _, ev := range decodeNDJSON(t, out, 0) {
		if ev.Type == backend.EvPatchApplied {
			var p struct {
				CheckpointID string `json:"checkpointId"`
			}
			if err := json.Unmarshal(ev.Payload, &p); err == nil && p.CheckpointID != "" {
				return p.CheckpointID
			}
		}
	}
	t.Fatal("no run.patch.applied event with a checkpoint")
	return ""
}

func TestUndoRestoresAndRefusesChangedFiles(t *testing.T) {
	env, dir := newGitWorkspace(t)
	tour := filepath.Join(dir, "AGENTHUB_TOUR.md")
	ck := appliedCheckpoint(t, env, dir)
	if _, err := os.Stat(tour); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, env, "undo", "--workspace", dir, ck)
	if code != 0 || !strings.Contains(out, "Restored 1 file") {
		t.Fatalf("undo: %d %s %s", code, out, errOut)
	}
	if _, err := os.Stat(tour); !os.IsNotExist(err) {
		t.Fatal("undo did not remove the created file")
	}
	if code, _, errOut := runCLI(t, env, "undo", "--workspace", dir, ck); code != ExitFailed || !strings.Contains(errOut, "not_found") {
		t.Fatalf("second undo: %d %s", code, errOut)
	}

	ck2 := appliedCheckpoint(t, env, dir)
	if err := os.WriteFile(tour, []byte("edited by the user\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, env, "undo", "--workspace", dir, ck2)
	if code != ExitFailed || !strings.Contains(errOut, "conflict") || !strings.Contains(errOut, "AGENTHUB_TOUR.md") {
		t.Fatalf("undo over a user edit: %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(tour); string(b) != "edited by the user\n" {
		t.Fatal("a refused undo touched the file")
	}
	code, out, _ = runCLI(t, env, "audit", "verify")
	if code != 0 || !strings.Contains(out, "OK") {
		t.Fatalf("audit after undo: %s", out)
	}
}
