package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/engine"
	"agenthub/backend/llm"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/llm/openai"
	"agenthub/backend/store"
)

// family is a parent run whose delegate calls start children on the same
// profile; parent and children share one scripted OpenAI server, whose
// turns they consume in order (the parent waits while its child runs).
type family struct {
	f      *fixture
	e      *engine.Engine
	st     *store.Store
	srv    *llmtest.Server
	parent backend.RunSummary
}

func startFamily(t *testing.T, turns ...llmtest.Turn) *family {
	t.Helper()
	f := newFixture(t)
	srv := llmtest.NewOpenAI(turns...)
	t.Cleanup(srv.Close)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddWorkspace(t.Context(), backend.Workspace{ID: "ws_1", Name: "w", Path: f.root, DisplayPath: "w"},
		store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	model := llm.AsModel(llm.NewFallback(openai.New(openai.Config{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()}),
		llm.Retry{Attempts: 1}), llm.ModelConfig{Model: "m"})
	// GlobalLimit 1: the parent holds the only global slot while its child
	// runs and waits for approval; the sub-agent lane must not need it.
	e := engine.New(engine.Config{Store: st, Tools: f.tools, Default: "test", GlobalLimit: 1,
		Profiles: map[string]engine.Profile{"test": {Runtime: "native", Model: model, Stop: engine.DefaultStop,
			Tools: []string{Delegate, WriteFile, ListDir}, StateKeys: []string{"k"}}},
		Roots: func(string) (string, error) { return f.root, nil }})
	if err := e.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Shutdown(ctx)
		_ = st.Close()
	})
	run, err := e.Start(t.Context(), engine.StartRequest{WorkspaceID: "ws_1", Task: "PARENT-TASK", Actor: "me",
		Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	return &family{f: f, e: e, st: st, srv: srv, parent: run}
}

func (fm *family) wait(t *testing.T, id string, want backend.RunState) backend.RunSummary {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r, err := fm.e.Run(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.State == want {
			return r
		}
		if r.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("run %s is %s (%+v), want %s", id, r.State, r.Failure, want)
		}
	}
}

// child returns the one run that is not the parent, once it exists.
func (fm *family) child(t *testing.T) backend.RunSummary {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		rs, err := fm.e.Runs(t.Context(), store.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.ID != fm.parent.ID {
				return r
			}
		}
	}
	t.Fatal("no child run")
	return backend.RunSummary{}
}

func (fm *family) events(t *testing.T, runID string, typ backend.EventType) []map[string]any {
	t.Helper()
	evs, err := fm.e.Events(t.Context(), runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, ev := range evs {
		if ev.Type == typ {
			var p map[string]any
			_ = json.Unmarshal(ev.Payload, &p)
			out = append(out, p)
		}
	}
	return out
}

func delegateCall(args string) llmtest.Turn { return delegateCallID("d1", args) }

func delegateCallID(id, args string) llmtest.Turn {
	return llmtest.Turn{Calls: []llmtest.Call{{ID: id, Name: Delegate, Args: []string{args}}}}
}

func say(text string) llmtest.Turn { return llmtest.Turn{Text: []string{text}} }

// TestDelegateSeedStreamExport is SA1, SA2, SA3, SA6 and SA7: the child
// starts fresh with the seed, streams its text as the parent call's
// run.tool.delta, records state, and the parent gets the export.
func TestDelegateSeedStreamExport(t *testing.T) {
	fm := startFamily(t,
		delegateCall(`{"task":"CHILD-TASK count","seed":{"k":1}}`),
		llmtest.Turn{Text: []string{"child ", "says hi"}, Calls: []llmtest.Call{{ID: "s1", Name: "set_state", Args: []string{`{"key":"k","value":2}`}}}},
		say("child done"),
		say("parent done"))
	fm.wait(t, fm.parent.ID, backend.RunCompleted)
	reqs := fm.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	first := reqs[1].Raw
	if !bytes.Contains(first, []byte(`CHILD-TASK count`)) || !bytes.Contains(first, []byte(`seeded by the parent agent: {\"k\":1}`)) ||
		bytes.Contains(first, []byte("PARENT-TASK")) {
		t.Errorf("the child's first request is not fresh with the seed:\n%s", first)
	}
	if bytes.Contains(first, []byte(`"name":"delegate"`)) || !bytes.Contains(first, []byte(`"name":"set_state"`)) {
		t.Errorf("child tools: want set_state and no delegate")
	}
	var res backend.DelegateResult
	if err := json.Unmarshal([]byte(toolContent(t, reqs[3])), &res); err != nil {
		t.Fatalf("parent's tool result: %v", err)
	}
	if res.Status != backend.RunCompleted || res.Response != "child done" || string(res.State["k"]) != "2" {
		t.Errorf("result %+v", res)
	}
	var streamed strings.Builder
	for _, d := range fm.events(t, fm.parent.ID, backend.EvToolDelta) {
		if d["toolCallId"] != "d1" {
			t.Errorf("delta keyed %v", d["toolCallId"])
		}
		streamed.WriteString(d["text"].(string))
	}
	if streamed.String() != "child says hichild done" {
		t.Errorf("streamed %q", streamed.String())
	}
	created := fm.events(t, res.ChildRunID, backend.EvRunCreated)
	if len(created) != 1 || created[0]["parentRunId"] != fm.parent.ID || created[0]["parentToolCallId"] != "d1" {
		t.Errorf("child run.created %v", created)
	}
	for _, d := range fm.events(t, fm.parent.ID, backend.EvMessageDelta) {
		if strings.Contains(d["text"].(string), "child") {
			t.Errorf("the child wrote the parent's message stream: %v", d)
		}
	}
}

// toolContent is the content of the last tool message of an OpenAI request.
func toolContent(t *testing.T, r llmtest.Request) string {
	t.Helper()
	msgs, _ := r.Body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m["role"] == "tool" {
			s, _ := m["content"].(string)
			return s
		}
	}
	t.Fatal("no tool message")
	return ""
}

