package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"agenthub/backend"
	"agenthub/backend/llm"
	"agenthub/backend/llm/anthropic"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/llm/openai"
	"agenthub/backend/store"
)

// bigTool returns n characters, so a test controls how much of the context
// one tool result takes.
type bigTool struct{}

func (bigTool) Spec() backend.ToolSpec { return backend.ToolSpec{Name: "big"} }
func (bigTool) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}
func (bigTool) Execute(_ context.Context, _ backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	var a struct{ N int }
	if err := json.Unmarshal(in.Arguments, &a); err != nil {
		return backend.ToolResult{}, err
	}
	return backend.ToolResult{Content: "BEGIN" + strings.Repeat("y", a.N) + "END"}, nil
}

// wire is one provider's side of a test: its scripted server and a client.
type wire struct {
	name     string
	server   func(...llmtest.Turn) *llmtest.Server
	client   func(s *llmtest.Server) llm.Client
	overflow llmtest.Turn
}

var wires = []wire{
	{name: "openai", server: llmtest.NewOpenAI, overflow: llmtest.OpenAIOverflow,
		client: func(s *llmtest.Server) llm.Client {
			return openai.New(openai.Config{BaseURL: s.URL + "/v1", HTTPClient: s.Client()})
		}},
	{name: "anthropic", server: llmtest.NewAnthropic, overflow: llmtest.AnthropicOverflow,
		client: func(s *llmtest.Server) llm.Client {
			return anthropic.New(anthropic.Config{BaseURL: s.URL, HTTPClient: s.Client()})
		}},
}

// contextRun runs one task against a scripted server through the real
// client, with a fallback model configured so a switch would show, and
// returns the run once it is terminal.
func contextRun(t *testing.T, w wire, window int, turns ...llmtest.Turn) (*fixture, *llmtest.Server, backend.RunSummary) {
	t.Helper()
	srv := w.server(turns...)
	t.Cleanup(srv.Close)
	model := llm.AsModel(llm.NewFallback(w.client(srv), llm.Retry{Attempts: 1}, "backup-model"),
		llm.ModelConfig{Model: "primary-model", ContextWindow: window})
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddWorkspace(t.Context(), backend.Workspace{ID: "ws_1", Name: "w", Path: "/abs/w", DisplayPath: "~/w"},
		store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, write: &writeTool{}}
	f.e = New(Config{Store: st, Default: "test", Tools: map[string]backend.Tool{"echo": echoTool{}, "big": bigTool{}},
		Profiles: map[string]Profile{"test": {Runtime: "native", Model: model, Stop: DefaultStop}}})
	t.Cleanup(func() { f.close(t) })
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "TASK-MARKER: fix the bug"})
	if err != nil {
		t.Fatal(err)
	}
	f.waitDone(t, r.ID)
	r, err = f.e.Run(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	return f, srv, r
}

func (f *fixture) waitDone(t *testing.T, runID string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := f.e.Run(t.Context(), runID); err == nil && r.State.Terminal() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("run %s did not end", runID)
}

