package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"agenthub/workspace/git"
)

// execRunner is the tests' git.Runner: os/exec directly, which test files
// may use (the product's runner goes through backend/proc).
func execRunner(ctx context.Context, dir string, env, args []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func gitEnv() []string {
	return append(git.CLIEnv(os.Environ()), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+os.TempDir())
}

func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := execRunner(context.Background(), dir, gitEnv(), args)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, dir, p, s string) {
	t.Helper()
	full := filepath.Join(dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo is a checkout with one commit and a Manager whose directory is a
// separate temp dir (the data directory's worktrees folder).
func newRepo(t *testing.T) (string, *Manager) {
	t.Helper()
	repo := t.TempDir()
	run(t, repo, "init", "-q", "-b", "main")
	write(t, repo, "a.txt", "a\n")
	write(t, repo, "dir/b.txt", "b\n")
	run(t, repo, "add", "-A")
	run(t, repo, "commit", "-q", "-m", "init")
	return repo, &Manager{Dir: filepath.Join(t.TempDir(), "worktrees"), Run: execRunner, Env: gitEnv()}
}

func TestCreateIsOutsideTheCheckoutOnANewBranch(t *testing.T) {
	repo, m := newRepo(t)
	wt, err := m.Create(context.Background(), repo, "run_1", "")
	if err != nil {
		t.Fatal(err)
	}
	if wt.Branch != "agenthub/run_1" || wt.Base != run(t, repo, "rev-parse", "HEAD") {
		t.Fatalf("worktree %+v", wt)
	}
	if rel, _ := filepath.Rel(repo, wt.Path); !strings.HasPrefix(rel, "..") {
		t.Fatalf("worktree %s is inside the checkout %s", wt.Path, repo)
	}
	if got := run(t, wt.Path, "rev-parse", "--abbrev-ref", "HEAD"); got != wt.Branch {
		t.Fatalf("worktree HEAD on %q", got)
	}
	// The checkout's own branch and files are untouched.
	if got := run(t, repo, "rev-parse", "--abbrev-ref", "HEAD"); got != "main" {
		t.Fatalf("checkout HEAD moved to %q", got)
	}
	if got := run(t, repo, "status", "--porcelain"); got != "" {
		t.Fatalf("checkout status %q", got)
	}
	// No hidden refs: the only new ref is the run branch.
	refs := run(t, repo, "for-each-ref", "--format=%(refname)")
	if refs != "refs/heads/agenthub/run_1\nrefs/heads/main" {
		t.Fatalf("refs:\n%s", refs)
	}
}

func TestCreateRefusesADirectoryInsideTheCheckout(t *testing.T) {
	repo, m := newRepo(t)
	for _, dir := range []string{repo, filepath.Join(repo, ".git", "wt"), filepath.Join(repo, "sub", "wts")} {
		m.Dir = dir
		if _, err := m.Create(context.Background(), repo, "run_x", ""); !errors.Is(err, ErrInsideCheckout) {
			t.Errorf("Dir %s: err %v, want ErrInsideCheckout", dir, err)
		}
	}
	// Through a symlink that leads into the checkout.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	m.Dir = filepath.Join(link, "wts")
	if _, err := m.Create(context.Background(), repo, "run_x", ""); !errors.Is(err, ErrInsideCheckout) {
		t.Errorf("symlinked Dir: err %v, want ErrInsideCheckout", err)
	}
}

func TestCreateRefusesBadIDsAndOptionBases(t *testing.T) {
	repo, m := newRepo(t)
	for _, id := range []string{"", "../x", "a/b", "-rf", "a b", strings.Repeat("x", 65)} {
		if _, err := m.Create(context.Background(), repo, id, ""); !errors.Is(err, ErrBadID) {
			t.Errorf("id %q: err %v", id, err)
		}
	}
	if _, err := m.Create(context.Background(), repo, "run_2", "--orphan"); err == nil {
		t.Error("a base starting with - was accepted")
	}
	if _, err := m.Create(context.Background(), repo, "run_3", "nosuchref"); err == nil {
		t.Error("an unknown base was accepted")
	}
}

func TestCreateFromAChosenBase(t *testing.T) {
	repo, m := newRepo(t)
	first := run(t, repo, "rev-parse", "HEAD")
	write(t, repo, "a.txt", "a2\n")
	run(t, repo, "commit", "-qam", "second")
	wt, err := m.Create(context.Background(), repo, "run_b", first)
	if err != nil {
		t.Fatal(err)
	}
	if wt.Base != first {
		t.Fatalf("base %s, want %s", wt.Base, first)
	}
	if b, _ := os.ReadFile(filepath.Join(wt.Path, "a.txt")); string(b) != "a\n" {
		t.Fatalf("a.txt %q", b)
	}
}

// The attack: a clean-up that deletes uncommitted or unpushed work
// (claude-code#74719). Removal must refuse, listing the work, until a
// confirmation names all of it; a confirmation of an older listing does not
// cover work added since.
func TestRemoveNeverLosesWorkWithoutAConfirmationListingIt(t *testing.T) {
	repo, m := newRepo(t)
	ctx := context.Background()
	wt, err := m.Create(ctx, repo, "run_r", "")
	if err != nil {
		t.Fatal(err)
	}
	write(t, wt.Path, "a.txt", "changed\n")
	write(t, wt.Path, "new.txt", "new\n")
	err = m.Remove(ctx, repo, wt, false, State{})
	var ue *UnsavedError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnsaved) {
		t.Fatalf("remove with uncommitted work: %v", err)
	}
	if !slices.Equal(ue.State.Uncommitted, []string{"a.txt", "new.txt"}) {
		t.Fatalf("listed %v", ue.State.Uncommitted)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "new.txt")); err != nil {
		t.Fatalf("the refused removal touched the worktree: %v", err)
	}
	// Commit there: now a commit on no other branch, and the listing moved on.
	run(t, wt.Path, "add", "-A")
	run(t, wt.Path, "commit", "-qm", "agent work")
	write(t, wt.Path, "later.txt", "later\n")
	err = m.Remove(ctx, repo, wt, false, ue.State)
	if !errors.As(err, &ue) || len(ue.State.Unmerged) != 1 || ue.State.Unmerged[0].Subject != "agent work" ||
		!slices.Equal(ue.State.Uncommitted, []string{"later.txt"}) {
		t.Fatalf("an old confirmation covered new work: %v", err)
	}
	// Keeping the branch: only the uncommitted file is at stake.
	err = m.Remove(ctx, repo, wt, true, State{})
	if !errors.As(err, &ue) || len(ue.State.Unmerged) != 0 || !slices.Equal(ue.State.Uncommitted, []string{"later.txt"}) {
		t.Fatalf("keep-branch removal: %v", err)
	}
	// The exact listing confirmed: removed, branch deleted, nothing pruned by hand left.
	if err := m.Remove(ctx, repo, wt, false, ue.State); err == nil {
		t.Fatal("the keep-branch listing covered the branch's commits")
	}
	st, err := m.State(ctx, repo, wt)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(ctx, repo, wt, false, st); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("worktree still there: %v", err)
	}
	if refs := run(t, repo, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/main" {
		t.Fatalf("refs left: %s", refs)
	}
	if list := run(t, repo, "worktree", "list", "--porcelain"); strings.Contains(list, wt.Path) {
		t.Fatalf("git still records the worktree:\n%s", list)
	}
}

