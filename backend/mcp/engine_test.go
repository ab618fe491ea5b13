package mcp

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/engine"
	"agenthub/backend/llm"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/llm/openai"
	"agenthub/backend/store"
)

// native is a run of the built-in runtime over the OpenAI wire format whose
// only tools are the helper MCP server's, under the real policy gate.
type native struct {
	e   *engine.Engine
	srv *llmtest.Server
	run backend.RunSummary
}

func startNative(t *testing.T, set *Set, turns ...llmtest.Turn) *native {
	t.Helper()
	return startNativeIn(t, t.TempDir(), set, turns...)
}

// startNativeIn starts the run in the workspace root (where a test may
// have written .agenthub/policy.toml).
func startNativeIn(t *testing.T, root string, set *Set, turns ...llmtest.Turn) *native {
	t.Helper()
	return startNativeOver(t, root, set, nil, turns...)
}

// startNativeOver starts the run under a profile with policy overrides.
func startNativeOver(t *testing.T, root string, set *Set, over *approval.Policy, turns ...llmtest.Turn) *native {
	t.Helper()
	srv := llmtest.NewOpenAI(turns...)
	t.Cleanup(srv.Close)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddWorkspace(t.Context(), backend.Workspace{ID: "ws_1", Name: "w", Path: root, DisplayPath: "w"},
		store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	model := llm.AsModel(llm.NewFallback(openai.New(openai.Config{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()}),
		llm.Retry{Attempts: 1}), llm.ModelConfig{Model: "m"})
	roots := func(string) (string, error) { return root, nil }
	e := engine.New(engine.Config{Store: st, Gate: approval.NewGate(roots), Roots: roots, Default: "test",
		Tools: map[string]backend.Tool{},
		Profiles: map[string]engine.Profile{"test": {Runtime: "native", Model: model, Source: set, Stop: engine.DefaultStop,
			Policy: over}}})
	if err := e.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Shutdown(ctx)
		_ = st.Close()
	})
	r, err := e.Start(t.Context(), engine.StartRequest{WorkspaceID: "ws_1", Task: "use the tools"})
	if err != nil {
		t.Fatal(err)
	}
	return &native{e: e, srv: srv, run: r}
}

func (n *native) wait(t *testing.T, want backend.RunState) backend.RunSummary {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r, err := n.e.Run(t.Context(), n.run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.State == want {
			return r
		}
		if r.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("run is %s (%+v), want %s", r.State, r.Failure, want)
		}
	}
}

func mcpCall(id, name, args string) llmtest.Turn {
	return llmtest.Turn{Calls: []llmtest.Call{{ID: id, Name: name, Args: []string{args}}}}
}

// seen reports whether the model's request number i carried text.
func (n *native) seen(t *testing.T, i int, text string) bool {
	t.Helper()
	reqs := n.srv.Requests()
	if len(reqs) <= i {
		t.Fatalf("%d requests, want more than %d", len(reqs), i)
	}
	return bytes.Contains(reqs[i].Raw, []byte(text))
}

// TestMCPToolApprovedThenModelSeesResult: the model is offered the MCP
// tools, a call asks (kind mcp, once-only decisions), and after approval
// the server's answer reaches the model.
func TestMCPToolApprovedThenModelSeesResult(t *testing.T) {
	set := NewSet([]Config{helperConfig(t, "demo", false)}, nil)
	defer set.Close()
	n := startNative(t, set, mcpCall("c1", "mcp__demo__echo", `{"text":"hello"}`), llmtest.Turn{Text: []string{"ok"}})
	n.wait(t, backend.RunNeedsApproval)
	if !n.seen(t, 0, `"name":"mcp__demo__echo"`) {
		t.Fatalf("the model was not offered the MCP tool")
	}
	aps, err := n.e.Approvals(t.Context(), n.run.ID)
	if err != nil || len(aps) != 1 {
		t.Fatalf("approvals: %v %v", aps, err)
	}
	ap := aps[0]
	want := []backend.DecisionKind{backend.ApproveOnce, backend.ApproveForRun, backend.AlwaysAllowWorkspace,
		backend.RejectAndTell, backend.RejectAndStop}
	if ap.Kind != ActionMCP || ap.Risk != backend.RiskHigh || !slices.Equal(ap.DecisionsOffered, want) {
		t.Errorf("approval: kind %s risk %s offered %v", ap.Kind, ap.Risk, ap.DecisionsOffered)
	}
	if _, err := n.e.Decide(t.Context(), backend.Decision{ApprovalID: ap.ID, Kind: backend.ApproveOnce,
		SubjectHash: ap.SubjectHash, Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	n.wait(t, backend.RunCompleted)
	if !n.seen(t, 1, "echo: hello") {
		t.Errorf("the model did not see the MCP result")
	}
}

func TestMCPToolRejected(t *testing.T) {
	set := NewSet([]Config{helperConfig(t, "demo", false)}, nil)
	defer set.Close()
	n := startNative(t, set, mcpCall("c1", "mcp__demo__spawn", `{}`), llmtest.Turn{Text: []string{"fine"}})
	n.wait(t, backend.RunNeedsApproval)
	aps, _ := n.e.Approvals(t.Context(), n.run.ID)
	if _, err := n.e.Decide(t.Context(), backend.Decision{ApprovalID: aps[0].ID, Kind: backend.RejectAndTell,
		SubjectHash: aps[0].SubjectHash, Reason: "no processes please", Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	n.wait(t, backend.RunCompleted)
	if !n.seen(t, 1, "rejected by the reviewer: no processes please") {
		t.Errorf("the model was not told of the rejection")
	}
}

// TestMCPReadOnlyAndCrash: with allow_read_only, an annotated read-only
// tool runs without a ticket; a server crash mid-call is a tool error the
// model sees, the run goes on, and the next call restarts the server.
func TestMCPReadOnlyAndCrash(t *testing.T) {
	set := NewSet([]Config{helperConfig(t, "demo", true)}, nil)
	defer set.Close()
	n := startNative(t, set, mcpCall("c1", "mcp__demo__crash", `{}`), mcpCall("c2", "mcp__demo__lookup", `{"key":"k"}`),
		llmtest.Turn{Text: []string{"done"}})
	n.wait(t, backend.RunCompleted)
	if !n.seen(t, 1, "crashing on purpose") || !n.seen(t, 1, "MCP tool mcp__demo__crash failed") {
		t.Errorf("the crash did not reach the model as a tool error")
	}
	if !n.seen(t, 2, "value of k is 42") {
		t.Errorf("the restarted server did not answer")
	}
	if aps, _ := n.e.Approvals(t.Context(), ""); len(aps) != 0 {
		t.Errorf("read-only calls asked: %v", aps)
	}
}

// TestEngineShutdownStopsServers: the engine closes its profiles' MCP
// servers when it shuts down, leaving no process behind.
func TestEngineShutdownStopsServers(t *testing.T) {
	set := NewSet([]Config{helperConfig(t, "demo", true)}, nil)
	n := startNative(t, set, mcpCall("c1", "mcp__demo__lookup", `{"key":"k"}`), llmtest.Turn{Text: []string{"done"}})
	n.wait(t, backend.RunCompleted)
	pid := set.servers[0].pid()
	if pid == 0 {
		t.Fatal("the server is not running")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := n.e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, "server")
}