// compactions returns the payloads of run.context.compacted.
func (f *fixture) compactions(t *testing.T, runID string) []map[string]any {
	t.Helper()
	evs, err := f.e.Events(t.Context(), runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, ev := range evs {
		if ev.Type == backend.EvContextCompacted {
			var p map[string]any
			if err := json.Unmarshal(ev.Payload, &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	return out
}

// checkModels asserts that every request asked for the profile's model: an
// overflow never switches to the fallback (CX5).
func checkModels(t *testing.T, reqs []llmtest.Request) {
	t.Helper()
	for i, r := range reqs {
		if r.Body["model"] != "primary-model" {
			t.Errorf("request %d asked for model %v, want primary-model", i, r.Body["model"])
		}
	}
}

func bigCall(id string, n int) llmtest.Turn {
	return llmtest.Turn{Calls: []llmtest.Call{{ID: id, Name: "big", Args: []string{`{"n":` + itoa(n) + `}`}}}}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func text(s string) llmtest.Turn { return llmtest.Turn{Text: []string{s}} }

// TestOverflowCompactsThenSucceeds is CX4's main route for both wire
// formats: an overflow, one summary by the same model, the retry with the
// summary in place of the older turns, success.
func TestOverflowCompactsThenSucceeds(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			f, srv, r := contextRun(t, w, 0, bigCall("c1", 10), w.overflow, text("SUMMARY-ONE"), text("done"))
			if r.State != backend.RunCompleted {
				t.Fatalf("run %s (%+v), want Completed", r.State, r.Failure)
			}
			reqs := srv.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests, want 4 (step, overflow, summary, retry)", len(reqs))
			}
			checkModels(t, reqs)
			if _, ok := reqs[2].Body["tools"]; ok || !bytes.Contains(reqs[2].Raw, []byte("TASK-MARKER")) {
				t.Errorf("summary request: want the older turns and no tools:\n%s", reqs[2].Raw)
			}
			if bytes.Contains(reqs[3].Raw, []byte("TASK-MARKER")) || !bytes.Contains(reqs[3].Raw, []byte("SUMMARY-ONE")) {
				t.Errorf("retry: want the summary in place of the task:\n%s", reqs[3].Raw)
			}
			if !bytes.Contains(reqs[3].Raw, []byte("BEGIN")) {
				t.Errorf("retry lost the kept tool result:\n%s", reqs[3].Raw)
			}
			cs := f.compactions(t, r.ID)
			if len(cs) != 1 || cs[0]["method"] != "summary" || cs[0]["compaction"] != 1.0 || cs[0]["summary"] != "SUMMARY-ONE" {
				t.Errorf("run.context.compacted = %v", cs)
			}
			msgs, err := f.st.Messages(t.Context(), r.SessionID)
			if err != nil || len(msgs) == 0 || !strings.Contains(msgs[0].Text, "TASK-MARKER") {
				t.Errorf("the stored transcript was rewritten (CX6): %v %v", msgs, err)
			}
		})
	}
}

// TestOverflowPersistsFails: three compactions, then one truncation of the
// oversized tool result, then Failed(context_overflow); no model switch.
func TestOverflowPersistsFails(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			o := w.overflow
			f, srv, r := contextRun(t, w, 0, bigCall("c1", 50_000),
				o, text("S1"), o, text("S2"), o, text("S3"), o, o)
			if r.State != backend.RunFailed || r.Failure == nil || r.Failure.Code != backend.FailContextOverflow {
				t.Fatalf("run %s %+v, want Failed(context_overflow)", r.State, r.Failure)
			}
			reqs := srv.Requests()
			if len(reqs) != 9 || srv.Remaining() != 0 {
				t.Fatalf("%d requests (%d turns left), want 9: step, 4 attempts with 3 summaries between, 1 after truncation",
					len(reqs), srv.Remaining())
			}
			checkModels(t, reqs)
			var methods []string
			for _, c := range f.compactions(t, r.ID) {
				methods = append(methods, c["method"].(string))
			}
			if strings.Join(methods, ",") != "summary,summary,summary,truncate_tool_results" {
				t.Errorf("compaction events: %v", methods)
			}
			last := reqs[8].Raw
			if !bytes.Contains(last, []byte("were cut to fit")) || !bytes.Contains(last, []byte("BEGIN")) ||
				!bytes.Contains(last, []byte("END")) || len(last) >= len(reqs[7].Raw) {
				t.Errorf("the last attempt did not carry the truncated result (%d vs %d bytes)", len(last), len(reqs[7].Raw))
			}
			if !bytes.Contains(reqs[6].Raw, []byte("S2")) || !bytes.Contains(reqs[7].Raw, []byte("S3")) {
				t.Errorf("later summaries do not build on earlier ones")
			}
		})
	}
}

