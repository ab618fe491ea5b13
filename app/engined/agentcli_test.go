package engined_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/app/cli"
	"agenthub/backend/runtime/acp/acptest"
)

// geminiBin is the pinned Gemini CLI that scripts/deps.sh installs.
func geminiBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("AGENTHUB_GEMINI_BIN")
	if bin == "" {
		root, _ := filepath.Abs("../..")
		bin = filepath.Join(root, ".cache", "agent-clis", "gemini", "node_modules", ".bin", "gemini")
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the pinned Gemini CLI is not installed: scripts/deps.sh test")
		}
		t.Skip("the pinned Gemini CLI is not installed: scripts/deps.sh test")
	}
	return bin
}

// TestAgentCLIDecideLaterThroughTheEngine is issue 16's "decide later" with
// a real agent CLI (Gemini CLI over ACP, its model a local mock): `agenthub
// run` exits 3 leaving the patch pending; the CLI's session stays alive in
// the engine, and `agenthub approve ID --hunks 1` in a later process
// writes exactly the first hunk and completes the run.
func TestAgentCLIDecideLaterThroughTheEngine(t *testing.T) {
	bin := geminiBin(t)
	b := newBox(t)
	ws := gitWorkspace(t)
	before := "alpha\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nomega\n"
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	proposed := strings.Replace(strings.Replace(before, "alpha", "ALPHA", 1), "omega", "OMEGA", 1)
	srv := acptest.NewGemini(
		acptest.Turn{Calls: []acptest.Call{{Name: "write_file", Args: map[string]any{"file_path": ws + "/a.txt", "content": proposed}}}},
		acptest.Turn{Text: []string{"Partly written."}})
	defer srv.Close()
	if err := os.MkdirAll(filepath.Join(b.home, "profiles"), 0o700); err != nil {
		t.Fatal(err)
	}
	profile := fmt.Sprintf("name = \"gm\"\nruntime = \"gemini\"\ncommand = [%q, \"--acp\"]\nbase_url = %q\nrun_timeout = \"2m\"\n[stop]\nmax_rounds = 20\n",
		bin, srv.URL)
	if err := os.WriteFile(filepath.Join(b.home, "profiles", "gm.toml"), []byte(profile), 0o600); err != nil {
		t.Fatal(err)
	}
	b.must("workspace", "add", ws)
	code, out, errOut := b.cmd(nil, "run", "--workspace", ws, "--profile", "gm", "edit a.txt")
	if code != cli.ExitWaiting {
		t.Fatalf("run: exit %d, want 3\n%s%s", code, out, errOut)
	}
	id := pendingID(t, out+errOut)
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != before {
		t.Fatalf("a.txt changed before any decision: %q", b)
	}
	code, out, errOut = b.cmd(nil, "approve", id, "--hunks", "1", "--reason", "keep omega")
	if code != 0 {
		t.Fatalf("approve --hunks 1 later: exit %d\n%s%s", code, out, errOut)
	}
	want := strings.Replace(before, "alpha", "ALPHA", 1)
	if got, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(got) != want {
		t.Fatalf("a.txt: %q, want only the approved hunk", got)
	}
	if list := b.runs(); len(list) != 1 || list[0].State != "Completed" {
		t.Fatalf("runs: %+v, want the run completed", list)
	}
}
