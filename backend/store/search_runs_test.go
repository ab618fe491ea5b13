package store

import (
	"fmt"
	"testing"
	"time"

	"agenthub/backend"
)

// runsFixture holds n runs in two workspaces, run i in ws_a when i is even;
// run 1 continues run 0 (resume links both ways).
func runsFixture(tb testing.TB, s *Store, n int) {
	tb.Helper()
	ctx := tb.Context()
	by := By{Actor: "test", Surface: backend.SurfaceCLI}
	for _, ws := range []string{"ws_a", "ws_b"} {
		if err := s.AddWorkspace(ctx, backend.Workspace{ID: ws, Name: "name_" + ws, Path: "/abs/" + ws,
			DisplayPath: "~/" + ws}, by); err != nil {
			tb.Fatal(err)
		}
	}
	_, err := s.Do(ctx, func(tx *Tx) error {
		for _, ws := range []string{"ws_a", "ws_b"} {
			if err := tx.CreateSession("ses_"+ws, ws, ""); err != nil {
				return err
			}
		}
		for i := range n {
			ws := []string{"ws_a", "ws_b"}[i%2]
			if _, err := tx.CreateRun(RunRecord{ID: fmt.Sprintf("run_%06d", i), SessionID: "ses_" + ws, WorkspaceID: ws,
				Profile: "demo", AgentID: "a", Runtime: "native", Task: "same task"}, nil); err != nil {
				return err
			}
		}
		return tx.Exec(`UPDATE runs SET resumed_by = 'run_000001' WHERE id = 'run_000000';
			UPDATE runs SET resumed_from = 'run_000000' WHERE id = 'run_000001'`)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func TestRunsPage(t *testing.T) {
	s, _ := openTest(t)
	runsFixture(t, s, 250)
	ctx := t.Context()
	var all []RunListItem
	var before int64
	for pages := 0; ; pages++ {
		page, more, err := s.RunsPage(ctx, RunPageFilter{Before: before, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if !more {
			if pages != 2 || len(page) != 50 {
				t.Fatalf("the last page is page %d with %d runs", pages, len(page))
			}
			break
		}
		before = page[len(page)-1].Cursor
	}
	if len(all) != 250 || all[0].ID != "run_000249" || all[249].ID != "run_000000" {
		t.Fatalf("%d runs, first %s, last %s", len(all), all[0].ID, all[len(all)-1].ID)
	}
	seen := map[string]bool{}
	for _, r := range all {
		if seen[r.ID] {
			t.Fatalf("%s twice", r.ID)
		}
		seen[r.ID] = true
	}
	if r := all[249]; r.ResumedBy != "run_000001" || r.WorkspaceName != "name_ws_a" || r.CreatedAt == "" {
		t.Errorf("run 0: %+v", r)
	}
	if r := all[248]; r.ResumedFrom != "run_000000" {
		t.Errorf("run 1: %+v", r)
	}
	page, _, err := s.RunsPage(ctx, RunPageFilter{WorkspaceID: "ws_b", States: []backend.RunState{backend.RunCreated}})
	if err != nil || len(page) != 100 || page[0].WorkspaceID != "ws_b" || page[0].ID != "run_000249" {
		t.Fatalf("ws_b page: %d runs, %v", len(page), err)
	}
	if page, _, _ := s.RunsPage(ctx, RunPageFilter{States: []backend.RunState{backend.RunFailed}}); len(page) != 0 {
		t.Fatalf("failed runs: %d", len(page))
	}
}

// BenchmarkRunsPage10k: the first page of the runs list (what the list
// paints first) with 10,000 runs, at the store (an API-level measurement;
// the UI's rendering is not measured). References in the same op: the bare
// query for the same 100 ids, and Store.Runs of all 10,000 (what the sidebar
// loads today). Target: first paint < 1 s.
func BenchmarkRunsPage10k(b *testing.B) {
	quietLog()
	s, _ := benchStore(b, 0)
	defer s.Close()
	runsFixture(b, s, 10_000)
	var page, bare, all time.Duration
	for b.Loop() {
		t0 := time.Now()
		runs, more, err := s.RunsPage(b.Context(), RunPageFilter{Limit: 100})
		page += time.Since(t0)
		if err != nil || len(runs) != 100 || !more {
			b.Fatalf("%d runs, %v", len(runs), err)
		}
		t0 = time.Now()
		rows, err := s.r.QueryContext(b.Context(), `SELECT id FROM runs ORDER BY queue_seq DESC LIMIT 100`)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
		}
		rows.Close()
		bare += time.Since(t0)
		t0 = time.Now()
		if list, err := s.Runs(b.Context(), RunFilter{}); err != nil || len(list) != 10_000 {
			b.Fatalf("%d runs, %v", len(list), err)
		}
		all += time.Since(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(page.Microseconds())/1000/n, "ms/page")
	b.ReportMetric(float64(bare.Microseconds())/1000/n, "bare-ms")
	b.ReportMetric(float64(all.Microseconds())/1000/n, "all-10k-ms")
}
