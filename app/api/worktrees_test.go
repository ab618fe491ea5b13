package api

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/store"
	"agenthub/workspace"
)

// runWait is the deadline of every wait here: the machine is shared and
// loaded, so waits are generous and poll a condition, never sleep-and-check.
const runWait = 90 * time.Second

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// twenty is shared.txt at the base: twenty numbered lines.
func twenty(edit map[int]string) string {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		line := fmt.Sprintf("line %d", i)
		if e, ok := edit[i]; ok {
			line = e
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

type wtEnv struct {
	core      *Core
	ws        backend.Workspace
	checkout  string
	runs      *RunsAPI
	approvals *ApprovalsAPI
	wts       *WorktreesAPI
}

func newWTEnv(t *testing.T) *wtEnv {
	t.Helper()
	core, err := Open(t.Context(), Config{Home: t.TempDir(), Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "shared.txt"), []byte(twenty(nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	ws, err := NewWorkspacesAPI(core).Add(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &wtEnv{core: core, ws: ws, checkout: dir, runs: NewRunsAPI(core), approvals: NewApprovalsAPI(core),
		wts: NewWorktreesAPI(core)}
}

// playbook writes files (approved one by one), reads owned.txt back and
// expects its own content there: a write of another run landing in this
// run's root fails the run.
func playbook(name string, files map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version = 1\nname = %q\n[[step]]\nsay = \"writing\"\n", name)
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "[[step.call]]\ntool = \"write_file\"\nargs = { path = %q, content = %q }\n", k, files[k])
	}
	fmt.Fprintf(&b, "[[step]]\nsay = \"checking\"\n[[step.call]]\ntool = \"read_file\"\nargs = { path = \"owned.txt\" }\n")
	fmt.Fprintf(&b, "[[step]]\nexpect = [%q]\nsay = \"done\"\n", strings.TrimSpace(files["owned.txt"]))
	return b.String()
}

func (e *wtEnv) start(t *testing.T, pb, isolation string) backend.RunSummary {
	t.Helper()
	profile, err := e.core.AddPlaybook([]byte(pb))
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.runs.Start(StartRun{WorkspaceID: e.ws.ID, Profile: profile, Task: "work", Isolation: isolation})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// approveUntilDone approves every request of the run until it ends.
func (e *wtEnv) approveUntilDone(t *testing.T, runID string) backend.RunSummary {
	t.Helper()
	for deadline := time.Now().Add(runWait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r, err := e.runs.Get(runID)
		if err != nil {
			t.Error(err)
			return r
		}
		if r.State.Terminal() {
			return r
		}
		list, err := e.approvals.ForRun(runID)
		if err != nil {
			t.Error(err)
			return r
		}
		for _, a := range list {
			if _, err := e.approvals.Decide(backend.Decision{ApprovalID: a.ID, ToolCallID: a.ToolCallID,
				Kind: backend.ApproveOnce, SubjectHash: a.SubjectHash}); err != nil &&
				backend.CodeOf(err) != backend.CodeApprovalAlreadyResolved {
				t.Error(err)
			}
		}
	}
	t.Errorf("run %s did not end within %s", runID, runWait)
	return backend.RunSummary{}
}

func readFile(t *testing.T, dir, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParallelWorktreeRuns: four worktree runs on one repository, all
// waiting for approval at once (they proceed in parallel), each writing the
// same path with its own content and reading it back (no cross-talk), the
// checkout untouched; then their merges are reviewed one at a time against
// the moving checkout.
func TestParallelWorktreeRuns(t *testing.T) {
	e := newWTEnv(t)
	const n = 4
	files := []map[string]string{
		{"owned.txt": "run 0\n", "notes/run0.txt": "zero\n"},
		{"owned.txt": "run 1\n", "notes/run1.txt": "one\n"},
		{"owned.txt": "run 2\n", "shared.txt": twenty(map[int]string{1: "LINE ONE by run 2"})},
		{"owned.txt": "run 3\n", "shared.txt": twenty(map[int]string{10: "LINE TEN by run 3", 20: "LINE TWENTY by run 3"})},
	}
	ids := make([]string, n)
	for i := range n {
		ids[i] = e.start(t, playbook(fmt.Sprintf("wt%d", i), files[i]), IsolationWorktree).ID
	}
	// Parallel: every run is waiting for its first approval at the same time.
	deadline := time.Now().Add(runWait)
	for ; time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		waiting := 0
		for _, id := range ids {
			if l, _ := e.approvals.ForRun(id); len(l) > 0 {
				waiting++
			}
		}
		if waiting == n {
			break
		}
	}
	if time.Now().After(deadline) {
		t.Fatalf("the %d worktree runs never all waited at once", n)
	}
	var wg sync.WaitGroup
	ends := make([]backend.RunSummary, n)
	for i, id := range ids {
		wg.Add(1)
		go func() { defer wg.Done(); ends[i] = e.approveUntilDone(t, id) }()
	}
	wg.Wait()
	for i, r := range ends {
		if r.State != backend.RunCompleted {
			t.Fatalf("run %d ended %s (%+v)", i, r.State, r.Failure)
		}
	}
	// No cross-talk: each worktree holds its own run's files only, and the
	// checkout holds none of them.
	for i, id := range ids {
		root := e.core.worktrees().Path(id)
		if got := readFile(t, root, "owned.txt"); got != files[i]["owned.txt"] {
			t.Errorf("run %d's worktree holds owned.txt %q", i, got)
		}
		if rel, _ := filepath.Rel(e.checkout, root); !strings.HasPrefix(rel, "..") {
			t.Fatalf("worktree %s inside the checkout", root)
		}
	}
	if st := gitIn(t, e.checkout, "status", "--porcelain"); st != "" {
		t.Fatalf("the runs touched the checkout:\n%s", st)
	}

	// Run 0 merges whole: the worktree and branch are cleaned up.
	p0, err := e.wts.MergePlan(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	p1Before, err := e.wts.MergePlan(ids[1]) // shown before the checkout moves
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.wts.Merge(ids[0], MergeRequest{Token: p0.Token})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cleaned || res.Remaining != 0 || len(res.Files) != 2 {
		t.Fatalf("merge 0: %+v", res)
	}
	if readFile(t, e.checkout, "owned.txt") != "run 0\n" || readFile(t, e.checkout, "notes/run0.txt") != "zero\n" {
		t.Fatal("run 0's files are not in the checkout")
	}
	if _, err := os.Stat(e.core.worktrees().Path(ids[0])); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("merged worktree not cleaned: %v", err)
	}
	if out := gitIn(t, e.checkout, "branch", "--list", "agenthub/*"); strings.Contains(out, ids[0]) {
		t.Fatalf("merged branch left: %s", out)
	}

	// Run 1: the plan shown before the checkout moved is refused whole.
	if _, err := e.wts.Merge(ids[1], MergeRequest{Token: p1Before.Token}); backend.CodeOf(err) != backend.CodeConflict {
		t.Fatalf("a stale merge plan was applied: %v", err)
	}
	p1, err := e.wts.MergePlan(ids[1])
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, f := range p1.Files {
		status[f.Path] = f.Status
	}
	if status["owned.txt"] != MergeConflict || status["notes/run1.txt"] != MergeApply {
		t.Fatalf("plan 1 against the moved checkout: %v", status)
	}
	if _, err := e.wts.Merge(ids[1], MergeRequest{Token: p1.Token, Files: []MergeSelection{{Path: "owned.txt"}}}); backend.CodeOf(err) != backend.CodeConflict {
		t.Fatalf("a conflicting file was merged: %v", err)
	}
	res, err = e.wts.Merge(ids[1], MergeRequest{Token: p1.Token, Files: []MergeSelection{{Path: "notes/run1.txt"}}})
	if err != nil || res.Cleaned || res.Remaining != 1 {
		t.Fatalf("partial merge 1: %+v %v", res, err)
	}
	if readFile(t, e.checkout, "owned.txt") != "run 0\n" {
		t.Fatal("run 1 overwrote run 0's owned.txt in the checkout")
	}
	// Discarding run 1 lists its unsaved work and needs that listing's token.
	_, err = e.wts.Discard(ids[1], "")
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != backend.CodeWorktreeUnsaved || !strings.Contains(be.Message, "owned.txt") {
		t.Fatalf("discard without confirmation: %v", err)
	}
	if _, err := os.Stat(e.core.worktrees().Path(ids[1])); err != nil {
		t.Fatalf("the refused discard removed the worktree: %v", err)
	}
	if _, err := e.wts.Discard(ids[1], "0000000000000000"); backend.CodeOf(err) != backend.CodeWorktreeUnsaved {
		t.Fatalf("a wrong token discarded: %v", err)
	}
	v, err := e.wts.Discard(ids[1], be.Detail)
	if err != nil || v.WorktreeRecord.State != store.WorktreeDiscarded {
		t.Fatalf("confirmed discard: %+v %v", v, err)
	}

	// Run 2 changed line 1 of shared.txt: it merges cleanly.
	p2, err := e.wts.MergePlan(ids[2])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.wts.Merge(ids[2], MergeRequest{Token: p2.Token, Files: []MergeSelection{{Path: "shared.txt"}}}); err != nil {
		t.Fatal(err)
	}
	// Run 3 changed lines 10 and 20: the checkout moved (line 1), away from
	// its hunks, so they still apply; only the first hunk is chosen.
	p3, err := e.wts.MergePlan(ids[3])
	if err != nil {
		t.Fatal(err)
	}
	var shared MergeFile
	for _, f := range p3.Files {
		if f.Path == "shared.txt" {
			shared = f
		}
	}
	if shared.Status != MergeApply || shared.Reason == "" || len(shared.Diff.Hunks) != 2 {
		t.Fatalf("run 3's shared.txt: %s %q, %d hunks", shared.Status, shared.Reason, len(shared.Diff.Hunks))
	}
	if _, err := e.wts.Merge(ids[3], MergeRequest{Token: p3.Token, Files: []MergeSelection{{Path: "shared.txt", Hunks: []int{0}}}}); err != nil {
		t.Fatal(err)
	}
	want := twenty(map[int]string{1: "LINE ONE by run 2", 10: "LINE TEN by run 3"})
	if got := readFile(t, e.checkout, "shared.txt"); got != want {
		t.Fatalf("shared.txt after two merges:\n%s", got)
	}
	// Keep run 3 as a branch: its uncommitted work keeps the directory.
	v, err = e.wts.Keep(ids[3])
	if err != nil || v.WorktreeRecord.State != store.WorktreeKept || len(v.Uncommitted) == 0 {
		t.Fatalf("keep: %+v %v", v, err)
	}
	if _, err := os.Stat(e.core.worktrees().Path(ids[3])); err != nil {
		t.Fatalf("keep removed a worktree with uncommitted work: %v", err)
	}
	// The audit names the actor of each merge and discard.
	entries, err := e.core.store.AuditEntries(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, a := range entries {
		if strings.HasPrefix(a.Kind, "worktree.") {
			kinds[a.Kind]++
			if a.Actor == "" {
				t.Errorf("%s without an actor", a.Kind)
			}
		}
	}
	if kinds["worktree.created"] != n || kinds["worktree.merged"] != 4 || kinds["worktree.discarded"] != 1 ||
		kinds["worktree.cleaned"] != 1 || kinds["worktree.kept"] != 1 {
		t.Fatalf("audit kinds %v", kinds)
	}
}

// TestWorktreeRunCommitsOnItsBranch: git_commit in a worktree run (always
// asking) commits on the run's branch; the checkout's branch and files do
// not move, and the commit is listed as unsaved work of the worktree.
func TestWorktreeRunCommitsOnItsBranch(t *testing.T) {
	e := newWTEnv(t)
	mainHead := gitIn(t, e.checkout, "rev-parse", "HEAD")
	pb := `version = 1
name = "commit"
[[step]]
say = "writing"
[[step.call]]
tool = "write_file"
args = { path = "feature.txt", content = "feature\n" }
[[step]]
say = "committing"
[[step.call]]
tool = "git_commit"
args = { message = "agent: add feature" }
[[step]]
expect = ["committed"]
say = "done"
`
	r := e.start(t, pb, IsolationWorktree)
	asked := map[backend.ActionKind]bool{}
	for deadline := time.Now().Add(runWait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		list, err := e.approvals.ForRun(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range list {
			asked[a.Kind] = true
			if _, err := e.approvals.Decide(backend.Decision{ApprovalID: a.ID, ToolCallID: a.ToolCallID,
				Kind: backend.ApproveOnce, SubjectHash: a.SubjectHash}); err != nil &&
				backend.CodeOf(err) != backend.CodeApprovalAlreadyResolved {
				t.Fatal(err)
			}
		}
		if s, _ := e.runs.Get(r.ID); s.State.Terminal() {
			break
		}
	}
	end, err := e.runs.Get(r.ID)
	if err != nil || end.State != backend.RunCompleted {
		t.Fatalf("run ended %s %+v %v", end.State, end.Failure, err)
	}
	if !asked[backend.ActionCommit] {
		t.Fatalf("git_commit did not ask: %v", asked)
	}
	wt := e.core.worktrees().Path(r.ID)
	if got := gitIn(t, wt, "log", "-1", "--format=%s"); got != "agent: add feature" {
		t.Fatalf("worktree HEAD commit %q", got)
	}
	if got := gitIn(t, wt, "rev-parse", "--abbrev-ref", "HEAD"); got != "agenthub/"+r.ID {
		t.Fatalf("worktree on %q", got)
	}
	if got := gitIn(t, e.checkout, "rev-parse", "HEAD"); got != mainHead {
		t.Fatal("the checkout's HEAD moved")
	}
	if _, err := os.Stat(filepath.Join(e.checkout, "feature.txt")); !os.IsNotExist(err) {
		t.Fatalf("the commit's file is in the checkout: %v", err)
	}
	v, err := e.wts.Get(r.ID)
	if err != nil || len(v.Unmerged) != 1 || len(v.Uncommitted) != 0 {
		t.Fatalf("worktree view %+v %v", v, err)
	}
}

// TestRunRootFollowsSubAgentsAndResumptions: a sub-agent of a worktree run,
// and a run resuming that sub-agent, work in the worktree; a run of its own
// works in the checkout; once the worktree is discarded their root is an
// error, never the checkout.
func TestRunRootFollowsSubAgentsAndResumptions(t *testing.T) {
	e := newWTEnv(t)
	owner := e.start(t, "version = 1\nname = \"idle\"\n[[step]]\nsay = \"done\"\n", IsolationWorktree)
	if end := e.approveUntilDone(t, owner.ID); end.State != backend.RunCompleted {
		t.Fatalf("owner ended %s", end.State)
	}
	record := func(payload map[string]any) string {
		rec := store.RunRecord{ID: backend.NewID(backend.PrefixRun), SessionID: backend.NewID(backend.PrefixSession),
			WorkspaceID: e.ws.ID, Profile: "demo", AgentID: "demo", Runtime: "script", Task: "t", Actor: "t",
			Surface: backend.SurfaceEngine}
		_, err := e.core.store.Do(t.Context(), func(tx *store.Tx) error {
			if err := tx.CreateSession(rec.SessionID, rec.WorkspaceID, ""); err != nil {
				return err
			}
			_, err := tx.CreateRun(rec, payload)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return rec.ID
	}
	child := record(map[string]any{"task": "t", "parentRunId": owner.ID})
	resumed := record(map[string]any{"task": "t", "resumedFrom": child})
	plain := record(map[string]any{"task": "t"})
	wt := e.core.worktrees().Path(owner.ID)
	for _, id := range []string{owner.ID, child, resumed} {
		if root, err := e.core.runRoot(id, e.ws.ID); err != nil || root != wt {
			t.Errorf("run %s: root %q %v, want the worktree", id, root, err)
		}
	}
	if root, err := e.core.runRoot(plain, e.ws.ID); err != nil || root != e.checkout {
		t.Errorf("a run of its own: root %q %v, want the checkout", root, err)
	}
	if _, err := e.wts.Discard(owner.ID, ""); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{owner.ID, child, resumed} {
		if root, err := e.core.runRoot(id, e.ws.ID); err == nil {
			t.Errorf("run %s: root %q after the discard", id, root)
		}
	}
}

// TestIntentRecoveryUsesTheWorktree: an effect a worktree run left open (the
// process died after the write) is reconciled against the worktree at the
// next start, not the checkout: the file is found with its after-image, so
// the intent closes as applied. Against the checkout it would read absent.
func TestIntentRecoveryUsesTheWorktree(t *testing.T) {
	e := newWTEnv(t)
	r := e.start(t, "version = 1\nname = \"idle\"\n[[step]]\nsay = \"done\"\n", IsolationWorktree)
	if end := e.approveUntilDone(t, r.ID); end.State != backend.RunCompleted {
		t.Fatalf("run ended %s", end.State)
	}
	content := []byte("written before the crash\n")
	if err := os.WriteFile(filepath.Join(e.core.worktrees().Path(r.ID), "crash.txt"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	in := store.Intent{ID: "ck_recovery_test", RunID: r.ID, WorkspaceID: e.ws.ID, Op: "write",
		Files: []store.IntentFile{{Path: "crash.txt", Before: "absent", After: workspace.Hash(content)}}}
	if _, err := e.core.store.Do(t.Context(), func(tx *store.Tx) error { return tx.OpenIntent(in) }); err != nil {
		t.Fatal(err)
	}
	home := e.core.Config().Home
	if err := e.core.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(t.Context(), Config{Home: home, Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	ins, err := again.Store().Intents(t.Context(), r.ID)
	if err != nil || len(ins) != 1 {
		t.Fatalf("intents %+v %v", ins, err)
	}
	if ins[0].State != store.IntentApplied {
		t.Fatalf("the intent closed %s (%s): reconciled against the checkout?", ins[0].State, ins[0].Outcome)
	}
}

// TestProfileIsolation: a profile file's isolation = "worktree" puts its
// runs in a worktree when the start names none; the start's own choice wins;
// an unknown value makes the profile file invalid.
func TestProfileIsolation(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ProfilesDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("idle.toml", "version = 1\nname = \"idle\"\n[[step]]\nsay = \"done\"\n")
	write("iso.toml", "name = \"iso\"\nruntime = \"script\"\nplaybook = \"idle.toml\"\nisolation = \"worktree\"\n")
	write("bad.toml", "name = \"bad\"\nruntime = \"script\"\nplaybook = \"idle.toml\"\nisolation = \"sideways\"\n")
	core, err := Open(t.Context(), Config{Home: home, Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	ws, err := NewWorkspacesAPI(core).Add(repo)
	if err != nil {
		t.Fatal(err)
	}
	runs, wts := NewRunsAPI(core), NewWorktreesAPI(core)
	r, err := runs.Start(StartRun{WorkspaceID: ws.ID, Profile: "iso", Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := wts.Get(r.ID); err != nil || v.Branch != "agenthub/"+r.ID {
		t.Fatalf("the profile's isolation was not used: %+v %v", v, err)
	}
	r, err = runs.Start(StartRun{WorkspaceID: ws.ID, Profile: "iso", Task: "t", Isolation: IsolationCheckout})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wts.Get(r.ID); backend.CodeOf(err) != backend.CodeNotFound {
		t.Fatalf("the start's checkout lost to the profile: %v", err)
	}
	if _, err := runs.Start(StartRun{WorkspaceID: ws.ID, Profile: "bad", Task: "t"}); err == nil {
		t.Fatal("a profile with an unknown isolation was loaded")
	}
}

// TestMergeNeverCarriesProtectedFiles: what a run's commands left in its
// worktree under .agenthub/ (the checkout's policy), or a secret file, is
// listed as skipped and never merged into the checkout; the rest merges.
func TestMergeNeverCarriesProtectedFiles(t *testing.T) {
	e := newWTEnv(t)
	r := e.start(t, "version = 1\nname = \"idle\"\n[[step]]\nsay = \"done\"\n", IsolationWorktree)
	if end := e.approveUntilDone(t, r.ID); end.State != backend.RunCompleted {
		t.Fatalf("run ended %s", end.State)
	}
	wt := e.core.worktrees().Path(r.ID)
	for p, c := range map[string]string{".agenthub/policy.toml": "version = 1\n", ".env": "TOKEN=x\n", "ok.txt": "ok\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(wt, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wt, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := e.wts.MergePlan(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, f := range p.Files {
		status[f.Path] = f.Status
	}
	if status[".agenthub/policy.toml"] != MergeSkipped || status[".env"] != MergeSkipped || status["ok.txt"] != MergeApply {
		t.Fatalf("plan %v", status)
	}
	if _, err := e.wts.Merge(r.ID, MergeRequest{Token: p.Token, Files: []MergeSelection{{Path: ".env"}}}); backend.CodeOf(err) != backend.CodeConflict {
		t.Fatalf("a secret file was merged: %v", err)
	}
	res, err := e.wts.Merge(r.ID, MergeRequest{Token: p.Token})
	if err != nil || len(res.Files) != 1 || res.Cleaned {
		t.Fatalf("merge %+v %v", res, err)
	}
	for _, p := range []string{".agenthub/policy.toml", ".env"} {
		if _, err := os.Stat(filepath.Join(e.checkout, p)); !os.IsNotExist(err) {
			t.Errorf("%s reached the checkout: %v", p, err)
		}
	}
}
