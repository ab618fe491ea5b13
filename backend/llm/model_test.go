package llm_test

import (
	"encoding/json"
	"testing"

	"agenthub/backend"
	"agenthub/backend/llm"
	"agenthub/backend/llm/llmtest"
)

// TestCallIDsUniqueInTheConversation: a server that numbers calls per turn
// ("call_0" again), sends none, or sends one neither wire format accepts
// gets fresh ids; a good new id is kept.
func TestCallIDsUniqueInTheConversation(t *testing.T) {
	s := llmtest.NewOpenAI(llmtest.Turn{Calls: []llmtest.Call{
		{ID: "call_0", Name: "a"}, {ID: "", Name: "b"}, {ID: "bad id!", Name: "c"}, {ID: "call_9", Name: "d"}}})
	defer s.Close()
	m := llm.AsModel(openaiClient(s), llm.ModelConfig{Model: "m"})
	history := []backend.Message{{Role: backend.RoleUser, Text: "hi"},
		{Role: backend.RoleAssistant, Calls: []backend.ToolCallRequest{{ID: "call_0", Name: "a", Arguments: json.RawMessage(`{}`)}}},
		{Role: backend.RoleTool, ToolCallID: "call_0", Text: "ok"}}
	resp, err := m.Stream(t.Context(), backend.ModelRequest{Messages: history}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{"call_0": true}
	for i, c := range resp.Calls {
		if seen[c.ID] || c.ID == "" || c.ID == "bad id!" {
			t.Errorf("call %d (%s) has id %q", i, c.Name, c.ID)
		}
		seen[c.ID] = true
	}
	if resp.Calls[3].ID != "call_9" {
		t.Errorf("a good id was replaced: %q", resp.Calls[3].ID)
	}
}