// TestDelegateChildErrorIsAResult: a child that fails (its model rejects the
// key) is reported to the parent, which goes on (SA5).
func TestDelegateChildErrorIsAResult(t *testing.T) {
	fm := startFamily(t, delegateCall(`{"task":"x"}`), llmtest.OpenAIUnauthorized, say("parent carries on"))
	fm.wait(t, fm.parent.ID, backend.RunCompleted)
	var res backend.DelegateResult
	if err := json.Unmarshal([]byte(toolContent(t, fm.srv.Requests()[2])), &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != backend.RunFailed || res.Failure == nil || res.Failure.Code != backend.FailRuntimeUnavailable || res.State != nil {
		t.Errorf("result %+v", res)
	}
}

// TestDelegateUnknownSeedKeyFailsChild is SA3: the child fails before its
// first step; the parent does not.
func TestDelegateUnknownSeedKeyFailsChild(t *testing.T) {
	fm := startFamily(t, delegateCall(`{"task":"x","seed":{"zzz":1}}`), say("ok"))
	fm.wait(t, fm.parent.ID, backend.RunCompleted)
	reqs := fm.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests: the child must not reach its model", len(reqs))
	}
	var res backend.DelegateResult
	_ = json.Unmarshal([]byte(toolContent(t, reqs[1])), &res)
	if res.Status != backend.RunFailed || res.Failure == nil || !strings.Contains(res.Failure.Message, `"zzz"`) {
		t.Errorf("result %+v", res)
	}
}

// TestDelegateCancelParentCancelsChild is SA4.
func TestDelegateCancelParentCancelsChild(t *testing.T) {
	fm := startFamily(t, delegateCall(`{"task":"x"}`), llmtest.Turn{Text: []string{"thinking"}, Hang: true})
	child := fm.child(t)
	fm.wait(t, child.ID, backend.RunRunning)
	for deadline := time.Now().Add(30 * time.Second); len(fm.srv.Requests()) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the child never asked its model")
		}
	}
	r, err := fm.e.Cancel(t.Context(), fm.parent.ID)
	if err != nil || r.State != backend.RunCancelled || r.DoneReason != backend.DoneUserCancelled {
		t.Fatalf("parent %+v %v", r, err)
	}
	c := fm.wait(t, child.ID, backend.RunCancelled)
	if c.DoneReason != backend.DoneParentCancelled {
		t.Errorf("child done reason %q", c.DoneReason)
	}
}

