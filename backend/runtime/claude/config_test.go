package claude

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/runtime/agentbin"
)

// TestArgsNeverBypassPermissions: the command line routes every permission
// prompt to AgentHub and can never skip or bypass them (AP2).
func TestArgsNeverBypassPermissions(t *testing.T) {
	args := Config{Model: "m"}.args()
	line := strings.Join(args, " ")
	for _, banned := range []string{"--dangerously-skip-permissions", "--allow-dangerously-skip-permissions",
		"bypassPermissions\"", "--permission-mode", "acceptEdits", "dontAsk"} {
		if strings.Contains(line, banned) {
			t.Errorf("the command line has %q: %s", banned, line)
		}
	}
	want := [][]string{{"--permission-prompt-tool", "stdio"}, {"--input-format", "stream-json"},
		{"--output-format", "stream-json"}, {"--setting-sources", ""}, {"--model", "m"}}
	for _, pair := range want {
		i := slices.Index(args, pair[0])
		if i < 0 || i+1 >= len(args) || args[i+1] != pair[1] {
			t.Errorf("missing %s %q in %q", pair[0], pair[1], args)
		}
	}
	for _, flag := range []string{"-p", "--verbose", "--strict-mcp-config", "--no-session-persistence"} {
		if !slices.Contains(args, flag) {
			t.Errorf("missing %s", flag)
		}
	}
	i := slices.Index(args, "--settings")
	if i < 0 || !strings.Contains(args[i+1], `"disableBypassPermissionsMode":"disable"`) ||
		!strings.Contains(args[i+1], `"Bash"`) || !strings.Contains(args[i+1], `"Read"`) {
		t.Errorf("settings: %q", args)
	}
}

// TestEnvironIsAnAllowList: the CLI gets an isolated home, the key
// proxy's address and token in place of the profile's server and key, the
// quiet switches, and of AgentHub's environment only the pass-through
// names: never an ambient key, never the profile's key.
func TestEnvironIsAnAllowList(t *testing.T) {
	outer := map[string]string{"ANTHROPIC_API_KEY": "sk-ambient-1234567890", "OPENAI_API_KEY": "sk-other-123456789",
		"LANG": "C.UTF-8", "CLAUDE_CODE_MAX_RETRIES": "0", "AWS_SECRET_ACCESS_KEY": "x1234567890"}
	cfg := Config{Model: "m", BaseURL: "http://127.0.0.1:9/", APIKey: "sk-profile-1234567890", Dir: "/data/rt",
		Getenv: func(k string) string { return outer[k] }}
	s := newSession(cfg, agentbin.Info{}, "task")
	ep, err := s.endpoint()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Keys.Close()
	env := cfg.environ("/usr/bin:/bin", ep)
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	want := map[string]string{"HOME": "/data/rt/home", "CLAUDE_CONFIG_DIR": "/data/rt/home/.claude",
		"PATH": "/usr/bin:/bin", "ANTHROPIC_BASE_URL": s.Keys.URL(), "ANTHROPIC_API_KEY": s.Keys.Token(),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
		"LANG": "C.UTF-8", "CLAUDE_CODE_MAX_RETRIES": "0"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s leaked into the CLI's environment", k)
		}
	}
	if !strings.HasPrefix(got["ANTHROPIC_BASE_URL"], "http://127.0.0.1:") || strings.Contains(strings.Join(env, "\n"), cfg.APIKey) {
		t.Errorf("the profile's key is in the CLI's environment, or the CLI does not talk to the key proxy: %v", env)
	}
	cfg.APIKey = ""
	s = newSession(cfg, agentbin.Info{}, "task")
	if ep, err = s.endpoint(); err != nil || s.Keys != nil {
		t.Fatalf("without a key no proxy starts: %v", err)
	}
	env = cfg.environ("/bin", ep)
	if k, u := envValue(env, "ANTHROPIC_API_KEY"), envValue(env, "ANTHROPIC_BASE_URL"); k != noKey || u != "http://127.0.0.1:9" {
		t.Errorf("without a profile key the CLI gets %q at %q, want the placeholder at the profile's server", k, u)
	}
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v
		}
	}
	return ""
}

func TestMissingCLIIsRuntimeUnavailable(t *testing.T) {
	for _, cmd := range []string{filepath.Join(t.TempDir(), "claude"), "agenthub-no-such-claude"} {
		_, err := Config{Command: cmd, Model: "m", Dir: t.TempDir()}.resolve(t.Context())
		var be *backend.Error
		if !errors.As(err, &be) || be.Code != backend.FailRuntimeUnavailable || !strings.Contains(be.Next, InstallHint) ||
			strings.Contains(be.Message, InstallHint) {
			t.Fatalf("%s: %v", cmd, err)
		}
		if strings.Contains(be.Message, os.TempDir()) {
			t.Errorf("the message names an absolute path: %s", be.Message)
		}
	}
}

// TestVersionDrift: a CLI that reports another version resolves, with the
// drift flagged and its hash recorded.
func TestVersionDrift(t *testing.T) {
	bin := fakeCLI(t, `echo "2.0.1 (Claude Code)"`)
	b, err := Config{Command: bin, Model: "m", Dir: t.TempDir()}.resolve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != "2.0.1" || !b.Drift() || len(b.SHA256) != 64 {
		t.Fatalf("binary: %+v", b)
	}
	broken := fakeCLI(t, `echo "no version here"`)
	if _, err := (Config{Command: broken, Model: "m", Dir: t.TempDir()}).resolve(t.Context()); backend.CodeOf(err) != backend.FailRuntimeUnavailable {
		t.Fatalf("a CLI without a version: %v", err)
	}
}

// fakeCLI writes a shell script standing in for the CLI.
func fakeCLI(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
