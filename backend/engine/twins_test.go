package engine

import (
	"path/filepath"
	"testing"

	"agenthub/backend"
)

// TestIdenticalRequestsAreOneDecision (AP13): two calls of one step that
// ask for exactly the same thing are listed as one item; one decision
// resolves both tickets, each with its own decision, and delivering it
// again has no second effect.
func TestIdenticalRequestsAreOneDecision(t *testing.T) {
	tests := []struct {
		kind       backend.DecisionKind
		executions int
	}{
		{backend.ApproveOnce, 2},
		{backend.RejectAndTell, 0},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{
				call("c1", "write", `{"p":"a"}`), call("c2", "write", `{"p":"a"}`), call("c3", "write", `{"p":"b"}`)}}}}
			f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), m, 4)
			defer f.close(t)
			r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
			f.waitState(t, r.ID, backend.RunNeedsApproval)
			aps, err := f.e.Approvals(t.Context(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(aps) != 2 || len(aps[0].MergedApprovalIDs) != 1 || len(aps[1].MergedApprovalIDs) != 0 {
				t.Fatalf("want the two equal requests as one item and the other apart: %+v", aps)
			}
			d := backend.Decision{DecisionID: "d1", ApprovalID: aps[0].ID, Kind: tt.kind, SubjectHash: aps[0].SubjectHash}
			for range 2 { // the second delivery is a no-op
				if _, err := f.e.Decide(t.Context(), d); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.e.Decide(t.Context(), backend.Decision{DecisionID: "d9", ApprovalID: aps[0].MergedApprovalIDs[0],
				Kind: backend.ApproveOnce, SubjectHash: aps[0].SubjectHash}); backend.CodeOf(err) != backend.CodeApprovalAlreadyResolved {
				t.Fatalf("the twin was not resolved with the item: %v", err)
			}
			f.waitState(t, r.ID, backend.RunNeedsApproval) // c3 still waits
			left, _ := f.e.Approvals(t.Context(), r.ID)
			if len(left) != 1 || left[0].ID != aps[1].ID {
				t.Fatalf("pending after the merged decision: %+v", left)
			}
			if _, err := f.e.Decide(t.Context(), backend.Decision{DecisionID: "d2", ApprovalID: left[0].ID,
				Kind: backend.RejectAndTell, SubjectHash: left[0].SubjectHash}); err != nil {
				t.Fatal(err)
			}
			f.waitState(t, r.ID, backend.RunCompleted)
			f.write.mu.Lock()
			defer f.write.mu.Unlock()
			if f.write.executions != tt.executions {
				t.Fatalf("%d executions, want %d", f.write.executions, tt.executions)
			}
		})
	}
}
