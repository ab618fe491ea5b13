package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/store"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestRecoverReconcilesCommitIntents (issue 15): git_commit records its
// commit as an intent (base HEAD, blobs) before making it; a process that
// died between the two leaves it open, and the next start asks the
// repository: the commit on the base with exactly those blobs → applied,
// HEAD still the base → not applied, anything else → a conflict. The
// interrupted call's result says which.
func TestRecoverReconcilesCommitIntents(t *testing.T) {
	cases := []struct {
		name    string
		act     func(t *testing.T, root string) // what happened before the crash
		state   string
		audit   string
		callSay string
	}{
		{"commit made", func(t *testing.T, root string) { gitIn(t, root, "commit", "-qam", "agent commit") },
			store.IntentApplied, "commit.applied", "the commit was made"},
		{"commit not made", func(t *testing.T, root string) {}, store.IntentNotApplied, "commit.not_applied",
			"nothing was committed"},
		{"another commit", func(t *testing.T, root string) {
			if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("someone else\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitIn(t, root, "commit", "-qam", "other")
		}, store.IntentConflict, "patch.conflict", backend.CodeWorkspaceConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, db := newWorkspace(t)
			gitIn(t, root, "init", "-q")
			if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitIn(t, root, "add", ".")
			gitIn(t, root, "commit", "-qm", "init")
			base := gitIn(t, root, "rev-parse", "HEAD")
			if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("new\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			blob := gitIn(t, root, "hash-object", "f.txt")
			c.act(t, root)
			g := newGated(t, root, db)
			runID := deadCall(t, g, "git_commit", store.Intent{ID: "commit_0123456789abcdef", WorkspaceID: "ws_1",
				Op: backend.IntentCommit, Files: []store.IntentFile{{Path: "HEAD", Before: base}, {Path: "f.txt", After: blob}}})
			if err := g.e.Recover(t.Context()); err != nil {
				t.Fatal(err)
			}
			defer g.close(t)
			ins, err := g.st.Intents(t.Context(), runID)
			if err != nil || len(ins) != 1 || ins[0].State != c.state {
				t.Fatalf("intents = %+v, %v; want one %s", ins, err, c.state)
			}
			if kinds := g.auditKinds(t); !slices.Contains(kinds, c.audit+"/engine") {
				t.Errorf("audit %v, want %s", kinds, c.audit)
			}
			if _, out := g.call(t, runID, "c1"); !strings.Contains(out, c.callSay) {
				t.Errorf("the call's result %q does not say %q", out, c.callSay)
			}
		})
	}
}
