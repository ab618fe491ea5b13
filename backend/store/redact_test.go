package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/redact"
)

// Synthetic secrets, assembled at run time so that this file does not trip
// secret scanners.
var (
	leakToken = "ghp_" + "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5"
	leakEnv   = "Pw-of-" + "the-env-8812"
)

// TestRedactEveryWritePath: every write that can carry tool output or model
// text stores the redacted form once a redactor is set.
func TestRedactEveryWritePath(t *testing.T) {
	leak := "text with " + leakToken + " and " + leakEnv
	leakJSON, _ := json.Marshal(map[string]string{"out": leak})
	cases := []struct {
		name string
		job  func(tx *Tx) error
	}{
		{"event payload", func(tx *Tx) error {
			_, err := tx.Append("run_1", backend.EvToolResult, map[string]string{"content": leak})
			return err
		}},
		{"message", func(tx *Tx) error {
			_, err := tx.AddMessages("ses_run_1", "run_1", 1, -1, []backend.Message{{Role: backend.RoleAssistant, Text: leak}})
			return err
		}},
		{"tool call", func(tx *Tx) error {
			return tx.PutCall(Call{RunID: "run_1", ID: "c1", Step: 1, Name: "x", Arguments: leakJSON,
				Status: backend.CallFailed, SuspensionReason: leak, ResumeInput: leakJSON, Result: leakJSON})
		}},
		{"ticket and decision", func(tx *Tx) error {
			tk := Ticket{TicketKind: "approval", ApprovalRequest: backend.ApprovalRequest{ID: "apr_1", RunID: "run_1",
				ToolCallID: "c1", Kind: backend.ActionShell, Title: leak, Preview: leakJSON, Subject: leakJSON,
				SubjectHash: "sha256:1", GrantPreview: leak, PolicyTrace: []backend.TraceStep{{Rule: "r", Pattern: leak}}}}
			if err := tx.CreateTicket(tk); err != nil {
				return err
			}
			return tx.Resolve(StoredDecision{Decision: backend.Decision{DecisionID: "dec_1", ApprovalID: "apr_1",
				ToolCallID: "c1", Kind: backend.RejectAndTell, Reason: leak, Actor: "me", Surface: backend.SurfaceCLI},
				RunID: "run_1", Payload: leakJSON}, "user")
		}},
		{"checkpoint and stats", func(tx *Tx) error {
			if _, err := tx.Checkpoint("run_1", "step", 1, map[string]string{"text": leak}); err != nil {
				return err
			}
			return tx.SetStats("run_1", map[string][]string{"texts": {leak}})
		}},
		{"failure", func(tx *Tx) error {
			for _, s := range []backend.RunState{backend.RunPlanned, backend.RunAccepted, backend.RunPreparing, backend.RunRunning} {
				if _, err := tx.Transition("run_1", s, "", nil); err != nil {
					return err
				}
			}
			_, err := tx.Transition("run_1", backend.RunFailed, leak, &End{DoneReason: "internal_error",
				Code: backend.FailInternal, Message: leak})
			return err
		}},
		{"grant and audit", func(tx *Tx) error {
			if err := tx.AddGrant(Grant{ID: "grt_1", Scope: GrantRun, RunID: "run_1", Kind: backend.ActionShell,
				Pattern: leakJSON}, By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
				return err
			}
			_, err := tx.Audit(backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine, Kind: "x",
				Data: map[string]any{"note": leak}})
			return err
		}},
		{"session and task", func(tx *Tx) error {
			if err := tx.CreateSession("ses_2", "ws_1", leak); err != nil {
				return err
			}
			_, err := tx.CreateRun(RunRecord{ID: "run_2", SessionID: "ses_2", WorkspaceID: "ws_1", Profile: "p",
				AgentID: "p", Runtime: "native", Task: leak}, map[string]string{"task": leak})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTest(t)
			s.SetRedactor(redact.NewFromEnviron([]string{"SOME_PASSWORD=" + leakEnv}))
			newRun(t, s, "run_1")
			if _, err := s.Do(t.Context(), tc.job); err != nil {
				t.Fatal(err)
			}
			if where := findText(t, s, leakToken, leakEnv); len(where) > 0 {
				t.Errorf("stored in the clear: %v", where)
			}
			if len(findText(t, s, "[REDACTED:github_token]")) == 0 || len(findText(t, s, "[REDACTED:env]")) == 0 {
				t.Error("no redaction marker stored")
			}
			if broken, _, err := s.VerifyAudit(t.Context()); err != nil || broken != 0 {
				t.Errorf("audit chain broken at %d (%v) after redaction", broken, err)
			}
		})
	}
}

// TestNoRedactorStoresAsIs: without a redactor (tests, benchmarks) text is
// stored unchanged.
func TestNoRedactorStoresAsIs(t *testing.T) {
	s, _ := openTest(t)
	newRun(t, s, "run_1")
	if _, err := s.Do(t.Context(), func(tx *Tx) error {
		_, err := tx.Append("run_1", backend.EvToolResult, map[string]string{"content": leakToken})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(findText(t, s, leakToken)) == 0 {
		t.Error("text changed without a redactor")
	}
}

// findText returns "table.column" for every text cell holding one of subs.
func findText(t *testing.T, s *Store, subs ...string) []string {
	t.Helper()
	ctx := t.Context()
	tables, err := s.r.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tables.Next() {
		var n string
		if err := tables.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	tables.Close()
	var out []string
	for _, table := range names {
		rows, err := s.r.QueryContext(ctx, fmt.Sprintf(`SELECT * FROM %q`, table))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				text := fmt.Sprint(v)
				if b, ok := v.([]byte); ok {
					text = string(b)
				}
				for _, sub := range subs {
					if strings.Contains(text, sub) {
						out = append(out, table+"."+cols[i])
					}
				}
			}
		}
		rows.Close()
	}
	return out
}

func TestGrants(t *testing.T) {
	s, _ := openTest(t)
	newRun(t, s, "run_1")
	newRun(t, s, "run_2")
	by := By{Actor: "me", Surface: backend.SurfaceCLI}
	_, err := s.Do(t.Context(), func(tx *Tx) error {
		for _, g := range []Grant{
			{ID: "grt_1", Scope: GrantRun, RunID: "run_1", WorkspaceID: "ws_1", Kind: backend.ActionShell, Tool: "run_shell",
				Pattern: json.RawMessage(`{"kind":"shell","prefix":["go","test"]}`)},
			{ID: "grt_2", Scope: GrantWorkspace, RunID: "run_1", WorkspaceID: "ws_1", Kind: backend.ActionShell,
				Pattern: json.RawMessage(`{"kind":"shell","prefix":["ls"]}`)},
			{ID: "grt_3", Scope: GrantRun, RunID: "run_2", Kind: backend.ActionPatch, Pattern: json.RawMessage(`{}`)},
		} {
			if err := tx.AddGrant(g, by); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := s.RunGrants(t.Context(), "run_1")
	if err != nil || len(gs) != 1 || gs[0].ID != "grt_1" || gs[0].Tool != "run_shell" ||
		string(gs[0].Pattern) != `{"kind":"shell","prefix":["go","test"]}` {
		t.Fatalf("RunGrants = %+v, %v", gs, err)
	}
	ents, _ := s.AuditEntries(t.Context(), 0, 0)
	n := 0
	for _, e := range ents {
		if e.Kind == "grant.added" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d grant.added audit entries, want 3", n)
	}
}
