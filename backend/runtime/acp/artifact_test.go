package acp

import (
	"encoding/json"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"agenthub/backend"
)

// TestApprovedCreateOfAnAgentCLIBecomesArtifact: a Markdown file an ACP
// agent creates through an approved edit is handed to the run's artifact
// sink, read back from the workspace as it was written, as the built-in
// write_file's are (issue 18: what agent CLIs write through AgentHub counts
// the same way); a source file it creates is not.
func TestApprovedCreateOfAnAgentCLIBecomesArtifact(t *testing.T) {
	s := testSession(t, map[string]string{})
	var mu sync.Mutex
	var got []backend.ArtifactDraft
	env := backend.ToolEnv{WorkspaceRoot: s.Root, WorkspaceID: "ws", RunID: "run_1",
		Artifacts: func(d backend.ArtifactDraft) (backend.Artifact, error) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, d)
			return backend.Artifact{ID: "art_1", Kind: d.Kind}, nil
		}}
	for i, f := range []struct{ path, text string }{{"docs/notes.md", "# Notes\n"}, {"main.go", "package main\n"}} {
		p := s.newPermission(sdk.RequestPermissionRequest{ToolCall: sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId("c" + f.path),
			Kind: sdk.Ptr(sdk.ToolKindEdit), Content: []sdk.ToolCallContent{sdk.ToolDiffContent(s.Root+"/"+f.path, f.text)}},
			Options: []sdk.PermissionOption{{Kind: sdk.PermissionOptionKindAllowOnce, OptionId: "once"}}})
		call, err := s.proxyCall(p)
		if err != nil {
			t.Fatal(err)
		}
		var a permArgs
		_ = json.Unmarshal(call.Arguments, &a)
		if plans, res := s.planEdit(env, p, a, json.RawMessage(`{"decision":"approve_once"}`)); res != nil || len(plans) != 1 {
			t.Fatalf("%d: plan %+v", i, res)
		}
		if _, err := (client{s}).WriteTextFile(t.Context(), sdk.WriteTextFileRequest{Path: s.Root + "/" + f.path, Content: f.text}); err != nil {
			t.Fatalf("%s: write: %v", f.path, reqErr(err))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Kind != backend.ArtifactDocument || got[0].Path != "docs/notes.md" ||
		string(got[0].Content) != "# Notes\n" || got[0].Producer != ToolEdit {
		t.Fatalf("artifacts = %+v", got)
	}
}
