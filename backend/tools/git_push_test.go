package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/workspace/git"
)

// gitT runs git for test setup through the product's runner.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	env := append(git.CLIEnv(os.Environ()), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := runGit(context.Background(), dir, env, args)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// pushFixture is a repository on branch agenthub/run_1 with one commit of
// its own, and a local bare repository as its remote "origin".
func pushFixture(t *testing.T) (*fixture, string) {
	f := newFixture(t)
	f.write(t, "a.txt", "a\n")
	gitT(t, f.root, "init", "-q", "-b", "main")
	gitT(t, f.root, "add", "a.txt")
	gitT(t, f.root, "commit", "-qm", "init")
	gitT(t, f.root, "switch", "-qc", "agenthub/run_1")
	f.write(t, "a.txt", "b\n")
	gitT(t, f.root, "commit", "-qam", "agent change")
	bare := filepath.Join(t.TempDir(), "remote.git")
	gitT(t, f.root, "init", "-q", "--bare", bare)
	gitT(t, f.root, "remote", "add", "origin", bare)
	return f, bare
}

func TestGitPushAlwaysAsksAndSendsTheShownRange(t *testing.T) {
	f, bare := pushFixture(t)
	a := f.action(t, GitPush, `{}`)
	if a == nil || a.Kind != backend.ActionPush || !a.Kind.AlwaysAsks() {
		t.Fatalf("action %+v", a)
	}
	var pv pushPreview
	mustJSON(t, a.Preview, &pv)
	tip := gitT(t, f.root, "rev-parse", "HEAD")
	if pv.Remote != "origin" || pv.Branch != "agenthub/run_1" || pv.From != "" || pv.To != tip ||
		len(pv.Commits) != 1 || pv.Commits[0].Subject != "agent change" {
		t.Fatalf("preview %+v", pv)
	}
	f.noMachinePaths(t, "preview", string(a.Preview))
	// A commit after the approval changes the subject: the engine's drift
	// check refuses the approved call.
	f.write(t, "a.txt", "c\n")
	gitT(t, f.root, "commit", "-qam", "later")
	if b := f.action(t, GitPush, `{}`); b == nil || string(b.Subject) == string(a.Subject) {
		t.Fatalf("a new commit left the push subject unchanged: %s", a.Subject)
	}
	res := f.execute(t, GitPush, `{}`)
	if res.IsError || !strings.Contains(res.Content, "pushed agenthub/run_1 to origin (2 commit(s)") {
		t.Fatalf("push: %+v", res)
	}
	if got := gitT(t, bare, "rev-parse", "agenthub/run_1"); got != gitT(t, f.root, "rev-parse", "HEAD") {
		t.Fatalf("remote at %s", got)
	}
	// Nothing else went: main is not on the remote.
	if refs := gitT(t, bare, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/agenthub/run_1" {
		t.Fatalf("remote refs %q", refs)
	}
}

func TestGitPushRefusals(t *testing.T) {
	f, _ := pushFixture(t)
	for _, args := range []string{`{"remote":"nosuch"}`, `{"remote":"--exec=x"}`, `{"remote":"/tmp/elsewhere"}`} {
		if a := f.action(t, GitPush, args); a != nil {
			t.Errorf("%s: gated %+v", args, a)
		}
		if res := f.execute(t, GitPush, args); !res.IsError {
			t.Errorf("%s: pushed: %+v", args, res)
		}
	}
	gitT(t, f.root, "switch", "-q", "--detach")
	if res := f.execute(t, GitPush, `{}`); !res.IsError || !strings.Contains(res.Content, "not on a branch") {
		t.Fatalf("detached: %+v", res)
	}
}

// The GitHub CLI is not installed on the test machine: detection is tested
// with scripts standing in for it on PATH (real processes), and a pull
// request asked for without a ready gh is part of the approved subject.
func TestGHDetection(t *testing.T) {
	ctx := context.Background()
	empty := t.TempDir()
	if got := GHStatus(ctx, empty).State; got != GHMissing {
		t.Fatalf("no gh: %s", got)
	}
	for _, tc := range []struct {
		exit int
		want string
	}{{1, GHUnauthenticated}, {0, GHReady}} {
		dir := t.TempDir()
		script := "#!/bin/sh\n[ \"$1 $2\" = \"auth status\" ] && exit " + string(rune('0'+tc.exit)) + "\nexit 3\n"
		if err := os.WriteFile(filepath.Join(dir, "gh"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := GHStatus(ctx, dir).State; got != tc.want {
			t.Errorf("gh auth status exit %d: %s, want %s", tc.exit, got, tc.want)
		}
	}
	if _, err := OpenPullRequest(ctx, t.TempDir(), empty, "agenthub/run_1"); err == nil ||
		!strings.Contains(err.Error(), "missing") {
		t.Fatalf("pull request without gh: %v", err)
	}
	f, _ := pushFixture(t)
	a := f.action(t, GitPush, `{"pull_request":true}`)
	plain := f.action(t, GitPush, `{}`)
	var subj map[string]any
	if err := json.Unmarshal(a.Subject, &subj); err != nil || subj["pullRequest"] != true ||
		string(a.Subject) == string(plain.Subject) {
		t.Fatalf("the pull request is not part of the approved subject: %s", a.Subject)
	}
}