// TestDelegateChildAsksForApproval is SA8 and SA9: the child's write asks
// under its own run while the parent's call stays Running, with one global
// slot held by the parent.
func TestDelegateChildAsksForApproval(t *testing.T) {
	fm := startFamily(t, delegateCall(`{"task":"write it","tools":["write_file"]}`),
		llmtest.Turn{Calls: []llmtest.Call{{ID: "w1", Name: WriteFile, Args: []string{`{"path":"a.txt","content":"x"}`}}}},
		say("wrote it"), say("parent done"))
	child := fm.child(t)
	fm.wait(t, child.ID, backend.RunNeedsApproval)
	if r, _ := fm.e.Run(t.Context(), fm.parent.ID); r.State != backend.RunRunning {
		t.Errorf("parent is %s while its child waits", r.State)
	}
	aps, err := fm.e.Approvals(t.Context(), "")
	if err != nil || len(aps) != 1 || aps[0].RunID != child.ID {
		t.Fatalf("approvals %+v %v", aps, err)
	}
	if viaParent, err := fm.e.Approvals(t.Context(), fm.parent.ID); err != nil || len(viaParent) != 1 || viaParent[0].ID != aps[0].ID {
		t.Errorf("the parent's approvals do not show its child's: %+v %v", viaParent, err)
	}
	if _, err := fm.e.Decide(t.Context(), backend.Decision{ApprovalID: aps[0].ID, Kind: backend.ApproveOnce,
		SubjectHash: aps[0].SubjectHash, Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	fm.wait(t, fm.parent.ID, backend.RunCompleted)
	if got := fm.f.read(t, "a.txt"); got != "x" {
		t.Errorf("a.txt = %q", got)
	}
	if !bytes.Contains(fm.srv.Requests()[3].Raw, []byte(`Completed`)) {
		t.Errorf("parent did not see the completed child")
	}
}

func TestDelegateRefusesUnknownTool(t *testing.T) {
	fm := startFamily(t, delegateCall(`{"task":"x","tools":["run_shell"]}`), say("ok"))
	fm.wait(t, fm.parent.ID, backend.RunCompleted)
	if c := toolContent(t, fm.srv.Requests()[1]); !strings.Contains(c, `"run_shell" is not available to sub-agents`) {
		t.Errorf("tool result %q", c)
	}
}

// TestDelegateChildInterruptedAtRestart: a child waiting for approval when
// AgentHub stops ends run_interrupted at the next start instead of resuming
// as a run of its own with its profile's full tools.
func TestDelegateChildInterruptedAtRestart(t *testing.T) {
	fm := startFamily(t, delegateCall(`{"task":"write it","tools":["write_file"]}`),
		llmtest.Turn{Calls: []llmtest.Call{{ID: "w1", Name: WriteFile, Args: []string{`{"path":"a.txt","content":"x"}`}}}})
	child := fm.child(t)
	fm.wait(t, child.ID, backend.RunNeedsApproval)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := fm.e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Config{Store: fm.st, Tools: fm.f.tools, Default: "test",
		Profiles: map[string]engine.Profile{"test": {Runtime: "native", Model: nil, Stop: engine.DefaultStop,
			Tools: []string{Delegate, WriteFile}}}})
	if err := e.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown(context.Background())
	r, err := e.Run(t.Context(), child.ID)
	if err != nil || r.State != backend.RunFailed || r.Failure == nil || r.Failure.Code != backend.FailRunInterrupted {
		t.Fatalf("child after restart: %+v %v", r, err)
	}
	if aps, _ := e.Approvals(t.Context(), child.ID); len(aps) != 0 {
		t.Errorf("the child's ticket is still open: %v", aps)
	}
}

// TestDelegateNamedProfile: a child may run another profile (its own model
// and tools); an unknown profile is a tool error the parent's model reads.
func TestDelegateNamedProfile(t *testing.T) {
	fm := startFamily(t, delegateCall(`{"task":"look","profile":"reader"}`), delegateCallID("d2", `{"task":"x","profile":"nope"}`), say("done"))
	other := llmtest.NewOpenAI(say("read it"))
	defer other.Close()
	model := llm.AsModel(llm.NewFallback(openai.New(openai.Config{BaseURL: other.URL + "/v1", HTTPClient: other.Client()}),
		llm.Retry{Attempts: 1}), llm.ModelConfig{Model: "reader-model"})
	fm.e.AddProfile("reader", engine.Profile{Runtime: "native", Model: model, Stop: engine.DefaultStop, Tools: []string{ListDir}})
	fm.wait(t, fm.parent.ID, backend.RunCompleted)
	reqs := other.Requests()
	if len(reqs) != 1 || !bytes.Contains(reqs[0].Raw, []byte(`"name":"list_dir"`)) || bytes.Contains(reqs[0].Raw, []byte(`"name":"write_file"`)) {
		t.Fatalf("the reader child's requests: %d", len(reqs))
	}
	var res backend.DelegateResult
	main := fm.srv.Requests()
	_ = json.Unmarshal([]byte(toolContent(t, main[1])), &res)
	if res.Status != backend.RunCompleted || res.Response != "read it" {
		t.Errorf("result %+v", res)
	}
	if c := toolContent(t, main[2]); !strings.Contains(c, `unknown profile "nope"`) {
		t.Errorf("unknown profile: %q", c)
	}
}
