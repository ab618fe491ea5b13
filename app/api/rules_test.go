package api

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/approval"
)

// gitStatusPlaybook runs `git status --short` twice: the second call is
// covered by the rule the first one's "always allow" wrote.
const gitStatusPlaybook = `version = 1
name = "status twice"
[[step]]
say = "Checking the tree."
[[step.call]]
tool = "run_shell"
args = { command = "git status --short" }
[[step]]
say = "Checking again."
[[step.call]]
tool = "run_shell"
args = { command = "git status --short" }
[[step]]
say = "Done."
`

// gitRepo is a real repository with one commit.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"},
		{"add", "."}, {"commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

func gitStatus(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=all", "--ignored").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v %s", err, out)
	}
	return string(out)
}

// waitRunEnd waits (generously: the machine is shared) for a run to end.
func waitRunEnd(t *testing.T, runs *RunsAPI, runID string) backend.RunSummary {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := runs.Get(runID)
		if err != nil {
			t.Fatal(err)
		}
		if r.State.Terminal() {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still %s after 60 s", runID, r.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitPending(t *testing.T, a *ApprovalsAPI, runID string) backend.ApprovalRequest {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		list, err := a.ForRun(runID)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 {
			return list[0]
		}
	}
	t.Fatal("no approval requested within 60 s")
	return backend.ApprovalRequest{}
}

