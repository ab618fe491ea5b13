package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/approval"
)

// Grants through the real engine, tools, gate and SQLite file (run-model.md
// §17 scenarios 17 and 18); the helpers are in policy_test.go.

// TestApproveForRun (scenario 17): a later request the grant covers is not
// suspended, is recorded as resolved by policy and executes; the same
// request in another run asks again; a deny rule still wins over the grant.
func TestApproveForRun(t *testing.T) {
	root, db := newWorkspace(t)
	g := newGated(t, root, db)
	defer g.close(t)
	a := g.start(t, &hookedModel{steps: []backend.ModelResponse{
		shellStep("c1", "echo granted ./one"), shellStep("c2", "echo granted ./two"), shellStep("c3", "echo other")}})
	ap := g.pending(t, a.ID)
	if ap.GrantPreview != "shell: echo granted … in . (tool run_shell)" || !slices.Contains(ap.DecisionsOffered, backend.ApproveForRun) {
		t.Fatalf("ticket offers %v, grant %q", ap.DecisionsOffered, ap.GrantPreview)
	}
	if err := g.decide(t, ap, backend.ApproveForRun); err != nil {
		t.Fatal(err)
	}
	other := g.pending(t, a.ID) // c2 ran under the grant; c3 is another command
	if other.ToolCallID != "c3" {
		t.Fatalf("the open ticket is for %s, want c3", other.ToolCallID)
	}
	if c, out := g.call(t, a.ID, "c2"); c.Status != backend.CallSucceeded || !strings.Contains(out, "granted ./two") {
		t.Errorf("c2 %s %q", c.Status, out)
	}
	res := g.policyResolutions(t, a.ID)
	if len(res) != 1 || res[0]["toolCallId"] != "c2" || res[0]["grantId"] == nil {
		t.Errorf("policy resolutions = %+v", res)
	}
	if err := g.decide(t, other, backend.RejectAndStop); err != nil {
		t.Fatal(err)
	}
	g.wait(t, a.ID, backend.RunCancelled)

	b := g.start(t, &hookedModel{steps: []backend.ModelResponse{shellStep("c1", "echo granted ./one")}})
	if tk := g.pending(t, b.ID); tk.ToolCallID != "c1" {
		t.Errorf("another run: ticket %+v", tk)
	}
	if _, err := g.e.Cancel(t.Context(), b.ID); err != nil {
		t.Fatal(err)
	}

	deny := func() {
		setPolicy(t, root, "version = 1\n[[shell]]\nid = \"no-echo\"\nprefix = [\"echo\"]\nverdict = \"deny\"\n")
	}
	c := g.start(t, &hookedModel{steps: []backend.ModelResponse{shellStep("c1", "echo granted ./one"),
		shellStep("c2", "echo granted ./two")}, before: map[int]func(){1: deny}})
	if err := g.decide(t, g.pending(t, c.ID), backend.ApproveForRun); err != nil {
		t.Fatal(err)
	}
	if got := g.wait(t, c.ID, backend.RunFailed); got.Failure.Code != backend.FailPermissionDenied {
		t.Errorf("failure %+v, want permission_denied", got.Failure)
	}
	if call, _ := g.call(t, c.ID, "c2"); call.Status != backend.CallFailed {
		t.Errorf("c2 is %s under a deny rule", call.Status)
	}
}

// TestRunGrantSurvivesRestart: a grant given before a restart still covers
// requests of the run after it.
func TestRunGrantSurvivesRestart(t *testing.T) {
	root, db := newWorkspace(t)
	m := &hookedModel{steps: []backend.ModelResponse{shellStep("c1", "echo granted ./one"),
		shellStep("c2", "echo other"), shellStep("c3", "echo granted ./three")}}
	g := newGated(t, root, db)
	r := g.start(t, m)
	if err := g.decide(t, g.pending(t, r.ID), backend.ApproveForRun); err != nil {
		t.Fatal(err)
	}
	if tk := g.pending(t, r.ID); tk.ToolCallID != "c2" {
		t.Fatalf("ticket for %s, want c2", tk.ToolCallID)
	}
	g.close(t)

	g2 := newGated(t, root, db)
	defer g2.close(t)
	g2.e.AddProfile("p1", Profile{Runtime: "native", Model: m, Stop: DefaultStop})
	if err := g2.e.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := g2.decide(t, g2.pending(t, r.ID), backend.ApproveOnce); err != nil {
		t.Fatal(err)
	}
	g2.wait(t, r.ID, backend.RunCompleted)
	res := g2.policyResolutions(t, r.ID)
	if len(res) != 1 || res[0]["toolCallId"] != "c3" {
		t.Errorf("policy resolutions after the restart = %+v", res)
	}
	if n := len(g2.tickets(t, r.ID)); n != 2 {
		t.Errorf("%d tickets, want 2 (c1, c2)", n)
	}
}