func TestRemoveCleanWorktreeNeedsNoConfirmation(t *testing.T) {
	repo, m := newRepo(t)
	ctx := context.Background()
	wt, err := m.Create(ctx, repo, "run_c", "")
	if err != nil {
		t.Fatal(err)
	}
	// A commit that is also on another branch is not unsaved.
	write(t, wt.Path, "a.txt", "x\n")
	run(t, wt.Path, "commit", "-qam", "x")
	run(t, repo, "branch", "saved", wt.Branch)
	if err := m.Remove(ctx, repo, wt, false, State{}); err != nil {
		t.Fatal(err)
	}
	if got := run(t, repo, "rev-parse", "saved"); got == "" {
		t.Fatal("the other branch went")
	}
}

func TestRemoveKeepBranchKeepsCommits(t *testing.T) {
	repo, m := newRepo(t)
	ctx := context.Background()
	wt, _ := m.Create(ctx, repo, "run_k", "")
	write(t, wt.Path, "a.txt", "kept\n")
	run(t, wt.Path, "commit", "-qam", "kept")
	tip := run(t, wt.Path, "rev-parse", "HEAD")
	if err := m.Remove(ctx, repo, wt, true, State{}); err != nil {
		t.Fatal(err)
	}
	if got := run(t, repo, "rev-parse", wt.Branch); got != tip {
		t.Fatalf("branch at %s, want %s", got, tip)
	}
}

