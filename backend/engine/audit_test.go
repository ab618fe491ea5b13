package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
)

// patchTool is gated as a patch and reports what it applied and rejected
// the way backend/tools does, hunk content included.
type patchTool struct{}

func (patchTool) Spec() backend.ToolSpec { return backend.ToolSpec{Name: "patch"} }
func (patchTool) Action(_ context.Context, _ backend.ToolEnv, args json.RawMessage) (*backend.GatedAction, error) {
	return &backend.GatedAction{Kind: backend.ActionPatch, Title: "Edit a.txt", Risk: backend.RiskMedium,
		Subject: args, Preview: args}, nil
}
func (patchTool) Execute(_ context.Context, env backend.ToolEnv, _ backend.ToolInput) (backend.ToolResult, error) {
	env.Emit(backend.EvPatchRejected, map[string]any{"tool": "patch", "path": "a.txt", "reason": "reviewer",
		"hunks": []map[string]any{{"lines": []string{"+SECRET-CONTENT"}}}})
	env.Emit(backend.EvPatchApplied, map[string]any{"tool": "patch", "checkpointId": "ck_1",
		"files": []map[string]string{{"path": "a.txt", "preimage": "p", "postimage": "q"}},
		"hunks": map[string]any{"path": "a.txt", "approved": []int{0}, "of": 2}})
	return backend.ToolResult{Content: "applied"}, nil
}

// TestAppliedActionsAreAudited (AU1): an approved action leaves
// action.started and action.finished with the subject hash it executed
// under, and its patch applied/rejected entries, without file content.
func TestAppliedActionsAreAudited(t *testing.T) {
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{call("c1", "patch", `{"p":"a"}`)}}}}
	f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), m, 4)
	defer f.close(t)
	f.e.cfg.Tools["patch"] = patchTool{}
	r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	f.waitState(t, r.ID, backend.RunNeedsApproval)
	aps, _ := f.e.Approvals(t.Context(), r.ID)
	if _, err := f.e.Decide(t.Context(), backend.Decision{DecisionID: "d1", ApprovalID: aps[0].ID,
		Kind: backend.ApproveOnce, SubjectHash: aps[0].SubjectHash}); err != nil {
		t.Fatal(err)
	}
	f.waitState(t, r.ID, backend.RunCompleted)
	entries, err := f.st.AuditEntries(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range entries {
		if e.RunID != r.ID || e.ToolCallID != "c1" {
			continue
		}
		kinds = append(kinds, e.Kind)
		if e.Kind != "approval.requested" && e.SubjectHash != aps[0].SubjectHash {
			t.Errorf("%s has subject %q, want %q", e.Kind, e.SubjectHash, aps[0].SubjectHash)
		}
		if b, _ := json.Marshal(e.Data); strings.Contains(string(b), "SECRET-CONTENT") {
			t.Errorf("%s holds file content: %s", e.Kind, b)
		}
	}
	want := "approval.requested approval.resolved action.started patch.rejected patch.applied action.finished"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("audit of the call:\n got %s\nwant %s", got, want)
	}
	if ok, _, err := f.st.VerifyAudit(t.Context()); err != nil || ok != 0 {
		t.Fatalf("verify: broken at %d, %v", ok, err)
	}
}
