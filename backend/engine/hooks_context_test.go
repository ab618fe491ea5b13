package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
	"agenthub/backend/llm"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/llm/openai"
)

// contextHook adds context to every request and annotates every response.
type contextHook struct{ name string }

func (h contextHook) HookName() string { return h.name }
func (h contextHook) BeforeInference(_ context.Context, v backend.StepView) backend.BeforeInference {
	return backend.BeforeInference{Context: []string{fmt.Sprintf("%s context for step %d", h.name, v.Step)}}
}
func (h contextHook) AfterInference(_ context.Context, v backend.InferenceView) backend.AfterInference {
	var out backend.AfterInference
	for _, c := range v.Calls {
		out.Annotations = append(out.Annotations, backend.Annotation{Label: "reviewed", Text: h.name + " saw " + c.Name,
			ToolCallID: c.ID})
	}
	return out
}

// TestHookContextAndAnnotations: BeforeInference context reaches the model
// server in the system text of that request only, after the profile's
// system prompt and in registration order, and never enters the
// transcript; AfterInference annotations are recorded as
// run.inference.annotated with the response.
func TestHookContextAndAnnotations(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Turn{Calls: []llmtest.Call{{ID: "c1", Name: "echo", Args: []string{`{"x":1}`}}}},
		llmtest.Turn{Text: []string{"done"}})
	defer srv.Close()
	model := llm.AsModel(llm.NewFallback(openai.New(openai.Config{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()}),
		llm.Retry{Attempts: 1}), llm.ModelConfig{Model: "m", System: "You are careful."})
	f := newHookProfile(t, filepath.Join(t.TempDir(), "a.db"),
		Profile{Runtime: "native", Model: model, Stop: DefaultStop, Hooks: []backend.Hook{contextHook{name: "profile"}}},
		contextHook{name: "engine"})
	defer f.close(t)
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "go"})
	if err != nil {
		t.Fatal(err)
	}
	f.waitState(t, r.ID, backend.RunCompleted)

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, want := range []string{
		"You are careful.\n\nengine context for step 1\n\nprofile context for step 1",
		"You are careful.\n\nengine context for step 2\n\nprofile context for step 2",
	} {
		if got := systemText(t, reqs[i]); got != want {
			t.Errorf("request %d system text %q, want %q", i+1, got, want)
		}
	}
	if strings.Contains(string(reqs[1].Raw), "step 1") {
		t.Error("the second request carried the first step's context")
	}

	evs, err := f.e.Events(t.Context(), r.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var msgID string
	var got []backend.InferenceAnnotated
	for i, ev := range evs {
		if strings.Contains(string(ev.Payload), "context for step") {
			t.Errorf("event %s holds hook context: %s", ev.Type, ev.Payload)
		}
		switch ev.Type {
		case backend.EvMessageCompleted:
			if msgID == "" {
				var p struct{ MessageID string }
				_ = json.Unmarshal(ev.Payload, &p)
				msgID = p.MessageID
			}
		case backend.EvInferenceAnnotated:
			var a backend.InferenceAnnotated
			if err := json.Unmarshal(ev.Payload, &a); err != nil {
				t.Fatal(err)
			}
			got = append(got, a)
			if next := evs[i+1].Type; next != backend.EvInferenceAnnotated && next != backend.EvToolCall {
				t.Errorf("annotations are followed by %s, want the step's calls", next)
			}
		}
	}
	want := []backend.InferenceAnnotated{
		{MessageID: msgID, Step: 1, Hook: "engine", Annotations: []backend.Annotation{{Label: "reviewed", Text: "engine saw echo", ToolCallID: "c1"}}},
		{MessageID: msgID, Step: 1, Hook: "profile", Annotations: []backend.Annotation{{Label: "reviewed", Text: "profile saw echo", ToolCallID: "c1"}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	msgs, err := f.st.Messages(t.Context(), r.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if strings.Contains(m.Text, "context for step") {
			t.Errorf("the transcript holds hook context: %+v", m)
		}
	}
}

// systemText is the system message of an OpenAI chat request.
func systemText(t *testing.T, r llmtest.Request) string {
	t.Helper()
	msgs, _ := r.Body["messages"].([]any)
	for _, m := range msgs {
		if m, ok := m.(map[string]any); ok && m["role"] == "system" {
			s, _ := m["content"].(string)
			return s
		}
	}
	t.Fatalf("no system message in %s", r.Raw)
	return ""
}
