package approval

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend"
)

// gateFor returns a gate over one real temporary workspace, "ws", whose
// policy file holds policy ("" = no file).
func gateFor(t *testing.T, policy string) (*Gate, string) {
	t.Helper()
	root := t.TempDir()
	if policy != "" {
		writePolicy(t, root, policy)
	}
	return NewGate(func(id string) (string, error) {
		if id != "ws" {
			return "", errors.New("no such workspace")
		}
		return root, nil
	}), root
}

func writePolicy(t *testing.T, root, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, ".agenthub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agenthub", "policy.toml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// request builds a gate request the way the real tools describe actions.
func request(tool string, kind backend.ActionKind, subject map[string]any) backend.GateRequest {
	subject["kind"] = string(kind)
	raw, _ := json.Marshal(subject)
	return backend.GateRequest{RunID: "run_1", WorkspaceID: "ws", Tool: tool,
		Action: backend.GatedAction{Kind: kind, Title: tool, Risk: backend.RiskMedium, Subject: raw}}
}

func patchReq(path string) backend.GateRequest {
	return request("write_file", backend.ActionPatch, map[string]any{"tool": "write_file", "workspace": "ws",
		"path": path, "preimages": []Preimage{{Path: path, SHA256: Absent}}, "postimage": "abc"})
}

func shellReq(command string) backend.GateRequest {
	return request("run_shell", backend.ActionShell, map[string]any{"command": command, "cwd": "."})
}

// gateRows are the default gate rows (run-model.md §9.1) as the tools send
// them, with what the default policy and a policy that tries to allow
// everything must decide.
var gateRows = []struct {
	name      string
	req       backend.GateRequest
	def, open backend.Verdict
	kind      backend.ActionKind
}{
	{"read inside", request("read_file", backend.ActionRead, map[string]any{"path": "src/a.go"}), backend.Allow, backend.Allow, backend.ActionRead},
	{"read outside", request("read_file", backend.ActionRead, map[string]any{"path": "../etc/passwd"}), backend.Deny, backend.Deny, backend.ActionRead},
	{"write", request("write_file", backend.ActionWrite, map[string]any{"path": "src/a.go"}), backend.Ask, backend.Allow, backend.ActionWrite},
	{"patch", patchReq("src/a.go"), backend.Ask, backend.Allow, backend.ActionPatch},
	{"patch into .agenthub", patchReq(".agenthub/policy.toml"), backend.Deny, backend.Deny, backend.ActionPatch},
	{"shell", shellReq("go test ./..."), backend.Ask, backend.Allow, backend.ActionShell},
	{"network", request("fetch", backend.ActionNetwork, map[string]any{"method": "GET", "url": "https://example.com/x"}), backend.Ask, backend.Allow, backend.ActionNetwork},
	{"commit", request("git_commit", backend.ActionCommit, map[string]any{"ref": "main"}), backend.Ask, backend.Allow, backend.ActionCommit},
	{"commit by shell", shellReq("git commit -m x"), backend.Ask, backend.Allow, backend.ActionCommit},
	{"push", request("git_push", backend.ActionPush, map[string]any{"remote": "origin", "ref": "main"}), backend.Ask, backend.Ask, backend.ActionPush},
	{"push by shell", shellReq("git push origin main"), backend.Ask, backend.Ask, backend.ActionPush},
	{"publish", request("publish", backend.ActionPublish, map[string]any{"target": "npm"}), backend.Ask, backend.Ask, backend.ActionPublish},
	{"publish by shell", shellReq("npm publish"), backend.Ask, backend.Ask, backend.ActionPublish},
	{"deploy", request("deploy", backend.ActionDeploy, map[string]any{"target": "prod"}), backend.Ask, backend.Ask, backend.ActionDeploy},
	{"deploy by shell", shellReq("terraform apply"), backend.Ask, backend.Ask, backend.ActionDeploy},
	{"secret read", request("read_file", backend.ActionSecret, map[string]any{"tool": "read_file", "path": ".env"}), backend.Deny, backend.Deny, backend.ActionSecret},
	{"secret by shell", shellReq("cat .env"), backend.Deny, backend.Deny, backend.ActionSecret},
	{"secret write", patchReq("config/.env.prod"), backend.Deny, backend.Deny, backend.ActionPatch},
}

// allowEverything tries to allow every class; no rule may lift the limits
// of push, publish, deploy, secrets and .agenthub/.
const allowEverything = `version = 1
[[write]]
glob = "**"
verdict = "allow"
[[write]]
glob = "**/.env*"
verdict = "allow"
[[shell]]
prefix = ["go"]
verdict = "allow"
[[shell]]
prefix = ["git"]
verdict = "allow"
[[shell]]
prefix = ["npm"]
verdict = "allow"
[[shell]]
prefix = ["terraform"]
verdict = "allow"
[[shell]]
prefix = ["cat"]
verdict = "allow"
[[network]]
host = "**"
verdict = "allow"
[[git]]
action = "commit"
verdict = "allow"
[[git]]
action = "push"
verdict = "allow"
`

func TestGateDefaultRows(t *testing.T) {
	for _, policy := range []struct{ name, text string }{{"no file", ""}, {"allow everything", allowEverything}} {
		g, _ := gateFor(t, policy.text)
		for _, tt := range gateRows {
			t.Run(policy.name+"/"+tt.name, func(t *testing.T) {
				want := tt.def
				if policy.text != "" {
					want = tt.open
				}
				got := g.Evaluate(t.Context(), tt.req)
				if got.Verdict != want || got.Kind != tt.kind {
					t.Errorf("Evaluate = %s (%s), want %s (%s); %s; trace %+v", got.Verdict, got.Kind, want, tt.kind,
						got.Reason, got.Trace)
				}
				if got.Reason == "" || len(got.Trace) == 0 {
					t.Errorf("no reason or trace: %+v", got)
				}
			})
		}
	}
}

func TestGateRulePrecedence(t *testing.T) {
	g, _ := gateFor(t, `version = 1
[[shell]]
id = "git-status"
prefix = ["git", "status"]
verdict = "allow"
[[write]]
id = "gen-deny"
glob = "gen/**"
verdict = "deny"
[[write]]
id = "all-allow"
glob = "**"
verdict = "allow"
`)
	tests := []struct {
		name string
		req  backend.GateRequest
		want backend.Verdict
		rule string
	}{
		{"allow rule", shellReq("git status --short"), backend.Allow, "git-status"},
		{"compound with an unmatched part asks", shellReq("git status && rm -rf x"), backend.Ask, ""},
		{"deny beats allow", patchReq("gen/x.go"), backend.Deny, "gen-deny"},
		{"allow elsewhere", patchReq("src/x.go"), backend.Allow, "all-allow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := g.Evaluate(t.Context(), tt.req)
			if got.Verdict != tt.want || (tt.rule != "" && got.RuleID != tt.rule) {
				t.Errorf("Evaluate = %s by %s, want %s by %s (%s)", got.Verdict, got.RuleID, tt.want, tt.rule, got.Reason)
			}
		})
	}
}