// TestAlwaysAllowWorkspace (scenario 18): the rule is written to the
// workspace's policy file and audited, and the next run, in a new process,
// passes without asking.
func TestAlwaysAllowWorkspace(t *testing.T) {
	root, db := newWorkspace(t)
	g := newGated(t, root, db)
	a := g.start(t, &hookedModel{steps: []backend.ModelResponse{shellStep("c1", "echo hello world")}})
	if err := g.decide(t, g.pending(t, a.ID), backend.AlwaysAllowWorkspace); err != nil {
		t.Fatal(err)
	}
	g.wait(t, a.ID, backend.RunCompleted)
	text, err := os.ReadFile(filepath.Join(root, ".agenthub", "policy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := approval.ParsePolicy(text)
	if err != nil || len(p.Shell) != 1 || !slices.Equal(p.Shell[0].Prefix, []string{"echo", "hello", "world"}) {
		t.Fatalf("policy file (%v):\n%s", err, text)
	}
	if kinds := g.auditKinds(t); !slices.Contains(kinds, "policy.changed/me") || !slices.Contains(kinds, "grant.added/me") {
		t.Errorf("audit kinds %v", kinds)
	}
	g.close(t)

	g2 := newGated(t, root, db)
	defer g2.close(t)
	if err := g2.e.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	b := g2.start(t, &hookedModel{steps: []backend.ModelResponse{shellStep("c1", "echo hello world again")}})
	g2.wait(t, b.ID, backend.RunCompleted)
	if n := len(g2.tickets(t, b.ID)); n != 0 {
		t.Errorf("the next run asked %d times", n)
	}
	res := g2.policyResolutions(t, b.ID)
	if len(res) != 1 || !strings.HasPrefix(res[0]["ruleId"].(string), "always-shell") {
		t.Errorf("policy resolutions = %+v", res)
	}
}

// TestNoGrantForPush: push, publish and deploy are offered only approve
// once and the rejections; a grant sent anyway is refused and the ticket
// stays open.
func TestNoGrantForPush(t *testing.T) {
	root, db := newWorkspace(t)
	g := newGated(t, root, db)
	defer g.close(t)
	for _, cmd := range []string{"git push origin main", "npm publish", "terraform apply"} {
		t.Run(cmd, func(t *testing.T) {
			r := g.start(t, &hookedModel{steps: []backend.ModelResponse{shellStep("c1", cmd)}})
			ap := g.pending(t, r.ID)
			if slices.Contains(ap.DecisionsOffered, backend.ApproveForRun) || slices.Contains(ap.DecisionsOffered, backend.AlwaysAllowWorkspace) || ap.GrantPreview != "" {
				t.Errorf("offered %v, grant %q", ap.DecisionsOffered, ap.GrantPreview)
			}
			for _, k := range []backend.DecisionKind{backend.ApproveForRun, backend.AlwaysAllowWorkspace, "approve_all"} {
				if err := g.decide(t, ap, k); backend.CodeOf(err) != backend.CodeInvalidInput {
					t.Errorf("%s: err = %v, want invalid_input", k, err)
				}
			}
			if aps, _ := g.e.Approvals(t.Context(), r.ID); len(aps) != 1 {
				t.Errorf("the ticket is no longer open: %+v", aps)
			}
			if err := g.decide(t, ap, backend.RejectAndStop); err != nil {
				t.Fatal(err)
			}
			g.wait(t, r.ID, backend.RunCancelled)
		})
	}
	if _, err := os.Stat(filepath.Join(root, ".agenthub")); !os.IsNotExist(err) {
		t.Errorf("a policy directory was created: %v", err)
	}
}
