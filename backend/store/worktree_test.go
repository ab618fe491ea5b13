package store

import (
	"context"
	"errors"
	"testing"

	"agenthub/backend"
)

func TestWorktreeRows(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	add := func(w WorktreeRecord) error {
		_, err := s.Do(ctx, func(tx *Tx) error { return tx.AddWorktree(w) })
		return err
	}
	set := func(id, state string) error {
		_, err := s.Do(ctx, func(tx *Tx) error { return tx.SetWorktreeState(id, state, "note") })
		return err
	}
	if err := add(WorktreeRecord{RunID: "run_a", WorkspaceID: "ws_1", Branch: "agenthub/run_a", Base: "abc"}); err != nil {
		t.Fatal(err)
	}
	if err := add(WorktreeRecord{RunID: "run_b", WorkspaceID: "ws_2", Branch: "agenthub/run_b", Base: "def"}); err != nil {
		t.Fatal(err)
	}
	if err := add(WorktreeRecord{RunID: "run_a", WorkspaceID: "ws_1", Branch: "x", Base: "y"}); err == nil {
		t.Fatal("a second worktree for one run was recorded")
	}
	if err := add(WorktreeRecord{RunID: "run_c", WorkspaceID: "ws_1"}); err == nil {
		t.Fatal("a worktree without branch and base was recorded")
	}
	w, err := s.Worktree(ctx, "run_a")
	if err != nil || w.State != WorktreeActive || w.Base != "abc" || w.WorkspaceID != "ws_1" {
		t.Fatalf("worktree %+v %v", w, err)
	}
	var nf *backend.NotFound
	if _, err := s.Worktree(ctx, "run_none"); !errors.As(err, &nf) {
		t.Fatalf("missing worktree: %v", err)
	}
	tests := []struct {
		id, state string
		ok        bool
	}{
		{"run_a", WorktreeKept, true},
		{"run_a", WorktreeMerged, true},
		{"run_a", WorktreeActive, false}, // merged is final
		{"run_a", WorktreeDiscarded, false},
		{"run_b", "bogus", false},
		{"run_b", WorktreeDiscarded, true},
		{"run_none", WorktreeKept, false},
	}
	for _, tc := range tests {
		if err := set(tc.id, tc.state); (err == nil) != tc.ok {
			t.Errorf("%s -> %s: err %v, want ok=%v", tc.id, tc.state, err, tc.ok)
		}
	}
	all, err := s.Worktrees(ctx, "")
	if err != nil || len(all) != 2 {
		t.Fatalf("all %+v %v", all, err)
	}
	merged, err := s.Worktrees(ctx, "ws_1", WorktreeMerged, WorktreeKept)
	if err != nil || len(merged) != 1 || merged[0].RunID != "run_a" || merged[0].ClosedAt == "" {
		t.Fatalf("merged %+v %v", merged, err)
	}
	if open, err := s.Worktrees(ctx, "", WorktreeActive); err != nil || len(open) != 0 {
		t.Fatalf("active %+v %v", open, err)
	}
}