// TestGateBrokenPolicy: a file that does not parse makes every gated action
// ask, with the parse error in the trace; built-in denials stay denials.
func TestGateBrokenPolicy(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"typo", "version = 1\n[[shell]]\nprefix = [\"git\"]\nverdit = \"allow\"\n", "unknown field"},
		{"bad version", "version = 7\n", "version = 7"},
		{"not toml", "[[[", "line 1"},
	}
	for _, c := range cases {
		g, _ := gateFor(t, c.text)
		for _, tt := range gateRows {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				got := g.Evaluate(t.Context(), tt.req)
				want := backend.Ask
				if tt.def == backend.Deny {
					want = backend.Deny
				}
				if got.Verdict != want {
					t.Errorf("Evaluate = %s, want %s (%s)", got.Verdict, want, got.Reason)
				}
				if len(got.Trace) == 0 || got.Trace[0].Rule != RuleBrokenPolicy || !strings.Contains(got.Trace[0].Pattern, c.want) {
					t.Errorf("trace %+v does not carry the parse error %q", got.Trace, c.want)
				}
			})
		}
	}
}

// TestGateUnusablePolicy: symlinks, a directory and an unknown workspace
// fail closed too.
func TestGateUnusablePolicy(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "policy.toml"), []byte(allowEverything), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, root string)
		ws    string
	}{
		{"symlinked file", func(t *testing.T, root string) {
			mustMkdir(t, filepath.Join(root, ".agenthub"))
			mustSymlink(t, filepath.Join(outside, "policy.toml"), filepath.Join(root, ".agenthub", "policy.toml"))
		}, "ws"},
		{"symlinked directory", func(t *testing.T, root string) {
			mustSymlink(t, outside, filepath.Join(root, ".agenthub"))
		}, "ws"},
		{"directory instead of file", func(t *testing.T, root string) {
			mustMkdir(t, filepath.Join(root, ".agenthub", "policy.toml"))
		}, "ws"},
		{"unknown workspace", func(*testing.T, string) {}, "nope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, root := gateFor(t, "")
			c.setup(t, root)
			req := shellReq("go test ./...")
			req.WorkspaceID = c.ws
			got := g.Evaluate(t.Context(), req)
			if got.Verdict != backend.Ask || got.RuleID != RuleBrokenPolicy {
				t.Errorf("Evaluate = %s by %s, want ask by %s (%s)", got.Verdict, got.RuleID, RuleBrokenPolicy, got.Reason)
			}
			if strings.Contains(got.Reason, root) || strings.Contains(got.Reason, outside) {
				t.Errorf("reason shows a machine path: %s", got.Reason)
			}
		})
	}
}

