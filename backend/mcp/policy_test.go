package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/llm/llmtest"
)

// resolvedBy returns, per call id, the rule or grant that let a call
// through without a ticket (run.approval.resolved{resolver:"policy"}).
func (n *native) resolvedBy(t *testing.T) map[string]string {
	t.Helper()
	evs, err := n.e.Events(t.Context(), n.run.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, ev := range evs {
		var p map[string]any
		if ev.Type == backend.EvApprovalResolved && json.Unmarshal(ev.Payload, &p) == nil && p["resolver"] == "policy" {
			id, _ := p["ruleId"].(string)
			if id == "" {
				id, _ = p["grantId"].(string)
			}
			out[p["toolCallId"].(string)] = id
		}
	}
	return out
}

// TestMCPPolicyRules: under a workspace policy with [[mcp]] rules, a
// read-only tool the rule trusts runs without a ticket (resolved by the
// rule), an unmatched tool asks, "always allow in this workspace" writes
// an mcp rule that lets the next call of that tool through, and a denied
// tool ends the run permission_denied.
func TestMCPPolicyRules(t *testing.T) {
	root := t.TempDir()
	policy := `version = 1
[[mcp]]
id = "demo-read"
server = "demo"
read_only = true
verdict = "allow"

[[mcp]]
id = "no-spawn"
server = "demo"
tool = "spawn"
verdict = "deny"
`
	if err := os.MkdirAll(filepath.Join(root, ".agenthub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agenthub", "policy.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	set := NewSet([]Config{helperConfig(t, "demo", false)}, nil) // the profile does not trust read-only hints
	defer set.Close()
	n := startNativeIn(t, root, set,
		mcpCall("c1", "mcp__demo__lookup", `{"key":"k"}`),
		mcpCall("c2", "mcp__demo__echo", `{"text":"one"}`),
		mcpCall("c3", "mcp__demo__echo", `{"text":"two"}`),
		mcpCall("c4", "mcp__demo__spawn", `{}`),
		llmtest.Turn{Text: []string{"unreachable"}})
	n.wait(t, backend.RunNeedsApproval)
	aps, _ := n.e.Approvals(t.Context(), n.run.ID)
	if len(aps) != 1 || aps[0].ToolCallID != "c2" {
		t.Fatalf("approvals: %+v", aps)
	}
	if aps[0].GrantPreview != "mcp: tool echo of server demo, any arguments" {
		t.Errorf("grant preview %q", aps[0].GrantPreview)
	}
	if _, err := n.e.Decide(t.Context(), backend.Decision{ApprovalID: aps[0].ID, Kind: backend.AlwaysAllowWorkspace,
		SubjectHash: aps[0].SubjectHash, Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	r := n.wait(t, backend.RunFailed)
	if r.Failure == nil || r.Failure.Code != backend.FailPermissionDenied {
		t.Fatalf("failure: %+v", r.Failure)
	}
	by := n.resolvedBy(t)
	if by["c1"] != "demo-read" || !strings.HasPrefix(by["c3"], "always-mcp-") || by["c2"] != "" || by["c4"] != "" {
		t.Errorf("resolved by policy: %v", by)
	}
	text, _ := os.ReadFile(filepath.Join(root, ".agenthub", "policy.toml"))
	if !strings.HasPrefix(string(text), policy) ||
		!strings.Contains(string(text), "[[mcp]]\nid = 'always-mcp-3'\nserver = 'demo'\ntool = 'echo'\nverdict = 'allow'\n") {
		t.Errorf("policy after always allow:\n%s", text)
	}
	if !n.seen(t, 1, "value of k is 42") || !n.seen(t, 3, "echo: two") {
		t.Error("the allowed calls did not reach the model")
	}
	if aps, _ := n.e.Approvals(t.Context(), ""); len(aps) != 0 {
		t.Errorf("open approvals: %+v", aps)
	}
}

// TestMCPProfileOverridesTighten: the workspace allows every tool of the
// server; the profile's overrides make one tool ask and deny another, and
// the trace names the profile's rules.
func TestMCPProfileOverridesTighten(t *testing.T) {
	root := t.TempDir()
	writePolicy(t, root, "version = 1\n[[mcp]]\nid = \"demo-all\"\nserver = \"demo\"\nverdict = \"allow\"\n")
	var over approval.Policy
	if err := toml.Unmarshal([]byte(`[[mcp]]
id = "ask-lookup"
server = "demo"
tool = "lookup"
verdict = "ask"

[[mcp]]
id = "no-echo"
server = "demo"
tool = "echo"
verdict = "deny"
`), &over); err != nil {
		t.Fatal(err)
	}
	if err := over.ValidateOverrides(); err != nil {
		t.Fatal(err)
	}
	set := NewSet([]Config{helperConfig(t, "demo", false)}, nil)
	defer set.Close()
	n := startNativeOver(t, root, set, &over,
		mcpCall("c1", "mcp__demo__fail", `{}`),
		mcpCall("c2", "mcp__demo__lookup", `{"key":"k"}`),
		mcpCall("c3", "mcp__demo__echo", `{"text":"x"}`),
		llmtest.Turn{Text: []string{"unreachable"}})
	n.wait(t, backend.RunNeedsApproval)
	aps, _ := n.e.Approvals(t.Context(), n.run.ID)
	if len(aps) != 1 || aps[0].ToolCallID != "c2" {
		t.Fatalf("approvals: %+v", aps)
	}
	var steps []string
	for _, s := range aps[0].PolicyTrace {
		steps = append(steps, fmt.Sprintf("%s:%v", s.Rule, s.Matched))
	}
	if got := strings.Join(steps, ","); got != "demo-all:true,profile:ask-lookup:true,profile:no-echo:false" {
		t.Errorf("trace: %s", got)
	}
	if _, err := n.e.Decide(t.Context(), backend.Decision{ApprovalID: aps[0].ID, Kind: backend.ApproveOnce,
		SubjectHash: aps[0].SubjectHash, Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	r := n.wait(t, backend.RunFailed)
	if r.Failure == nil || r.Failure.Code != backend.FailPermissionDenied {
		t.Fatalf("failure: %+v", r.Failure)
	}
	if by := n.resolvedBy(t); by["c1"] != "demo-all" || by["c3"] != "" {
		t.Errorf("resolved by policy: %v", by)
	}
}

func writePolicy(t *testing.T, root, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, ".agenthub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agenthub", "policy.toml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMCPAllowReadOnlyStillGated: allow_read_only makes a read-only call
// run without asking, but a workspace deny rule and a profile override
// still apply to it.
func TestMCPAllowReadOnlyStillGated(t *testing.T) {
	root := t.TempDir()
	writePolicy(t, root, "version = 1\n[[mcp]]\nid = \"no-crash\"\nserver = \"demo\"\ntool = \"crash\"\nverdict = \"deny\"\n")
	var over approval.Policy
	if err := toml.Unmarshal([]byte("[[mcp]]\nid = \"ask-lookup\"\nserver = \"demo\"\ntool = \"lookup\"\nverdict = \"ask\"\n"), &over); err != nil {
		t.Fatal(err)
	}
	set := NewSet([]Config{helperConfig(t, "demo", true)}, nil)
	defer set.Close()
	n := startNativeOver(t, root, set, &over,
		mcpCall("c1", "mcp__demo__grow", `{}`), // read-only, trusted, no rule: runs
		mcpCall("c2", "mcp__demo__lookup", `{"key":"k"}`),
		mcpCall("c3", "mcp__demo__crash", `{}`),
		llmtest.Turn{Text: []string{"unreachable"}})
	n.wait(t, backend.RunNeedsApproval)
	aps, _ := n.e.Approvals(t.Context(), n.run.ID)
	if len(aps) != 1 || aps[0].ToolCallID != "c2" {
		t.Fatalf("approvals: %+v", aps)
	}
	if !n.seen(t, 1, "grown") {
		t.Error("the trusted read-only call did not run")
	}
	if _, err := n.e.Decide(t.Context(), backend.Decision{ApprovalID: aps[0].ID, Kind: backend.ApproveOnce,
		SubjectHash: aps[0].SubjectHash, Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	r := n.wait(t, backend.RunFailed) // crash is denied before it runs
	if r.Failure == nil || r.Failure.Code != backend.FailPermissionDenied {
		t.Fatalf("failure: %+v", r.Failure)
	}
	if !n.seen(t, 2, "value of k is 42") {
		t.Error("the approved call did not run")
	}
}
