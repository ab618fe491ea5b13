package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/store"
	"agenthub/backend/tools"
)

// The tests in this file drive runs through the real engine, the real
// built-in tools, the approval package's policy gate and a real SQLite
// file, over a real temporary workspace (run-model.md §17 scenarios 7, 17,
// 18, 19).

// hookedModel is a scripted model that can change the world before a step:
// before[i] runs when step i (0-based) is requested.
type hookedModel struct {
	mu     sync.Mutex
	steps  []backend.ModelResponse
	before map[int]func()
	calls  int
}

func (m *hookedModel) Stream(ctx context.Context, _ backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	m.mu.Lock()
	i := m.calls
	m.calls++
	hook := m.before[i]
	m.mu.Unlock()
	if hook != nil {
		hook()
	}
	if i >= len(m.steps) {
		return backend.ModelResponse{Text: "done"}, ctx.Err()
	}
	if m.steps[i].Text != "" {
		delta(m.steps[i].Text)
	}
	return m.steps[i], ctx.Err()
}

// shellStep is a model step that runs one shell command.
func shellStep(id, command string) backend.ModelResponse {
	args, _ := json.Marshal(map[string]string{"command": command})
	return backend.ModelResponse{Calls: []backend.ToolCallRequest{{ID: id, Name: tools.RunShell, Arguments: args}}}
}

// gated is an engine with the policy gate over one workspace.
type gated struct {
	root, db string
	st       *store.Store
	e        *Engine
	n        int // profiles added
}

func newGated(t *testing.T, root, db string) *gated {
	t.Helper()
	st, err := store.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Workspace(t.Context(), "ws_1"); err != nil {
		if err := st.AddWorkspace(t.Context(), backend.Workspace{ID: "ws_1", Name: "w", Path: root, DisplayPath: "w"},
			store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
			t.Fatal(err)
		}
	}
	roots := func(string) (string, error) { return root, nil }
	g := &gated{root: root, db: db, st: st}
	g.e = New(Config{Store: st, Gate: approval.NewGate(roots), Roots: roots,
		Tools:    tools.New(tools.Config{CheckpointDir: filepath.Join(filepath.Dir(db), "checkpoints")}),
		Profiles: map[string]Profile{}})
	return g
}

// addModel registers model under a fresh profile name and returns it.
func (g *gated) addModel(m backend.Model) string {
	g.n++
	name := "p" + string(rune('0'+g.n))
	g.e.AddProfile(name, Profile{Runtime: "native", Model: m, Stop: DefaultStop})
	return name
}

func (g *gated) start(t *testing.T, m backend.Model) backend.RunSummary {
	t.Helper()
	r, err := g.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Profile: g.addModel(m), Task: "t",
		Actor: "me", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (g *gated) close(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.e.Shutdown(ctx); err != nil {
		t.Error(err)
	}
	if err := g.st.Close(); err != nil {
		t.Error(err)
	}
}

func (g *gated) wait(t *testing.T, runID string, want backend.RunState) backend.RunSummary {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r, err := g.e.Run(t.Context(), runID)
		if err != nil {
			t.Fatal(err)
		}
		if r.State == want {
			return r
		}
		if r.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("run %s is %s (%+v), want %s", runID, r.State, r.Failure, want)
		}
	}
}

// pending waits for the run to ask and returns its one open ticket. A run
// still NeedsApproval right after a decision has not yet applied it, so the
// state alone does not say a new ticket is open.
func (g *gated) pending(t *testing.T, runID string) backend.ApprovalRequest {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		g.wait(t, runID, backend.RunNeedsApproval)
		aps, err := g.e.Approvals(t.Context(), runID)
		if err != nil || len(aps) > 1 {
			t.Fatalf("approvals = %+v, %v; want one", aps, err)
		}
		if len(aps) == 1 {
			return aps[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s opened no ticket", runID)
		}
	}
}

func (g *gated) decide(t *testing.T, ap backend.ApprovalRequest, kind backend.DecisionKind) error {
	t.Helper()
	_, err := g.e.Decide(t.Context(), backend.Decision{DecisionID: backend.NewID(backend.PrefixDecision),
		ApprovalID: ap.ID, Kind: kind, SubjectHash: ap.SubjectHash, Actor: "me", Surface: backend.SurfaceCLI})
	return err
}