func TestGateInvalidSubject(t *testing.T) {
	g, _ := gateFor(t, allowEverything)
	tests := []struct {
		name string
		req  backend.GateRequest
		want backend.Verdict
	}{
		{"not JSON", backend.GateRequest{WorkspaceID: "ws", Tool: "x", Action: backend.GatedAction{Kind: backend.ActionShell, Subject: json.RawMessage(`{`)}}, backend.Ask},
		{"kind mismatch", backend.GateRequest{WorkspaceID: "ws", Tool: "x", Action: backend.GatedAction{Kind: backend.ActionShell, Subject: json.RawMessage(`{"kind":"read","command":"go test"}`)}}, backend.Ask},
		{"secret stays denied", backend.GateRequest{WorkspaceID: "ws", Tool: "x", Action: backend.GatedAction{Kind: backend.ActionSecret, Subject: json.RawMessage(`[`)}}, backend.Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := g.Evaluate(t.Context(), tt.req); got.Verdict != tt.want || got.RuleID != RuleInvalidSubject {
				t.Errorf("Evaluate = %s by %s, want %s", got.Verdict, got.RuleID, tt.want)
			}
		})
	}
}

// TestGateReloadsPolicy: an edit is seen at the next request, even one
// within the same second and of the same size.
func TestGateReloadsPolicy(t *testing.T) {
	g, root := gateFor(t, "")
	req := shellReq("go test ./...")
	steps := []struct {
		text string
		want backend.Verdict
	}{
		{"version = 1\n[[shell]]\nprefix = [\"go\"]\nverdict = \"allow\"\n", backend.Allow},
		{"version = 1\n[[shell]]\nprefix = [\"go\"]\nverdict = \"deny!\"\n", backend.Ask}, // same size, broken
		{"version = 1\n[[shell]]\nprefix = [\"go\"]\nverdict = \"deny\"\n", backend.Deny},
	}
	for i, s := range steps {
		writePolicy(t, root, s.text)
		if got := g.Evaluate(t.Context(), req); got.Verdict != s.want {
			t.Errorf("step %d: Evaluate = %s, want %s (%s)", i, got.Verdict, s.want, got.Reason)
		}
	}
	if err := os.Remove(filepath.Join(root, ".agenthub", "policy.toml")); err != nil {
		t.Fatal(err)
	}
	if got := g.Evaluate(t.Context(), req); got.Verdict != backend.Ask || got.RuleID != "default:shell" {
		t.Errorf("without the file: %s by %s", got.Verdict, got.RuleID)
	}
}

// TestGateCachesParsedPolicy: a settled file is parsed once; the cache
// entry is keyed by size and time, so a later change is still seen.
func TestGateCachesParsedPolicy(t *testing.T) {
	g, root := gateFor(t, allowEverything)
	old := time.Now().Add(-time.Hour)
	file := filepath.Join(root, ".agenthub", "policy.toml")
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	p1, err := g.Policy("ws")
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := g.Policy("ws")
	if p1 != p2 {
		t.Error("a settled policy file was parsed twice")
	}
	writePolicy(t, root, "version = 1\n")
	if p3, _ := g.Policy("ws"); p3 == p1 || len(p3.Shell) != 0 {
		t.Errorf("a changed file was not reloaded: %+v", p3)
	}
}

