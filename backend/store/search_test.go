package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"agenthub/backend"
)

// searchFixture holds two workspaces and three runs with every kind of
// indexed text; it returns the store and the sequence of each planted word.
func searchFixture(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	by := By{Actor: "test", Surface: backend.SurfaceCLI}
	for _, ws := range []string{"ws_a", "ws_b"} {
		if err := s.AddWorkspace(ctx, backend.Workspace{ID: ws, Name: ws, Path: "/abs/" + ws,
			DisplayPath: "~/" + ws}, by); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Do(ctx, func(tx *Tx) error {
		for _, r := range []struct{ id, ws, profile, task string }{
			{"run_a1", "ws_a", "demo", "tidy the zeppelin hangar"},
			{"run_a2", "ws_a", "claude", "paint the zeppelin red"},
			{"run_b1", "ws_b", "demo", "walk the llama"},
		} {
			if err := tx.CreateSession("ses_"+r.id, r.ws, ""); err != nil {
				return err
			}
			if _, err := tx.CreateRun(RunRecord{ID: r.id, SessionID: "ses_" + r.id, WorkspaceID: r.ws,
				Profile: r.profile, AgentID: "a", Runtime: "native", Task: r.task},
				map[string]any{"task": r.task}); err != nil {
				return err
			}
		}
		steps := []struct {
			run string
			typ backend.EventType
			p   any
		}{
			{"run_a1", backend.EvMessageDelta, map[string]any{"messageId": "m1", "text": "deltaonlyword"}},
			{"run_a1", backend.EvMessageCompleted, map[string]any{"messageId": "m1", "text": "I will inspect the quokka"}},
			{"run_a1", backend.EvToolCall, map[string]any{"toolCallId": "c1", "name": "run_shell",
				"arguments": json.RawMessage(`{"command":"grep -rn platypus ."}`)}},
			{"run_a1", backend.EvToolResult, map[string]any{"toolCallId": "c1", "content": "found narwhal in main.go"}},
			{"run_a1", backend.EvPatchApplied, map[string]any{"tool": "write_file", "checkpointId": "ck_1",
				"files": []map[string]string{{"path": "src/walrus.go", "preimage": "aa", "postimage": "bb"}}}},
			{"run_a2", backend.EvApprovalResolved, map[string]any{"approvalId": "ap_1", "decision": "reject",
				"reason": "too risky for the wombat"}},
			{"run_b1", backend.EvMessageCompleted, map[string]any{"messageId": "m2", "text": "the quokka again"}},
		}
		for _, st := range steps {
			if _, err := tx.Append(st.run, st.typ, st.p); err != nil {
				return err
			}
		}
		return tx.Exec(`INSERT INTO approvals (id, run_id, tool_call_id, ticket_kind, kind, title, preview, risk,
			subject, subject_hash, policy_trace, enforcement, decisions_offered, status, created_at)
			VALUES ('ap_2', 'run_b1', 'c9', 'approval', 'shell', 't', '{}', 'low', '{}', 'h', '[]', 'gate', '[]',
			'pending', '2026-01-01T00:00:00.000Z')`)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !s.searchable.Load() { // a schema before 00005: the migration indexes it
		return
	}
	if err := s.FlushIndex(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSearchIndexCatchesUpByItself: with no search asking, the committer
// indexes what was committed while it has nothing else to do.
func TestSearchIndexCatchesUpByItself(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	searchFixture(t, s)
	if _, err := s.Do(ctx, func(tx *Tx) error {
		for i := range 500 { // several batches
			if _, err := tx.Append("run_a2", backend.EvToolResult, map[string]any{"content": fmt.Sprintf("pangolin %d", i)}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		behind, err := s.IndexBehind(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !behind {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the index is still behind after 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	hits, err := s.Search(ctx, SearchFilter{Query: "pangolin", Limit: 500})
	if err != nil || len(hits) != 500 {
		t.Fatalf("%d hits for 500 events (%v)", len(hits), err)
	}
}

type hitKey struct {
	run string
	typ backend.EventType
}

func hitKeys(hits []SearchHit) []hitKey {
	out := make([]hitKey, len(hits))
	for i, h := range hits {
		out[i] = hitKey{h.RunID, h.Type}
	}
	return out
}

func TestSearchFindsEveryKindOfText(t *testing.T) {
	s, _ := openTest(t)
	searchFixture(t, s)
	for _, tc := range []struct {
		query string
		want  []hitKey
	}{
		{"zeppelin hangar", []hitKey{{"run_a1", backend.EvRunCreated}}}, // task
		{"inspect", []hitKey{{"run_a1", backend.EvMessageCompleted}}},   // message
		{"platypus", []hitKey{{"run_a1", backend.EvToolCall}}},          // command in tool arguments
		{"narwhal", []hitKey{{"run_a1", backend.EvToolResult}}},         // tool output
		{"walrus.go", []hitKey{{"run_a1", backend.EvPatchApplied}}},     // changed path
		{"wombat", []hitKey{{"run_a2", backend.EvApprovalResolved}}},    // approval reason
		{"walr", []hitKey{{"run_a1", backend.EvPatchApplied}}},          // the last word is a prefix
		{"deltaonlyword", nil}, // deltas are not indexed
		{"ck_1", nil},          // ids are not text
	} {
		hits, err := s.Search(t.Context(), SearchFilter{Query: tc.query})
		if err != nil {
			t.Fatalf("%q: %v", tc.query, err)
		}
		if got := hitKeys(hits); !equalKeys(got, tc.want) {
			t.Errorf("%q: got %v, want %v", tc.query, got, tc.want)
		}
	}
}

func equalKeys(a, b []hitKey) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSearchSnippetMarksTheMatch(t *testing.T) {
	s, _ := openTest(t)
	searchFixture(t, s)
	hits, err := s.Search(t.Context(), SearchFilter{Query: "narwhal"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("hits %v, err %v", hits, err)
	}
	var marked []string
	var all strings.Builder
	for _, p := range hits[0].Snippet {
		all.WriteString(p.Text)
		if p.Match {
			marked = append(marked, p.Text)
		}
	}
	if len(marked) != 1 || marked[0] != "narwhal" || !strings.Contains(all.String(), "found narwhal in main") {
		t.Errorf("snippet %+v", hits[0].Snippet)
	}
	if hits[0].Sequence < 2 || hits[0].Task != "tidy the zeppelin hangar" || hits[0].WorkspaceID != "ws_a" {
		t.Errorf("hit %+v", hits[0])
	}
}

func TestSearchFilters(t *testing.T) {
	s, _ := openTest(t)
	searchFixture(t, s)
	runsOf := func(f SearchFilter) string {
		hits, err := s.Search(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		var out []string
		for _, h := range hits {
			if !seen[h.RunID] {
				seen[h.RunID] = true
				out = append(out, h.RunID)
			}
		}
		sortStrings(out)
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		name string
		f    SearchFilter
		want string
	}{
		{"none", SearchFilter{Query: "the"}, "run_a1,run_a2,run_b1"},
		{"workspace", SearchFilter{Query: "the", WorkspaceID: "ws_b"}, "run_b1"},
		{"status", SearchFilter{Query: "the", States: []backend.RunState{backend.RunCompleted}}, ""},
		{"status created", SearchFilter{Query: "the", States: []backend.RunState{backend.RunCreated}},
			"run_a1,run_a2,run_b1"},
		{"profile", SearchFilter{Query: "the", Runtime: "claude"}, "run_a2"},
		{"runtime", SearchFilter{Query: "the", Runtime: "native"}, "run_a1,run_a2,run_b1"},
		{"needs approval", SearchFilter{Query: "the", NeedsApproval: true}, "run_b1"},
		{"changed file", SearchFilter{Query: "the", ChangedFile: "src/walrus.go"}, "run_a1"},
		{"changed other file", SearchFilter{Query: "the", ChangedFile: "src/other.go"}, ""},
		{"from the future", SearchFilter{Query: "the", From: "2999-01-01"}, ""},
		{"until the past", SearchFilter{Query: "the", To: "2000-01-01"}, ""},
		{"date range", SearchFilter{Query: "the", From: "2000-01-01", To: "2999-01-01"}, "run_a1,run_a2,run_b1"},
		{"one run", SearchFilter{Query: "quokka", RunID: "run_b1"}, "run_b1"},
	} {
		if got := runsOf(tc.f); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j-1] > s[j]; j-- {
			s[j-1], s[j] = s[j], s[j-1]
		}
	}
}

// TestSearchQueryIsNeverSyntax: what a user types is words, never FTS5
// syntax; an operator, a quote or a column filter neither fails nor widens
// the search.
func TestSearchQueryIsNeverSyntax(t *testing.T) {
	s, _ := openTest(t)
	searchFixture(t, s)
	for _, q := range []string{`quokka"`, `quokka OR llama`, `NEAR(quokka`, `body:quokka`, `quokka*`,
		`-quokka`, `(quokka`, `quokka AND`, `^quokka`, `'quokka'`, `quokka NOT llama`} {
		hits, err := s.Search(t.Context(), SearchFilter{Query: q})
		if err != nil {
			t.Errorf("%q: %v", q, err)
		}
		for _, h := range hits {
			if h.Type != backend.EvMessageCompleted {
				t.Errorf("%q matched %s %s", q, h.RunID, h.Type)
			}
		}
	}
	for _, q := range []string{"", "   ", `"*"`, "()"} {
		if _, err := s.Search(t.Context(), SearchFilter{Query: q}); !errors.Is(err, ErrEmptyQuery) {
			t.Errorf("%q: err %v, want the empty query error", q, err)
		}
	}
}

// TestSearchFailedJobLeavesNoIndex: the index is written in the committer's
// transaction, so a job that fails after appending takes its index rows back
// with its events.
func TestSearchFailedJobLeavesNoIndex(t *testing.T) {
	s, _ := openTest(t)
	searchFixture(t, s)
	_, err := s.Do(t.Context(), func(tx *Tx) error {
		if _, err := tx.Append("run_b1", backend.EvMessageCompleted, map[string]any{"text": "ghostword"}); err != nil {
			return err
		}
		return errors.New("the job fails after its append")
	})
	if err == nil {
		t.Fatal("the failing job committed")
	}
	if err := s.FlushIndex(t.Context()); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(t.Context(), SearchFilter{Query: "ghostword"})
	if err != nil || len(hits) != 0 {
		t.Fatalf("a rolled-back event is searchable: %v %v", hits, err)
	}
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM search_text WHERE rowid NOT IN (SELECT pos FROM events)`).
		Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d index rows without their event (%v)", n, err)
	}
}

// TestSearchIndexesExistingData: a database written before migration 00005
// is backed up, then indexed.
func TestSearchIndexesExistingData(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agenthub.db")
	old := fstest.MapFS{}
	err := fs.WalkDir(Migrations(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p >= "00005" {
			return err
		}
		b, err := fs.ReadFile(Migrations(), p)
		old[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := open(t.Context(), path, old)
	if err != nil {
		t.Fatal(err)
	}
	searchFixture(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	baks, _ := filepath.Glob(path + ".v4-*.bak")
	if len(baks) != 1 {
		t.Errorf("backups before the migration: %v", baks)
	}
	for _, q := range []string{"zeppelin", "platypus", "narwhal", "walrus", "wombat"} {
		hits, err := s.Search(t.Context(), SearchFilter{Query: q})
		if err != nil || len(hits) == 0 {
			t.Errorf("%q after the migration: %v %v", q, hits, err)
		}
	}
	if hits, _ := s.Search(t.Context(), SearchFilter{Query: "deltaonlyword"}); len(hits) != 0 {
		t.Errorf("the migration indexed a delta: %v", hits)
	}
}

// TestDecisionEntryCarriesReasonAndHunks: the audit entry of a decision
// says why (the reason), what (the hunks chosen) and where (the event it
// records), and the chain still verifies with them.
func TestDecisionEntryCarriesReasonAndHunks(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	searchFixture(t, s)
	_, err := s.Do(ctx, func(tx *Tx) error {
		if err := tx.CreateTicket(Ticket{ApprovalRequest: backend.ApprovalRequest{ID: "apr_1", RunID: "run_a1",
			ToolCallID: "c7", Kind: backend.ActionPatch, Title: "Write a.go", Risk: "low", SubjectHash: "h1",
			Enforcement: "enforced"}, TicketKind: "approval"}); err != nil {
			return err
		}
		return tx.Resolve(StoredDecision{RunID: "run_a1", Decision: backend.Decision{DecisionID: "dec_1",
			ApprovalID: "apr_1", ToolCallID: "c7", Kind: backend.ApproveOnce, SubjectHash: "h1",
			Reason: "only the import block", Hunks: []backend.HunkRef{{Path: "a.go", Index: 2, Lines: []int{1, 4}}},
			Actor: "me", Surface: backend.SurfaceCLI}}, "user")
	})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.RunAudit(ctx, "run_a1")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(ctx, "run_a1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got backend.AuditEntry
	for _, e := range entries {
		if e.Kind == "approval.resolved" {
			got = e
		}
	}
	hunks, _ := got.Data["hunks"].([]any)
	h0, _ := hunks[0].(map[string]any)
	if got.Data["reason"] != "only the import block" || len(hunks) != 1 || h0["path"] != "a.go" || h0["index"] != 2.0 ||
		fmt.Sprint(h0["lines"]) != "[1 4]" {
		t.Fatalf("decision entry %+v", got.Data)
	}
	seq, _ := got.Data["event"].(float64)
	if seq < 1 || int(seq) > len(evs) || evs[int(seq)-1].Type != backend.EvApprovalResolved {
		t.Fatalf("the entry's event %v is not the run's approval.resolved", got.Data["event"])
	}
	if r, err := s.CheckAudit(ctx, nil); err != nil || !r.OK {
		t.Fatalf("the chain does not verify: %+v %v", r, err)
	}
}

func TestCutSnippet(t *testing.T) {
	long := make([]string, 40)
	for i := range long {
		long[i] = fmt.Sprintf("w%d", i)
	}
	for _, tc := range []struct {
		name, text string
		terms      []string
		want       string // matches in [brackets]
	}{
		{"short", "found narwhal in main.go", []string{"narwhal"}, "found [narwhal] in main.go"},
		{"case", "Found NARWHAL", []string{"narwhal"}, "Found [NARWHAL]"},
		{"the last word is a prefix", "edit src/walrus.go now", []string{"walr"}, "edit src/[walrus].go now"},
		{"only the last word", "walrus wal", []string{"wal", "x"}, "walrus [wal]"},
		{"a window around the first match", strings.Join(long, " "), []string{"w30"},
			"…w26 w27 w28 w29 [w30] w31 w32 w33 w34 w35 w36 w37 w38 w39"},
		{"the start when nothing matches here", strings.Join(long, " "), []string{"zzz"},
			"w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 …"},
	} {
		var b strings.Builder
		for _, p := range cutSnippet(tc.text, tc.terms) {
			if p.Match {
				b.WriteString("[" + p.Text + "]")
			} else {
				b.WriteString(p.Text)
			}
		}
		if b.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, b.String(), tc.want)
		}
	}
}
