package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/redact"
	"agenthub/backend/store"
	"agenthub/backend/tools"
)

// Synthetic secrets, assembled at run time so that this file does not trip
// secret scanners. keyBody* are lines of the private key's body.
var (
	secretAWS       = "AKIA" + "QWERTYUIOPASDFGH"
	secretGitHub    = "ghp_" + "Ab3De5Gh7Jk9Mn1Pq3St5Vx7Za9Ce1Gh3Jk5"
	secretAnthropic = "sk-ant-" + "api03-Xy1Zw2Vu3Ts4Rq5Po6Nm7Lk8Ji9Hg0"
	secretEnv       = "Zq9-my-env-" + "token-Value-4711"
	keyBody1        = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gt"
	keyBody2        = "QyNTUxOQAAACBxyzSecretKeyMaterial0123456789abcd"
	privateKey      = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\n" + keyBody1 + "\n" + keyBody2 + "\n-----END OPENSSH " + "PRIVATE KEY-----"
)

func allSecrets() []string {
	return []string{secretAWS, secretGitHub, secretAnthropic, secretEnv, keyBody1, keyBody2}
}

// failTool fails with an error that quotes secrets, as an upstream error
// message might.
type failTool struct{}

func (failTool) Spec() backend.ToolSpec { return backend.ToolSpec{Name: "fail"} }
func (failTool) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}
func (failTool) Execute(context.Context, backend.ToolEnv, backend.ToolInput) (backend.ToolResult, error) {
	return backend.ToolResult{}, fmt.Errorf("upstream refused token %s and key\n%s", secretGitHub, privateKey)
}

// leakyModel says secrets, calls tools that print and raise them, and
// finally fails with an error that quotes them.
type leakyModel struct{ hookedModel }

func (m *leakyModel) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	// The text streams in small deltas, so secrets straddle them.
	resp, err := m.hookedModel.Stream(ctx, req, func(s string) {
		for s != "" {
			n := min(7, len(s))
			delta(s[:n])
			s = s[n:]
		}
	})
	if err == nil && req.Step == 3 {
		err = &backend.Error{Code: backend.FailRuntimeUnavailable,
			Message: "the provider rejected key " + secretAnthropic + " for " + secretEnv}
	}
	return resp, err
}

// TestNoSecretPersisted injects secrets into tool output, an assistant
// message, a tool error, a reviewer's reason and a run failure of a real run
// (real engine, tools and SQLite file), then scans the raw bytes of the
// database, its WAL and an export of the events and the audit trail.
func TestNoSecretPersisted(t *testing.T) {
	t.Setenv("MY_API_TOKEN", secretEnv)
	root, db := newWorkspace(t)
	st, err := store.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	st.SetRedactor(redact.NewFromEnviron(os.Environ()))
	if err := st.AddWorkspace(t.Context(), backend.Workspace{ID: "ws_1", Name: "w", Path: root, DisplayPath: "w"},
		store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	roots := func(string) (string, error) { return root, nil }
	all := tools.New(tools.Config{CheckpointDir: filepath.Join(t.TempDir(), "checkpoints")})
	all["fail"] = failTool{}
	e := New(Config{Store: st, Gate: approval.NewGate(roots), Roots: roots, Tools: all, Profiles: map[string]Profile{}})
	g := &gated{root: root, db: db, st: st, e: e}

	printSecrets := fmt.Sprintf("printf '%%s\\n' %s %s %s '%s'", secretAWS, secretEnv, secretGitHub,
		strings.ReplaceAll(privateKey, "\n", "' '"))
	m := &leakyModel{hookedModel{steps: []backend.ModelResponse{
		{Text: "Found " + secretAWS + " and " + secretGitHub + " in the logs:\n" + privateKey,
			Calls: shellStep("c1", printSecrets).Calls},
		{Text: "The env holds " + secretEnv, Calls: append([]backend.ToolCallRequest{{ID: "c2", Name: "fail",
			Arguments: json.RawMessage(`{}`)}}, shellStep("c3", "echo "+secretAnthropic).Calls...)},
	}}}
	r, err := e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Profile: g.addModel(m),
		Task: "check the key " + secretAnthropic, Actor: "me", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	first := g.pending(t, r.ID)
	if first.GrantPreview != "" || len(first.DecisionsOffered) != 3 {
		t.Errorf("a grant holding secrets is offered: %v %q", first.DecisionsOffered, first.GrantPreview)
	}
	if err := g.decide(t, first, backend.ApproveOnce); err != nil {
		t.Fatal(err)
	}
	ap := g.pending(t, r.ID) // c3
	if _, err := e.Decide(t.Context(), backend.Decision{DecisionID: "d-reason", ApprovalID: ap.ID,
		Kind: backend.RejectAndTell, SubjectHash: ap.SubjectHash, Reason: "never echo " + secretAWS,
		Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	g.wait(t, r.ID, backend.RunFailed)
	if _, out := g.call(t, r.ID, "c1"); !strings.Contains(out, "[REDACTED:") {
		t.Fatalf("the shell output was not what the test expects: %q", out)
	}

	export := exportRun(t, g, r.ID)
	streamed := streamedText(t, g, r.ID)
	open := readDB(t, db)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	closed := readDB(t, db)
	for name, data := range map[string][]byte{"export": export, "database while open": open, "database after close": closed,
		"streamed text, deltas joined": streamed} {
		for _, s := range allSecrets() {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds the secret %q", name, s)
			}
		}
		if !bytes.Contains(data, []byte("[REDACTED:")) {
			t.Errorf("%s holds no redaction marker", name)
		}
	}
}

// streamedText is what a viewer of the live run saw: the message deltas
// joined, per message.
func streamedText(t *testing.T, g *gated, runID string) []byte {
	t.Helper()
	evs, err := g.e.Events(t.Context(), runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, ev := range evs {
		if ev.Type != backend.EvMessageDelta {
			continue
		}
		var d messageDelta
		if err := json.Unmarshal(ev.Payload, &d); err != nil {
			t.Fatal(err)
		}
		buf.WriteString(d.Text)
	}
	return buf.Bytes()
}

// exportRun is what an export of a run writes: its events as JSONL, then
// the audit trail as JSONL.
func exportRun(t *testing.T, g *gated, runID string) []byte {
	t.Helper()
	evs, err := g.e.Events(t.Context(), runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := g.st.AuditEntries(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, ev := range evs {
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, en := range ents {
		if err := enc.Encode(en); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// readDB returns the bytes of the database file and of its -wal and -shm
// files, whichever exist.
func readDB(t *testing.T, db string) []byte {
	t.Helper()
	var out []byte
	for _, suffix := range []string{"", "-wal", "-shm"} {
		data, err := os.ReadFile(db + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, data...)
	}
	return out
}