func TestAppendRule(t *testing.T) {
	root := t.TempDir()
	goTest, err := GrantPattern(Action{Kind: backend.ActionShell, Command: "go test ./...", Cwd: "."})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := AppendRule(root, goTest)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Before) != 0 || !strings.Contains(ch.Rule, "prefix = ['go', 'test']") {
		t.Errorf("first change: before %q, rule %q", ch.Before, ch.Rule)
	}
	// The second append keeps the user's text byte for byte.
	edited := append(append([]byte{}, ch.After...), "# my note\n"...)
	writePolicy(t, root, string(edited))
	write, _ := GrantPattern(Action{Kind: backend.ActionPatch, Path: "src/main.go"})
	ch2, err := AppendRule(root, write)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(ch2.After), string(edited)) || string(ch2.Before) != string(edited) {
		t.Errorf("the existing text was not kept:\n%s", ch2.After)
	}
	got, err := os.ReadFile(filepath.Join(root, ".agenthub", "policy.toml"))
	if err != nil || string(got) != string(ch2.After) {
		t.Fatalf("file = %q, %v", got, err)
	}
	p, err := ParsePolicy(got)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Evaluate(Action{Kind: backend.ActionShell, Command: "go test ./x", Cwd: "."}); r.Verdict != backend.Allow {
		t.Errorf("the written rule does not allow go test: %s", r.Reason)
	}
	if r := p.Evaluate(Action{Kind: backend.ActionPatch, Path: "src/main.go"}); r.Verdict != backend.Allow {
		t.Errorf("the written rule does not allow the write: %s", r.Reason)
	}
	entries, _ := os.ReadDir(filepath.Join(root, ".agenthub"))
	if len(entries) != 1 {
		t.Errorf(".agenthub holds %d entries, want only policy.toml (temporary files left?)", len(entries))
	}
}

func TestAppendRuleRefuses(t *testing.T) {
	outside := t.TempDir()
	tests := []struct {
		name  string
		grant Grant
		setup func(t *testing.T, root string)
	}{
		{"push", Grant{Kind: backend.ActionPush}, nil},
		{"publish", Grant{Kind: backend.ActionPublish}, nil},
		{"deploy", Grant{Kind: backend.ActionDeploy}, nil},
		{"secret", Grant{Kind: backend.ActionSecret}, nil},
		{"symlinked directory", Grant{Kind: backend.ActionCommit}, func(t *testing.T, root string) {
			mustSymlink(t, outside, filepath.Join(root, ".agenthub"))
		}},
		{"symlinked file", Grant{Kind: backend.ActionCommit}, func(t *testing.T, root string) {
			mustMkdir(t, filepath.Join(root, ".agenthub"))
			mustSymlink(t, filepath.Join(outside, "p.toml"), filepath.Join(root, ".agenthub", "policy.toml"))
		}},
		{"broken policy", Grant{Kind: backend.ActionCommit}, func(t *testing.T, root string) {
			writePolicy(t, root, "version = 1\nnope = 1\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, root)
			}
			if _, err := AppendRule(root, tt.grant); err == nil {
				t.Fatal("AppendRule succeeded")
			} else if strings.Contains(err.Error(), root) {
				t.Errorf("error shows the root: %v", err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("something was written outside the workspace: %v", entries)
			}
		})
	}
}

// TestAppendRuleConcurrent: appends of one process never lose a rule.
func TestAppendRuleConcurrent(t *testing.T) {
	root := t.TempDir()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			g := Grant{Kind: backend.ActionShell, Prefix: []string{"tool" + string(rune('a'+i))}, Cwd: "."}
			if _, err := AppendRule(root, g); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	data, _ := os.ReadFile(filepath.Join(root, ".agenthub", "policy.toml"))
	p, err := ParsePolicy(data)
	if err != nil || len(p.Shell) != 8 {
		t.Fatalf("policy has %d shell rules (%v), want 8:\n%s", len(p.Shell), err, data)
	}
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

var _ backend.Gate = (*Gate)(nil)
