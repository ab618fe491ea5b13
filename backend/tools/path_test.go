package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
)

// argsFor builds each file tool's arguments for one path.
func argsFor(tool, path string) string {
	p, _ := json.Marshal(path)
	switch tool {
	case WriteFile:
		return `{"path":` + string(p) + `,"content":"pwned\n"}`
	case EditFile:
		return `{"path":` + string(p) + `,"old_string":"outside","new_string":"pwned"}`
	}
	return `{"path":` + string(p) + `}`
}

// TestPathEscapesAreRefused: no file tool reads, lists or changes anything
// outside the root, whatever the spelling, and the run goes on: the result
// is a tool error that never shows a machine path.
func TestPathEscapesAreRefused(t *testing.T) {
	f := newFixture(t)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "data.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "data.txt"), filepath.Join(f.root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		"../data.txt",
		"a/../../data.txt",
		filepath.Join(outside, "data.txt"),
		"/etc/passwd",
		"~/data.txt",
		"a\x00b",
		"out/data.txt",
		"link.txt",
	}
	dirs := []string{"..", "a/../..", outside, "/etc", "~", "a\x00b", "out"}
	for _, tool := range []string{ReadFile, ListDir, WriteFile, EditFile, DeleteFile} {
		ps := paths
		if tool == ListDir {
			ps = dirs
		}
		for _, p := range ps {
			t.Run(tool+" "+p, func(t *testing.T) {
				args := argsFor(tool, p)
				if a := f.action(t, tool, args); a != nil {
					t.Errorf("Action gated a call that must be refused: %s", a.Kind)
				}
				res := f.execute(t, tool, args)
				if !res.IsError {
					t.Fatalf("Execute = %q, want a tool error", res.Content)
				}
				if !strings.Contains(res.Content, "outside the workspace") && !strings.Contains(res.Content, "symbolic link") {
					t.Errorf("message %q does not say the path leaves the workspace", res.Content)
				}
				if strings.Contains(res.Content, "outside\n") || strings.Contains(res.Content, "data.txt\t") {
					t.Errorf("the outside directory leaked: %q", res.Content)
				}
				f.noMachinePaths(t, "result", res.Content)
			})
		}
	}
	b, err := os.ReadFile(filepath.Join(outside, "data.txt"))
	if err != nil || string(b) != "outside\n" {
		t.Fatalf("the outside file changed: %q, %v", b, err)
	}
	des, _ := os.ReadDir(outside)
	if len(des) != 1 {
		t.Errorf("files appeared outside the workspace: %v", des)
	}
}

// TestSecretsAreDenied: reads and writes of secret paths become a secret
// action (which the gate denies); were Execute called anyway, it refuses.
func TestSecretsAreDenied(t *testing.T) {
	f := newFixture(t)
	secrets := map[string]string{
		".env":             "API_KEY=sk-live-123\n",
		"config/.env.prod": "DB_PASSWORD=hunter2\n",
		"keys/id_rsa":      "-----BEGIN OPENSSH PRIVATE KEY-----\n",
		"certs/server.pem": "-----BEGIN PRIVATE KEY-----\n",
		".ssh/config":      "Host x\n",
		".npmrc":           "//registry.npmjs.org/:_authToken=abc\n",
	}
	for p, c := range secrets {
		f.write(t, p, c)
	}
	if err := os.Symlink(".env", filepath.Join(f.root, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	paths := []string{".env", "config/.env.prod", "keys/id_rsa", "certs/server.pem", ".ssh/config", ".npmrc", "innocent.txt"}
	for _, tool := range []string{ReadFile, WriteFile, EditFile, DeleteFile} {
		for _, p := range paths {
			t.Run(tool+" "+p, func(t *testing.T) {
				args := argsFor(tool, p)
				a := f.action(t, tool, args)
				if a == nil || a.Kind != backend.ActionSecret || a.Risk != backend.RiskHigh {
					t.Fatalf("Action = %+v, want a secret action", a)
				}
				var subject map[string]string
				mustJSON(t, a.Subject, &subject)
				if subject["path"] != p || subject["tool"] != tool {
					t.Errorf("subject %s does not name %s and %s", a.Subject, tool, p)
				}
				res := f.execute(t, tool, args)
				if !res.IsError || !strings.Contains(res.Content, "secret") {
					t.Fatalf("Execute = %+v, want a refusal", res)
				}
				for _, c := range secrets {
					if strings.Contains(res.Content, strings.TrimSpace(c)) {
						t.Errorf("secret content leaked: %q", res.Content)
					}
				}
			})
		}
	}
	for p, c := range secrets {
		if got := f.read(t, p); got != c {
			t.Errorf("%s = %q, want it untouched", p, got)
		}
	}
	for _, p := range []string{".ssh", "./.ssh"} {
		res := f.execute(t, ListDir, argsFor(ListDir, p))
		if !res.IsError || !strings.Contains(res.Content, "secret") || strings.Contains(res.Content, "config") {
			t.Errorf("list_dir %s = %+v, want a refusal", p, res)
		}
	}
	if len(f.eventsOf(backend.EvFileRead)) != 0 {
		t.Errorf("a refused read was recorded as a read")
	}
}