func (g *gated) tickets(t *testing.T, runID string) []store.Ticket {
	t.Helper()
	tks, err := g.st.Tickets(t.Context(), runID, false)
	if err != nil {
		t.Fatal(err)
	}
	return tks
}

// policyResolutions returns the payloads of run.approval.resolved events
// resolved by policy.
func (g *gated) policyResolutions(t *testing.T, runID string) []map[string]any {
	t.Helper()
	evs, err := g.e.Events(t.Context(), runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, ev := range evs {
		var p map[string]any
		if ev.Type == backend.EvApprovalResolved && json.Unmarshal(ev.Payload, &p) == nil && p["resolver"] == "policy" {
			out = append(out, p)
		}
	}
	return out
}

// call returns a call row of the run.
func (g *gated) call(t *testing.T, runID, id string) (store.Call, string) {
	t.Helper()
	calls, err := g.st.Calls(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if c.ID == id {
			var res struct{ Content string }
			_ = json.Unmarshal(c.Result, &res)
			return c, res.Content
		}
	}
	t.Fatalf("no call %s", id)
	return store.Call{}, ""
}

func (g *gated) auditKinds(t *testing.T) []string {
	t.Helper()
	ents, err := g.st.AuditEntries(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range ents {
		kinds = append(kinds, e.Kind+"/"+e.Actor)
	}
	return kinds
}

func setPolicy(t *testing.T, root, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, ".agenthub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agenthub", "policy.toml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newWorkspace(t *testing.T) (root, db string) {
	t.Helper()
	return t.TempDir(), filepath.Join(t.TempDir(), "agenthub.db")
}

// TestPolicyAllowRuleSkipsTicket: an allow rule for `git status` lets the
// call run with no ticket, recorded as resolved by policy.
func TestPolicyAllowRuleSkipsTicket(t *testing.T) {
	root, db := newWorkspace(t)
	setPolicy(t, root, "version = 1\n[[shell]]\nid = \"git-status\"\nprefix = [\"git\", \"status\"]\nverdict = \"allow\"\n")
	g := newGated(t, root, db)
	defer g.close(t)
	r := g.start(t, &hookedModel{steps: []backend.ModelResponse{shellStep("c1", "git status --short")}})
	g.wait(t, r.ID, backend.RunCompleted)
	if tks := g.tickets(t, r.ID); len(tks) != 0 {
		t.Errorf("%d tickets, want none", len(tks))
	}
	res := g.policyResolutions(t, r.ID)
	if len(res) != 1 || res[0]["ruleId"] != "git-status" || res[0]["toolCallId"] != "c1" || res[0]["subjectHash"] == "" {
		t.Errorf("policy resolutions = %+v", res)
	}
	if c, out := g.call(t, r.ID, "c1"); c.Status != backend.CallSucceeded && !strings.Contains(out, "exit code") {
		t.Errorf("call %s: %q, want it executed", c.Status, out)
	}
	if kinds := g.auditKinds(t); !slices.Contains(kinds, "approval.resolved/policy") {
		t.Errorf("no policy resolution in the audit: %v", kinds)
	}
}

// TestPolicyDenyRuleFailsRun (scenario 7): a deny rule on a write path ends
// the run Failed(permission_denied); nothing is written and the rest of the
// step is backfilled.
func TestPolicyDenyRuleFailsRun(t *testing.T) {
	root, db := newWorkspace(t)
	setPolicy(t, root, "version = 1\n[[write]]\nid = \"no-gen\"\nglob = \"gen/**\"\nverdict = \"deny\"\n[[write]]\nglob = \"**\"\nverdict = \"allow\"\n")
	g := newGated(t, root, db)
	defer g.close(t)
	m := &hookedModel{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{
		{ID: "c1", Name: tools.WriteFile, Arguments: json.RawMessage(`{"path":"gen/x.go","content":"package gen\n"}`)},
		{ID: "c2", Name: tools.WriteFile, Arguments: json.RawMessage(`{"path":"src/y.go","content":"package src\n"}`)},
	}}}}
	r := g.start(t, m)
	got := g.wait(t, r.ID, backend.RunFailed)
	if got.Failure == nil || got.Failure.Code != backend.FailPermissionDenied {
		t.Fatalf("failure = %+v", got.Failure)
	}
	for _, p := range []string{"gen/x.go", "src/y.go"} {
		if _, err := os.Stat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s was written (%v)", p, err)
		}
	}
	if c, out := g.call(t, r.ID, "c1"); c.Status != backend.CallFailed || !strings.Contains(out, "no-gen") {
		t.Errorf("c1 %s %q", c.Status, out)
	}
	if c, out := g.call(t, r.ID, "c2"); c.Status != backend.CallFailed || out != "interrupted" {
		t.Errorf("c2 %s %q", c.Status, out)
	}
	if len(g.tickets(t, r.ID)) != 0 {
		t.Error("a denied call got a ticket")
	}
}