// TestAlwaysAllowDefaultLeavesRepositoryClean is issue 21's decision
// journey through the real engine: with the default setting "always allow"
// writes the rule under the data directory (the approval said where), the
// repository's git status stays clean, the next identical call runs without
// asking, the rules list shows who added the rule and when, and revoking it
// is refused for a crafted key or another workspace and audited when done.
func TestAlwaysAllowDefaultLeavesRepositoryClean(t *testing.T) {
	home := t.TempDir()
	core, err := Open(t.Context(), Config{Home: home, Version: "test", Surface: backend.SurfaceBrowser})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	repo := gitRepo(t)
	wsAPI := NewWorkspacesAPI(core)
	ws, err := wsAPI.Add(repo)
	if err != nil {
		t.Fatal(err)
	}
	other, err := wsAPI.Add(gitRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	profile, err := core.AddPlaybook([]byte(gitStatusPlaybook))
	if err != nil {
		t.Fatal(err)
	}
	runs, approvals, policy := NewRunsAPI(core), NewApprovalsAPI(core), NewPolicyAPI(core)
	run, err := runs.Start(StartRun{WorkspaceID: ws.ID, Profile: profile, Task: "status"})
	if err != nil {
		t.Fatal(err)
	}
	a := waitPending(t, approvals, run.ID)
	wantLoc := backend.RuleLocation{Site: backend.RuleSiteData, Path: "policy/" + ws.ID + ".toml"}
	if a.RuleLocation == nil || *a.RuleLocation != wantLoc {
		t.Fatalf("rule_location = %+v, want %+v", a.RuleLocation, wantLoc)
	}
	if a.RulePreview == nil || a.RulePreview.Key != "rule_shell_prefix" || a.RulePreview.Args["command"] != "git status" {
		t.Fatalf("rule_preview = %+v", a.RulePreview)
	}
	if _, err := approvals.Decide(backend.Decision{ApprovalID: a.ID, ToolCallID: a.ToolCallID,
		Kind: backend.AlwaysAllowWorkspace, SubjectHash: a.SubjectHash}); err != nil {
		t.Fatal(err)
	}
	if end := waitRunEnd(t, runs, run.ID); end.State != backend.RunCompleted {
		t.Fatalf("run ended %s, want Completed (the second git status must be covered by the rule)", end.State)
	}
	if st := gitStatus(t, repo); st != "" {
		t.Fatalf("git status after always allow:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(home, "policy", ws.ID+".toml")); err != nil {
		t.Fatalf("no rules file in the data directory: %v", err)
	}

	view, err := policy.Get(ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if view.Source != PolicyFile || len(view.Rules) != 1 {
		t.Fatalf("policy view = %+v", view)
	}
	rule := view.Rules[0]
	if rule.Site != backend.RuleSiteData || rule.File != wantLoc.Path || rule.Scope != "workspace" || rule.Verdict != backend.Allow ||
		rule.AddedBy == "" || rule.AddedVia != backend.SurfaceBrowser || rule.AddedAt == "" || rule.AddedInRun != run.ID ||
		rule.Pattern != "git status …" || rule.Key == "" {
		t.Fatalf("rule = %+v", rule)
	}
	if strings.Contains(rule.File, home) {
		t.Fatalf("the rule's file shows a machine path: %s", rule.File)
	}

	// Attacks: the key of this workspace's rule against another workspace,
	// crafted keys and workspace ids revoke nothing.
	for _, tc := range []struct{ ws, key string }{
		{other.ID, rule.Key}, {ws.ID, "0000"}, {ws.ID, rule.ID}, {ws.ID, "../" + rule.Key}, {"../" + ws.ID, rule.Key},
		{"ws_x/../../etc", rule.Key},
	} {
		if _, err := policy.Revoke(tc.ws, tc.key); err == nil {
			t.Errorf("Revoke(%q, %q) succeeded", tc.ws, tc.key)
		}
	}
	if v, _ := policy.Get(ws.ID); len(v.Rules) != 1 {
		t.Fatalf("a refused revocation changed the rules: %+v", v.Rules)
	}

	after, err := policy.Revoke(ws.ID, rule.Key)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Rules) != 0 || after.Source != PolicyDefault {
		t.Fatalf("after revoking: %+v", after)
	}
	if _, err := policy.Revoke(ws.ID, rule.Key); backend.CodeOf(err) != backend.CodeNotFound {
		t.Fatalf("a second revocation = %v, want not_found", err)
	}
	entries, err := NewAuditAPI(core).List(AuditFilter{Kind: "policy.rule_revoked"})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Data["ruleId"] != rule.ID || entries[0].Data["workspaceId"] != ws.ID ||
		entries[0].Surface != backend.SurfaceBrowser {
		t.Fatalf("audit of the revocation = %+v", entries)
	}
	if st := gitStatus(t, repo); st != "" {
		t.Fatalf("git status after revoking:\n%s", st)
	}

	// The gate asks again for the command.
	gate := approval.NewGate(core.workspaceRoot).WithRules(core.rules())
	if r := gate.Decide(ws.ID, approval.Action{Kind: backend.ActionShell, Tool: "run_shell", Command: "git status --short"}); r.Verdict != backend.Ask {
		t.Fatalf("after revoking, git status is %s by %s", r.Verdict, r.RuleID)
	}
}

// TestRuleLocationSetting: the setting says where the next rule goes and
// the approval says it; an unknown value is refused.
func TestRuleLocationSetting(t *testing.T) {
	core, err := Open(t.Context(), Config{Home: t.TempDir(), Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	settings := NewSettingsAPI(core)
	got, err := settings.Get()
	if err != nil || got.RuleLocation != backend.RuleSiteData {
		t.Fatalf("default settings = %+v, %v", got, err)
	}
	if _, err := settings.Set(Settings{Theme: "dark", Language: "zh-CN", RuleLocation: "/tmp"}); backend.CodeOf(err) != backend.CodeInvalidInput {
		t.Fatalf("Set with rule location /tmp = %v, want invalid_input", err)
	}
	if got, err = settings.Set(Settings{Theme: "dark", Language: "zh-CN", RuleLocation: backend.RuleSiteRepository}); err != nil ||
		got.RuleLocation != backend.RuleSiteRepository {
		t.Fatalf("Set = %+v, %v", got, err)
	}
	// An older client that does not send it keeps the choice.
	if got, err = settings.Set(Settings{Theme: "light", Language: "en"}); err != nil || got.RuleLocation != backend.RuleSiteRepository {
		t.Fatalf("Set without ruleLocation = %+v, %v", got, err)
	}
	ws, err := NewWorkspacesAPI(core).Add(gitRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	if loc := core.rules().Location(ws.ID); loc != (backend.RuleLocation{Site: backend.RuleSiteRepository, Path: approval.PolicyPath}) {
		t.Fatalf("location = %+v", loc)
	}
}
