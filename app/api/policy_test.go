package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
)

func policyCore(t *testing.T) (*Core, func(files map[string]string) backend.Workspace) {
	t.Helper()
	core, err := Open(t.Context(), Config{Home: t.TempDir(), Version: "test", Surface: backend.SurfaceBrowser})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	add := func(files map[string]string) backend.Workspace {
		dir := t.TempDir()
		for name, text := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ws, err := NewWorkspacesAPI(core).Add(dir)
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	return core, add
}

// TestDefaultGateRows evaluates the default gate's samples: the rows are
// the gate's behaviour, so a change to the gate shows up here and in the
// settings view together.
func TestDefaultGateRows(t *testing.T) {
	want := []GateRow{
		{Action: "read_inside", Verdict: backend.Allow, Rule: "default:read"},
		{Action: "read_outside", Verdict: backend.Deny, Rule: "builtin:outside", Fixed: true},
		{Action: "write", Verdict: backend.Ask, Rule: "default:write"},
		{Action: "shell", Verdict: backend.Ask, Rule: "default:shell"},
		{Action: "network", Verdict: backend.Ask, Rule: "default:network"},
		{Action: "commit", Verdict: backend.Ask, Rule: "default:commit"},
		{Action: "push", Verdict: backend.Ask, Rule: "default:push", Fixed: true},
		{Action: "publish", Verdict: backend.Ask, Rule: "default:publish", Fixed: true},
		{Action: "deploy", Verdict: backend.Ask, Rule: "default:deploy", Fixed: true},
		{Action: "secret", Verdict: backend.Deny, Rule: "builtin:secret", Fixed: true},
		{Action: "agenthub_write", Verdict: backend.Deny, Rule: "builtin:agenthub", Fixed: true},
	}
	if diff := cmp.Diff(want, DefaultGate()); diff != "" {
		t.Fatalf("default gate (-want +got):\n%s", diff)
	}
}

func TestPolicyView(t *testing.T) {
	core, add := policyCore(t)
	p := NewPolicyAPI(core)

	t.Run("no file", func(t *testing.T) {
		ws := add(map[string]string{"README.md": "hi\n"})
		v, err := p.Get(ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.Source != PolicyDefault || len(v.Rules) != 0 || v.Problem != "" || v.File != ".agenthub/policy.toml" {
			t.Fatalf("view = %+v", v)
		}
		if len(v.Defaults) != len(gateSamples) {
			t.Fatalf("defaults = %d rows", len(v.Defaults))
		}
	})

	t.Run("rules in class and file order", func(t *testing.T) {
		ws := add(map[string]string{".agenthub/policy.toml": `version = 1
[[write]]
glob = "src/**/*.go"
verdict = "allow"
match = ["src/a.go"]
not_match = ["docs/a.go"]
[[shell]]
id = "tests"
command = "go test ./..."
cwd = "."
verdict = "allow"
[[shell]]
prefix = ["rm", "-rf"]
verdict = "deny"
[[network]]
host = "*.example.com"
method = "get"
verdict = "ask"
[[git]]
action = "push"
verdict = "allow"
[[git]]
id = "commits"
action = "commit"
verdict = "allow"
`})
		v, err := p.Get(ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []PolicyRule{
			{Class: "write", ID: "write[1]", Pattern: "src/**/*.go", Verdict: backend.Allow, Examples: 2},
			{Class: "shell", ID: "tests", Pattern: "go test ./...", Verdict: backend.Allow, Cwd: "."},
			{Class: "shell", ID: "shell[2]", Pattern: "rm -rf …", Verdict: backend.Deny},
			{Class: "network", ID: "network[1]", Pattern: "*.example.com", Verdict: backend.Ask, Method: "GET"},
			{Class: "git", ID: "git[1]", Pattern: "push", Verdict: backend.Allow, Ignored: true},
			{Class: "git", ID: "commits", Pattern: "commit", Verdict: backend.Allow},
		}
		if v.Source != PolicyFile {
			t.Fatalf("source = %q", v.Source)
		}
		for i := range want {
			// Every rule of the repository's file says so; its key is
			// checked by the revocation tests (rules_test.go).
			want[i].Site, want[i].File, want[i].Scope = backend.RuleSiteRepository, ".agenthub/policy.toml", "workspace"
			if i < len(v.Rules) {
				want[i].Key = v.Rules[i].Key
			}
		}
		if diff := cmp.Diff(want, v.Rules); diff != "" {
			t.Fatalf("rules (-want +got):\n%s", diff)
		}
	})

	t.Run("a broken file says why, without machine paths", func(t *testing.T) {
		ws := add(map[string]string{".agenthub/policy.toml": "version = 1\n[[write]]\nglob = \"x\"\nverdit = \"allow\"\n"})
		v, err := p.Get(ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.Source != PolicyBroken || !strings.Contains(v.Problem, `line 4: unknown field "write.verdit"`) {
			t.Fatalf("view = %+v", v)
		}
		if len(v.Rules) != 0 || len(v.Defaults) == 0 {
			t.Fatalf("a broken file shows no rules and the default gate: %+v", v)
		}
	})

	t.Run("a symbolic link is never followed", func(t *testing.T) {
		ws := add(map[string]string{"elsewhere/policy.toml": "version = 1\n[[write]]\nglob = \"**\"\nverdict = \"allow\"\n"})
		root, err := core.workspaceRoot(ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, ".agenthub")); err != nil {
			t.Fatal(err)
		}
		v, err := p.Get(ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.Source != PolicyBroken || len(v.Rules) != 0 || strings.Contains(v.Problem, root) {
			t.Fatalf("view = %+v", v)
		}
	})

	t.Run("an unknown workspace is not_found", func(t *testing.T) {
		_, err := p.Get("ws_nope")
		if got := ErrorOf(err).Code; got != backend.CodeNotFound {
			t.Fatalf("code = %q (%v)", got, err)
		}
	})
}
