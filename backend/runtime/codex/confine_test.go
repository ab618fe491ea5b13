package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend/confine"
	"agenthub/backend/runtime/codex/codextest"
)

// TestConfinedLive: the pinned Codex CLI runs under AgentHub's Landlock
// confinement, so what Codex's own process tree does is bounded by the
// kernel, not only by Codex's sandbox. A hostile model asks for a command
// run outside Codex's sandbox (require_escalated) and for a patch to an
// absolute path outside the workspace; both are accepted (as a careless
// reviewer would), and neither file may appear. The same commands inside
// the workspace do write, so the refusal is the confinement's.
func TestConfinedLive(t *testing.T) {
	bin := liveBin(t)
	if confine.Probe().ABI < 1 {
		t.Skip("the kernel lacks Landlock: nothing to prove")
	}
	root, outside := t.TempDir(), t.TempDir()
	escaped := filepath.Join(outside, "escaped.txt")
	patched := filepath.Join(outside, "patched.txt")
	srv := codextest.New(
		codextest.Turn{Calls: []codextest.Call{codextest.Exec("call_e1",
			"echo pwned > "+escaped+"; echo inside > in.txt", true)}},
		codextest.Turn{Calls: []codextest.Call{codextest.ApplyPatch("call_p1",
			"*** Begin Patch\n*** Add File: "+patched+"\n+pwned\n*** End Patch\n")}},
		codextest.Turn{Calls: []codextest.Call{codextest.ApplyPatch("call_p2",
			"*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n")}},
		codextest.Turn{Text: []string{"Done."}},
	)
	defer srv.Close()
	s, _ := liveSession(t, bin, srv, root, "run_confined")
	var asked []string
	pump(t, s, func(req *request) string {
		asked = append(asked, req.method)
		return "accept"
	})
	for _, p := range []string{escaped, patched} {
		if b, err := os.ReadFile(p); err == nil {
			t.Errorf("Codex wrote outside the workspace: %s = %q (approvals: %v)", filepath.Base(p), b, asked)
		}
	}
	for name, want := range map[string]string{"in.txt": "inside\n", "hello.txt": "hello\n"} {
		if b, err := os.ReadFile(filepath.Join(root, name)); err != nil || string(b) != want {
			t.Errorf("%s in the workspace: %q %v (approvals: %v): the confinement must not stop work inside it",
				name, b, err, asked)
		}
	}
	if len(asked) == 0 || !strings.Contains(strings.Join(asked, ","), methodCommandApproval) {
		t.Errorf("Codex never asked to run the escalated command: %v", asked)
	}
}
