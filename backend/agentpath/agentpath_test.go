package agentpath

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"agenthub/backend"
)

func TestRel(t *testing.T) {
	root := filepath.Join(string(filepath.Separator), "ws")
	other := filepath.Join(string(filepath.Separator), "real", "ws")
	tests := []struct {
		abs  string
		want string
		ok   bool
	}{
		{filepath.Join(root, "a", "b.go"), "a/b.go", true},
		{filepath.Join(other, "c.go"), "c.go", true},
		{root, ".", true},
		{filepath.Join(root, "..", "x"), "", false},
		{filepath.Join(string(filepath.Separator), "wsx", "y"), "", false},
		{"relative/path", "", false},
	}
	for _, tc := range tests {
		got, ok := Rel([]string{"", root, other}, tc.abs)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Rel(%q) = %q, %v; want %q, %v", tc.abs, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSecret(t *testing.T) {
	root := t.TempDir()
	if ok, _ := Secret(root, ".env"); !ok {
		t.Error(".env is not a secret")
	}
	if ok, _ := Secret(root, "main.go"); ok {
		t.Error("main.go is a secret")
	}
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte("K=v"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(root, "harmless.txt")); err != nil {
		t.Fatal(err)
	}
	if ok, _ := Secret(root, "harmless.txt"); !ok {
		t.Error("a link to .env is not a secret")
	}
	if ok, _ := Secret("", "harmless.txt"); ok {
		t.Error("with no root, a name that is not a secret is one")
	}
	if ok, _ := SecretName(".ssh/known_hosts"); !ok {
		t.Error(".ssh/known_hosts is not a secret")
	}
	a := SecretAccess{Label: "Codex", Tool: "codex.file", Path: ".env", Pattern: ".env", Runtime: "codex"}.Action()
	var preview map[string]string
	if err := json.Unmarshal(a.Preview, &preview); err != nil || preview["runtime"] != "codex" ||
		a.Kind != backend.ActionSecret || a.Title != "Codex: secret file .env" {
		t.Errorf("Action = %+v (%v)", a, err)
	}
}

func TestOpen(t *testing.T) {
	if _, err := Open(backend.ToolEnv{}); err == nil {
		t.Error("Open without a root")
	}
	missing := filepath.Join(t.TempDir(), "gone")
	if _, err := Open(backend.ToolEnv{WorkspaceRoot: missing}); err == nil {
		t.Error("Open of a missing root")
	}
	if w, err := Open(backend.ToolEnv{WorkspaceRoot: t.TempDir()}); err != nil || w == nil {
		t.Errorf("Open = %v, %v", w, err)
	}
}
