package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/patch"
	"agenthub/workspace"
)

func testEnv(t *testing.T, files map[string]string) backend.ToolEnv {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return backend.ToolEnv{RunID: "run_1", WorkspaceID: "ws_1", WorkspaceRoot: root}
}

func proxyArgs(t *testing.T, tool string, input map[string]any, outside ...string) json.RawMessage {
	t.Helper()
	in, _ := json.Marshal(input)
	b, err := json.Marshal(callArgs{Session: "cc1", Request: "r1", Tool: tool, Input: in, Outside: outside})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const twoParts = "alpha\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nomega\n"

func TestFileActionsAreStagedPatches(t *testing.T) {
	env := testEnv(t, map[string]string{"a.txt": twoParts, "README.md": "hello world\n"})
	tests := []struct {
		name, tool string
		input      map[string]any
		wantTitle  string
		wantDiff   []string
	}{
		{"write new file", "Write", map[string]any{"file_path": "dir/new.txt", "content": "fresh\n"},
			"Create dir/new.txt", []string{"+fresh"}},
		{"edit", "Edit", map[string]any{"file_path": "README.md", "old_string": "world", "new_string": "there"},
			"Edit README.md", []string{"-hello world", "+hello there"}},
		{"multi edit", "MultiEdit", map[string]any{"file_path": "a.txt", "edits": []map[string]any{
			{"old_string": "alpha", "new_string": "ALPHA"}, {"old_string": "omega", "new_string": "OMEGA"}}},
			"Edit a.txt", []string{"-alpha", "+ALPHA", "-omega", "+OMEGA"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := Tools()[proxyName(tt.tool)]
			a, err := tool.Action(t.Context(), env, proxyArgs(t, tt.tool, tt.input))
			if err != nil {
				t.Fatal(err)
			}
			if a.Kind != backend.ActionPatch || a.Title != tt.wantTitle {
				t.Fatalf("action: %s %q", a.Kind, a.Title)
			}
			var pv patch.Preview
			if err := json.Unmarshal(a.Preview, &pv); err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.wantDiff {
				if !strings.Contains(pv.Unified, want) {
					t.Errorf("diff lacks %q:\n%s", want, pv.Unified)
				}
			}
			if strings.Contains(string(a.Preview)+string(a.Subject), env.WorkspaceRoot) {
				t.Error("the preview or subject names the workspace root")
			}
			var subj map[string]any
			_ = json.Unmarshal(a.Subject, &subj)
			if subj["kind"] != "patch" || subj["postimage"] != pv.Postimage || subj["workspace"] != "ws_1" {
				t.Errorf("subject: %v", subj)
			}
			again, _ := tool.Action(t.Context(), env, proxyArgs(t, tt.tool, tt.input))
			if string(again.Subject) != string(a.Subject) {
				t.Error("Action is not deterministic: the engine's re-check would see drift")
			}
		})
	}
}

func TestFileActionsRefuse(t *testing.T) {
	env := testEnv(t, map[string]string{"README.md": "x x\n", ".env": "KEY=1\n", ".git/config": "[core]\n"})
	w := Tools()[ToolWrite]
	if _, err := w.Action(t.Context(), env, proxyArgs(t, "Write", map[string]any{"content": "x"}, "file_path")); backend.CodeOf(err) != backend.FailOutsideAllowlist {
		t.Errorf("outside: %v", err)
	}
	if a, err := w.Action(t.Context(), env, proxyArgs(t, "Write", map[string]any{"file_path": ".env", "content": "x"})); err != nil || a.Kind != backend.ActionSecret {
		t.Errorf("secret: %v %v", a, err)
	}
	if _, err := w.Action(t.Context(), env, proxyArgs(t, "Write", map[string]any{"file_path": ".git/config", "content": "x"})); err == nil || !strings.Contains(err.Error(), "protected") {
		t.Errorf("protected: %v", err)
	}
	e := Tools()[ToolEdit]
	for input, want := range map[string]string{
		`{"file_path":"README.md","old_string":"nope","new_string":"y"}`:      "not found",
		`{"file_path":"README.md","old_string":"x","new_string":"y"}`:         "matches 2 times",
		`{"file_path":"missing.md","old_string":"x","new_string":"y"}`:        "does not exist",
		`{"file_path":"README.md","old_string":"x x\n","new_string":"x x\n"}`: "identical",
	} {
		var m map[string]any
		_ = json.Unmarshal([]byte(input), &m)
		if _, err := e.Action(t.Context(), env, proxyArgs(t, "Edit", m)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", input, err, want)
		}
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(`{"file_path":"README.md","old_string":"x","new_string":"y","replace_all":true}`), &m)
	if a, err := e.Action(t.Context(), env, proxyArgs(t, "Edit", m)); err != nil || !strings.Contains(string(a.Preview), "+y y") {
		t.Errorf("replace_all: %v", err)
	}
}

// TestPartialApprovalNarrowsTheInput: with one of two hunks approved, the
// input sent back to Claude Code writes only that hunk, computed from the
// same pre-image, for Write and for Edit.
func TestPartialApprovalNarrowsTheInput(t *testing.T) {
	env := testEnv(t, map[string]string{"a.txt": twoParts})
	w, err := workspace.Open(env.WorkspaceRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	next := strings.Replace(strings.Replace(twoParts, "alpha", "ALPHA", 1), "omega", "OMEGA", 1)
	c, err := propose(w, "Write", fileInput{FilePath: "a.txt", Content: &next})
	if err != nil {
		t.Fatal(err)
	}
	resume := json.RawMessage(`{"hunks":[{"path":"a.txt","index":0}],"reason":"keep omega"}`)
	part, sel, err := patch.Narrow(c, resume)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(twoParts, "alpha", "ALPHA", 1)
	if string(part.Next) != want || !sel.Partial() || sel.Total != 2 {
		t.Fatalf("narrowed to %q (%+v)", part.Next, sel)
	}
	if d := sel.Describe(); !strings.Contains(d, "approved 1 of 2") || !strings.Contains(d, "keep omega") {
		t.Errorf("describe: %s", d)
	}
	abs := filepath.Join(env.WorkspaceRoot, "a.txt")
	orig, _ := json.Marshal(map[string]any{"file_path": abs, "content": next})
	upd, err := updatedInput(&permission{input: orig}, "Write", part, sel)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(upd, &got)
	if got["content"] != want || got["file_path"] != abs {
		t.Fatalf("Write input: %v", got)
	}
	editOrig, _ := json.Marshal(map[string]any{"file_path": abs, "old_string": "x", "new_string": "y"})
	upd, _ = updatedInput(&permission{input: editOrig}, "Edit", part, sel)
	got = nil
	_ = json.Unmarshal(upd, &got)
	if got["old_string"] != twoParts || got["new_string"] != want {
		t.Fatalf("Edit input: %v", got)
	}
	whole, wsel, _ := patch.Narrow(c, nil)
	if upd, _ := updatedInput(&permission{input: editOrig}, "Edit", whole, wsel); string(upd) != string(editOrig) {
		t.Fatalf("a whole approval must keep the CLI's input: %s", upd)
	}
	if _, _, err := patch.Narrow(c, json.RawMessage(`{"hunks":[]}`)); err != patch.ErrNothingApproved {
		t.Fatalf("no hunk approved: %v", err)
	}
}

func TestRelativize(t *testing.T) {
	root := t.TempDir()
	s := &session{}
	s.Root = root
	in, _ := json.Marshal(map[string]any{"file_path": root + "/src/a.go", "path": "/etc", "content": root})
	out, outside, err := s.relativize(in)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(out, &got)
	if got["file_path"] != "src/a.go" || got["path"] != nil || len(outside) != 1 || outside[0] != "path" {
		t.Fatalf("relativize: %v %v", got, outside)
	}
	if got["content"] != root {
		t.Error("only path fields are rewritten; content is the agent's")
	}
}