func TestRemoveAWorktreeWhoseDirectoryWentPrunes(t *testing.T) {
	repo, m := newRepo(t)
	ctx := context.Background()
	wt, _ := m.Create(ctx, repo, "run_m", "")
	if err := os.RemoveAll(wt.Path); err != nil {
		t.Fatal(err)
	}
	list, err := m.List(ctx, repo)
	if err != nil || len(list) != 1 || !list[0].Prunable || list[0].Branch != wt.Branch {
		t.Fatalf("list %+v %v", list, err)
	}
	if err := m.Remove(ctx, repo, wt, false, State{}); err != nil {
		t.Fatal(err)
	}
	if list, _ := m.List(ctx, repo); len(list) != 0 {
		t.Fatalf("left %+v", list)
	}
}

func TestChangesAgainstTheBase(t *testing.T) {
	repo, m := newRepo(t)
	ctx := context.Background()
	wt, _ := m.Create(ctx, repo, "run_d", "")
	write(t, wt.Path, "a.txt", "committed\n")
	run(t, wt.Path, "commit", "-qam", "c")
	write(t, wt.Path, "new.txt", "untracked\n")
	if err := os.Remove(filepath.Join(wt.Path, "dir/b.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, wt.Path, ".gitignore", "*.log\n")
	write(t, wt.Path, "x.log", "ignored\n")
	if err := os.Symlink("a.txt", filepath.Join(wt.Path, "link")); err != nil {
		t.Fatal(err)
	}
	cs, err := m.Changes(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]FileChange{}
	var paths []string
	for _, c := range cs {
		got[c.Path] = c
		paths = append(paths, c.Path)
	}
	if !slices.Equal(paths, []string{".gitignore", "a.txt", "dir/b.txt", "link", "new.txt"}) {
		t.Fatalf("paths %v", paths)
	}
	if a := got["a.txt"]; string(a.Before) != "a\n" || string(a.After) != "committed\n" || !a.BeforeExists || !a.AfterExists {
		t.Fatalf("a.txt %+v", a)
	}
	if b := got["dir/b.txt"]; string(b.Before) != "b\n" || b.AfterExists {
		t.Fatalf("dir/b.txt %+v", b)
	}
	if n := got["new.txt"]; n.BeforeExists || string(n.After) != "untracked\n" {
		t.Fatalf("new.txt %+v", n)
	}
	if l := got["link"]; l.Skipped == "" {
		t.Fatalf("a symlink is merged as content: %+v", l)
	}
}

// newBare is a local bare repository configured as remote "origin".
func newBare(t *testing.T, repo string) string {
	bare := filepath.Join(t.TempDir(), "remote.git")
	run(t, repo, "init", "-q", "--bare", bare)
	run(t, repo, "remote", "add", "origin", bare)
	return bare
}

func TestPushIsBoundToTheShownRange(t *testing.T) {
	repo, m := newRepo(t)
	ctx := context.Background()
	bare := newBare(t, repo)
	wt, _ := m.Create(ctx, repo, "run_p", "")
	write(t, wt.Path, "a.txt", "one\n")
	run(t, wt.Path, "commit", "-qam", "one")
	plan, err := m.PlanPush(ctx, repo, wt, "origin")
	if err != nil {
		t.Fatal(err)
	}
	if plan.From != "" || len(plan.Commits) != 1 || plan.Commits[0].Subject != "one" {
		t.Fatalf("plan %+v", plan)
	}
	// The attack: a commit lands after the range was shown; the approved
	// push must not send it.
	write(t, wt.Path, "a.txt", "two\n")
	run(t, wt.Path, "commit", "-qam", "two")
	if err := m.Push(ctx, repo, plan); !errors.Is(err, ErrMoved) {
		t.Fatalf("push of a moved branch: %v", err)
	}
	if out := run(t, bare, "for-each-ref"); out != "" {
		t.Fatalf("the remote got %s", out)
	}
	plan, err = m.PlanPush(ctx, repo, wt, "origin")
	if err != nil || len(plan.Commits) != 2 {
		t.Fatalf("plan %+v %v", plan, err)
	}
	if err := m.Push(ctx, repo, plan); err != nil {
		t.Fatal(err)
	}
	if got := run(t, bare, "rev-parse", wt.Branch); got != plan.To {
		t.Fatalf("remote at %s, want %s", got, plan.To)
	}
	// The remote moves (someone else pushed): a plan made before is refused.
	write(t, wt.Path, "a.txt", "three\n")
	run(t, wt.Path, "commit", "-qam", "three")
	plan3, err := m.PlanPush(ctx, repo, wt, "origin")
	if err != nil || plan3.From != plan.To || len(plan3.Commits) != 1 {
		t.Fatalf("plan3 %+v %v", plan3, err)
	}
	other := t.TempDir()
	run(t, other, "clone", "-q", bare, ".")
	run(t, other, "checkout", "-q", wt.Branch)
	write(t, other, "z.txt", "z\n")
	run(t, other, "add", "z.txt")
	run(t, other, "commit", "-qm", "theirs")
	run(t, other, "push", "-q", "origin", wt.Branch)
	if err := m.Push(ctx, repo, plan3); !errors.Is(err, ErrMoved) {
		t.Fatalf("push over a moved remote: %v", err)
	}
}

func TestPlanPushRefusesUnknownOrOptionRemotes(t *testing.T) {
	repo, m := newRepo(t)
	wt, _ := m.Create(context.Background(), repo, "run_q", "")
	for _, r := range []string{"", "nosuch", "--upload-pack=x", "/tmp/x", "a:b"} {
		if _, err := m.PlanPush(context.Background(), repo, wt, r); err == nil {
			t.Errorf("remote %q accepted", r)
		}
	}
}

// A plan comes back from a client: Push checks its remote again. A path or
// URL in place of a configured remote's name is refused, and nothing moves.
func TestPushRefusesARemoteThatIsNotConfigured(t *testing.T) {
	repo, m := newRepo(t)
	ctx := context.Background()
	bare := newBare(t, repo)
	wt, _ := m.Create(ctx, repo, "run_u", "")
	plan, err := m.PlanPush(ctx, repo, wt, "origin")
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.git")
	run(t, repo, "init", "-q", "--bare", elsewhere)
	for _, r := range []string{elsewhere, "file://" + elsewhere, "--receive-pack=x", "nosuch"} {
		p := plan
		p.Remote = r
		if err := m.Push(ctx, repo, p); err == nil {
			t.Errorf("pushed to %q", r)
		}
	}
	for _, mut := range []func(*PushPlan){
		func(p *PushPlan) { p.To = "+" + p.To },
		func(p *PushPlan) { p.To = "HEAD" },
		func(p *PushPlan) { p.Branch = "main:refs/heads/x" },
		func(p *PushPlan) { p.From = "HEAD~1" },
	} {
		p := plan
		mut(&p)
		if err := m.Push(ctx, repo, p); err == nil {
			t.Errorf("pushed the altered plan %+v", p)
		}
	}
	if out := run(t, elsewhere, "for-each-ref"); out != "" {
		t.Fatalf("the push reached an unconfigured remote: %s", out)
	}
	if out := run(t, bare, "for-each-ref"); out != "" {
		t.Fatalf("origin moved: %s", out)
	}
}