// TestSummaryOverflowFailsAtOnce is CX4 step 1: the summary request itself
// overflows, the run fails without another attempt.
func TestSummaryOverflowFailsAtOnce(t *testing.T) {
	w := wires[0]
	f, srv, r := contextRun(t, w, 0, bigCall("c1", 10), w.overflow, w.overflow)
	if r.State != backend.RunFailed || r.Failure.Code != backend.FailContextOverflow {
		t.Fatalf("run %s %+v", r.State, r.Failure)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	if cs := f.compactions(t, r.ID); len(cs) != 0 {
		t.Errorf("compaction events after a failed compaction: %v", cs)
	}
}

// TestNothingToCompactFails: a first request that overflows has no older
// turns to summarise and no tool result to cut.
func TestNothingToCompactFails(t *testing.T) {
	w := wires[1]
	_, srv, r := contextRun(t, w, 0, w.overflow)
	if r.State != backend.RunFailed || r.Failure.Code != backend.FailContextOverflow {
		t.Fatalf("run %s %+v", r.State, r.Failure)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestPrecheckTruncatesWithoutCompacting is CX3: with a known window, a
// request whose oversized tool result holds enough reducible text is
// truncated before it is sent; no summary, no overflow.
func TestPrecheckTruncatesWithoutCompacting(t *testing.T) {
	f, srv, r := contextRun(t, wires[0], 8000, bigCall("c1", 40_000), text("done"))
	if r.State != backend.RunCompleted {
		t.Fatalf("run %s %+v", r.State, r.Failure)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !bytes.Contains(reqs[1].Raw, []byte("were cut to fit")) || len(reqs[1].Raw) > 20_000 {
		t.Fatalf("%d requests; the second is %d bytes", len(reqs), len(reqs[len(reqs)-1].Raw))
	}
	cs := f.compactions(t, r.ID)
	if len(cs) != 1 || cs[0]["method"] != "truncate_tool_results" || cs[0]["reason"] != "precheck" {
		t.Errorf("run.context.compacted = %v", cs)
	}
}

// TestPrecheckCompacts: a window too small for the turns, with nothing to
// truncate, compacts before sending.
func TestPrecheckCompacts(t *testing.T) {
	long := strings.Repeat("w ", 3000)
	f, srv, r := contextRun(t, wires[0], 2048,
		llmtest.Turn{Text: []string{long}, Calls: []llmtest.Call{{ID: "c1", Name: "echo", Args: []string{`{}`}}}},
		text("SHORT SUMMARY"), text("done"))
	if r.State != backend.RunCompleted {
		t.Fatalf("run %s %+v", r.State, r.Failure)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !bytes.Contains(reqs[2].Raw, []byte("SHORT SUMMARY")) {
		t.Fatalf("%d requests", len(reqs))
	}
	if cs := f.compactions(t, r.ID); len(cs) != 1 || cs[0]["reason"] != "precheck" {
		t.Errorf("run.context.compacted = %v", cs)
	}
}

func TestTruncateTextKeepsHeadTailAndRunes(t *testing.T) {
	s := strings.Repeat("é", 5000) + "TAIL"
	got := truncateText(s, 1000)
	if len(got) > 1000 || !strings.HasSuffix(got, "TAIL") || !strings.Contains(got, "were cut") {
		t.Fatalf("len %d: %q…", len(got), got[:40])
	}
	if !utf8.ValidString(got) {
		t.Errorf("truncation split a rune")
	}
	if truncateText("short", 10) != "short" {
		t.Errorf("short text changed")
	}
}

// TestHardTimeoutExtendedDuringCompaction is CC8: the run's 1 s timeout
// would expire while the summary request hangs; the deadline is extended
// by the compaction timeout, so the compaction's own cap ends it (CX2) and
// the run fails with context_overflow, not run_timeout.
func TestHardTimeoutExtendedDuringCompaction(t *testing.T) {
	old := compactionTimeout
	compactionTimeout = 1500 * time.Millisecond
	defer func() { compactionTimeout = old }()
	w := wires[0]
	srv := w.server(bigCall("c1", 10), w.overflow, llmtest.Turn{Text: []string{"summ"}, Hang: true})
	defer srv.Close()
	model := llm.AsModel(llm.NewFallback(w.client(srv), llm.Retry{Attempts: 1}), llm.ModelConfig{Model: "primary-model"})
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddWorkspace(t.Context(), backend.Workspace{ID: "ws_1", Name: "w", Path: "/abs/w", DisplayPath: "~/w"},
		store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st}
	f.e = New(Config{Store: st, Default: "test", Tools: map[string]backend.Tool{"big": bigTool{}},
		Profiles: map[string]Profile{"test": {Runtime: "native", Model: model, Stop: DefaultStop, RunTimeout: time.Second}}})
	defer f.close(t)
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	f.waitDone(t, r.ID)
	r, _ = f.e.Run(t.Context(), r.ID)
	if r.State != backend.RunFailed || r.Failure == nil || r.Failure.Code != backend.FailContextOverflow {
		t.Fatalf("run %s %+v, want Failed(context_overflow) after the compaction's cap", r.State, r.Failure)
	}
}

// TestDuplicateCallIDsAreRenamed: a model that reuses a call id of an
// earlier step (or sends none) still gets every call executed and paired.
func TestDuplicateCallIDsAreRenamed(t *testing.T) {
	m := &script{steps: []backend.ModelResponse{
		{Calls: []backend.ToolCallRequest{call("c1", "echo", `{"n":1}`)}},
		{Calls: []backend.ToolCallRequest{call("c1", "echo", `{"n":2}`), call("", "echo", `{"n":3}`)}},
		{Text: "done"}}}
	f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), m, 4)
	defer f.close(t)
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	f.waitState(t, r.ID, backend.RunCompleted)
	msgs, _ := f.st.Messages(t.Context(), r.SessionID)
	ids := map[string]bool{}
	results := 0
	for _, m := range msgs {
		for _, c := range m.Calls {
			if ids[c.ID] || c.ID == "" {
				t.Errorf("call id %q twice or empty", c.ID)
			}
			ids[c.ID] = true
		}
		if m.Role == backend.RoleTool {
			results++
			if !ids[m.ToolCallID] {
				t.Errorf("result for unknown call %q", m.ToolCallID)
			}
		}
	}
	if len(ids) != 3 || results != 3 {
		t.Errorf("%d calls, %d results", len(ids), results)
	}
}