// TestDriftFailsClosed (scenario 19): approve a patch, change the file on
// disk, apply: nothing is written, the call fails with approval_drift,
// run.patch.rejected{drift} is emitted, no grant is kept, and the run
// continues.
func TestDriftFailsClosed(t *testing.T) {
	root, db := newWorkspace(t)
	file := filepath.Join(root, "a.txt")
	if err := os.WriteFile(file, []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newGated(t, root, db)
	defer g.close(t)
	m := &hookedModel{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{{ID: "c1",
		Name: tools.WriteFile, Arguments: json.RawMessage(`{"path":"a.txt","content":"agent\n"}`)}}}}}
	r := g.start(t, m)
	ap := g.pending(t, r.ID)
	if err := os.WriteFile(file, []byte("user\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.decide(t, ap, backend.ApproveForRun); err != nil {
		t.Fatal(err)
	}
	g.wait(t, r.ID, backend.RunCompleted)
	if got, _ := os.ReadFile(file); string(got) != "user\n" {
		t.Errorf("a.txt = %q", got)
	}
	if c, out := g.call(t, r.ID, "c1"); c.Status != backend.CallFailed || !strings.HasPrefix(out, "permission_denied: approval_drift") {
		t.Errorf("c1 %s %q", c.Status, out)
	}
	evs, _ := g.e.Events(t.Context(), r.ID, 0, 0)
	rejected := false
	for _, ev := range evs {
		rejected = rejected || (ev.Type == backend.EvPatchRejected && strings.Contains(string(ev.Payload), `"reason":"drift"`))
		if ev.Type == backend.EvPatchApplied {
			t.Error("a patch was applied")
		}
	}
	if !rejected {
		t.Error("no run.patch.rejected{drift}")
	}
	if gs, _ := g.st.RunGrants(t.Context(), r.ID); len(gs) != 0 {
		t.Errorf("a drifted approval kept a grant: %+v", gs)
	}
	if kinds := g.auditKinds(t); !slices.Contains(kinds, "approval.drift/engine") {
		t.Errorf("audit kinds %v", kinds)
	}
}

// TestBrokenPolicyAsks: a policy file that does not parse makes even a
// command its rules would allow ask, with the parse error in the trace, and
// a run grant does not apply under it.
func TestBrokenPolicyAsks(t *testing.T) {
	root, db := newWorkspace(t)
	setPolicy(t, root, "version = 1\n[[shell]]\nprefix = [\"echo\"]\nverdit = \"allow\"\n")
	g := newGated(t, root, db)
	defer g.close(t)
	r := g.start(t, &hookedModel{steps: []backend.ModelResponse{shellStep("c1", "echo one"), shellStep("c2", "echo one")}})
	ap := g.pending(t, r.ID)
	if len(ap.PolicyTrace) == 0 || ap.PolicyTrace[0].Rule != approval.RuleBrokenPolicy ||
		!strings.Contains(ap.PolicyTrace[0].Pattern, `unknown field "shell.verdit"`) {
		t.Errorf("trace %+v", ap.PolicyTrace)
	}
	if err := g.decide(t, ap, backend.ApproveForRun); err != nil {
		t.Fatal(err)
	}
	if tk := g.pending(t, r.ID); tk.ToolCallID != "c2" {
		t.Errorf("ticket for %s, want c2 (no grant under a broken policy)", tk.ToolCallID)
	}
	if _, err := g.e.Cancel(t.Context(), r.ID); err != nil {
		t.Fatal(err)
	}
}
