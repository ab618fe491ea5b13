package codex

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"agenthub/backend"
	"agenthub/backend/runtime/agentbin"
)

// TestNeverABypass: neither the command lines, the thread settings nor the
// config file can switch Codex's approvals or sandbox off (AP2).
func TestNeverABypass(t *testing.T) {
	for _, cfg := range []Config{{Model: "m"}, {Model: "m", Gating: GatingAdvisory},
		{Model: "m", Gating: GatingAdvisory, Sandbox: SandboxWorkspaceWrite}, {Model: "m", Sandbox: SandboxReadOnly}} {
		params, _ := json.Marshal(cfg.threadParams("/ws"))
		line := strings.Join(append(append(cfg.appServerArgs(), cfg.execArgs("task")...), string(params), cfg.configTOML()), " ")
		for _, banned := range []string{"danger-full-access", "dangerously", "bypass", `"never"`, "full-auto",
			"acceptForSession", "approve-for-me", "approval_policy", "sandbox_mode"} {
			if strings.Contains(line, banned) {
				t.Errorf("%+v: %q appears in %s", cfg, banned, line)
			}
		}
		if !strings.Contains(string(params), `"approvalPolicy":"untrusted"`) || !strings.Contains(string(params), `"approvalsReviewer":"user"`) {
			t.Errorf("thread settings: %s", params)
		}
	}
	exec := Config{Model: "m", Gating: GatingAdvisory}.execArgs("do it")
	if i := slices.Index(exec, "--sandbox"); i < 0 || exec[i+1] != SandboxReadOnly || exec[len(exec)-1] != "do it" ||
		exec[len(exec)-2] != "--" {
		t.Fatalf("advisory exec must default to a read-only sandbox and end with the task: %q", exec)
	}
	if got := (Config{Model: "m"}).sandbox(); got != SandboxWorkspaceWrite {
		t.Fatalf("gated sandbox: %s", got)
	}
}

// TestConfigFile: the config file is valid TOML that names only the
// profile's server, keeps keys out of commands and turns off what nothing
// could gate.
func TestConfigFile(t *testing.T) {
	cfg := Config{Model: "gpt-5.5", BaseURL: "http://127.0.0.1:9/v1/"}
	var got map[string]any
	if err := toml.Unmarshal([]byte(cfg.configTOML()), &got); err != nil {
		t.Fatalf("config.toml: %v\n%s", err, cfg.configTOML())
	}
	prov := got["model_providers"].(map[string]any)["agenthub"].(map[string]any)
	if got["model_provider"] != "agenthub" || got["model"] != "gpt-5.5" || prov["base_url"] != "http://127.0.0.1:9/v1" ||
		prov["env_key"] != keyEnv || prov["wire_api"] != "responses" || got["web_search"] != "disabled" ||
		got["check_for_update_on_startup"] != false {
		t.Fatalf("config: %v", got)
	}
	pol := got["shell_environment_policy"].(map[string]any)
	if pol["inherit"] != "core" || !slices.Contains(pol["exclude"].([]any), any("*KEY*")) {
		t.Fatalf("shell_environment_policy: %v", pol)
	}
	features, _ := got["features"].(map[string]any)
	for _, f := range []string{"plugins", "remote_plugin", "apps"} {
		if features[f] != false {
			t.Errorf("feature %s, which reaches services other than the model server, is not off: %v", f, features)
		}
	}
}

// TestEnvironIsAnAllowList: the CLI gets an isolated HOME and CODEX_HOME,
// AgentHub's bin directory first on PATH, the key proxy's token (never the
// profile's key) under AgentHub's variable and the proxy as its server, and
// of AgentHub's environment only the pass-through names: never an ambient
// key.
func TestEnvironIsAnAllowList(t *testing.T) {
	outer := map[string]string{"OPENAI_API_KEY": "sk-ambient-1234567890", "CODEX_API_KEY": "x", "LANG": "C.UTF-8",
		"AWS_SECRET_ACCESS_KEY": "x1234567890", "CODEX_HOME": "/home/u/.codex"}
	cfg := Config{Model: "m", BaseURL: "http://127.0.0.1:9/v1", APIKey: "sk-profile-1234567890", Dir: "/data/rt",
		Getenv: func(k string) string { return outer[k] }}
	s := newSession(cfg, agentbin.Info{}, "task")
	ep, err := s.endpoint()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Keys.Close()
	if args := strings.Join(endpointArgs(ep), " "); args != `-c model_providers.agenthub.base_url="`+s.Keys.URL()+`"` ||
		!strings.HasSuffix(s.Keys.URL(), "/v1") {
		t.Errorf("endpoint args %q", args)
	}
	environ := cfg.environ("/usr/bin:/bin", ep)
	if strings.Contains(strings.Join(environ, "\n"), cfg.APIKey) {
		t.Errorf("the profile's key is in the CLI's environment: %v", environ)
	}
	got := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	want := map[string]string{"HOME": "/data/rt/home", "CODEX_HOME": "/data/rt/home/.codex",
		"PATH": "/data/rt/bin:/usr/bin:/bin", keyEnv: s.Keys.Token(), "LANG": "C.UTF-8"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"OPENAI_API_KEY", "CODEX_API_KEY", "AWS_SECRET_ACCESS_KEY"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s leaked into the CLI's environment", k)
		}
	}
	cfg.APIKey = ""
	for _, kv := range cfg.environ("/bin", cfg.direct()) {
		if kv == keyEnv+"="+noKey {
			return
		}
	}
	t.Error("without a profile key the CLI must get the placeholder")
}

func TestValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Model: "m"}, ""},
		{Config{Model: "m", Gating: GatingAdvisory}, ""},
		{Config{Model: "m", Mode: ModeExec, Gating: GatingAdvisory, Sandbox: SandboxWorkspaceWrite}, ""},
		{Config{}, "no model"},
		{Config{Model: "m", Gating: "yolo"}, "gating"},
		{Config{Model: "m", Sandbox: "danger-full-access"}, "never runs Codex without its sandbox"},
		{Config{Model: "m", Mode: ModeAppServer, Gating: GatingAdvisory}, "always gates"},
		{Config{Model: "m", Mode: "tui"}, "mode"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

// TestExecWithoutAdvisoryIsRefused: exec --json is refused before anything
// runs, with the reason and the way out.
func TestExecWithoutAdvisoryIsRefused(t *testing.T) {
	_, err := NewModel(Config{Model: "m", Mode: ModeExec, Command: "/nonexistent"}).Stream(t.Context(),
		backend.ModelRequest{Messages: []backend.Message{{Role: backend.RoleUser, Text: "task"}}}, func(string) {})
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != backend.FailPermissionDenied || !strings.Contains(be.Message, "offers no gating") ||
		!strings.Contains(be.Next, `gating = "advisory"`) || strings.Contains(be.Message, be.Next) {
		t.Fatalf("%v", err)
	}
}

func TestMissingCLIIsRuntimeUnavailable(t *testing.T) {
	for _, cmd := range []string{filepath.Join(t.TempDir(), "codex"), "agenthub-no-such-codex"} {
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
// drift flagged and its hash recorded; one without a version does not.
func TestVersionDrift(t *testing.T) {
	bin := fakeCLI(t, t.TempDir(), `echo "codex-cli 0.150.0"`)
	b, err := Config{Command: bin, Model: "m", Dir: t.TempDir()}.resolve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != "0.150.0" || !b.Drift() || len(b.SHA256) != 64 {
		t.Fatalf("binary: %+v", b)
	}
	broken := fakeCLI(t, t.TempDir(), `echo "no version here"`)
	if _, err := (Config{Command: broken, Model: "m", Dir: t.TempDir()}).resolve(t.Context()); backend.CodeOf(err) != backend.FailRuntimeUnavailable {
		t.Fatalf("a CLI without a version: %v", err)
	}
}

// TestNativeBinaryOfTheNpmPackage: the npm package's Node script resolves
// to the platform package's native binary beside it; a package whose
// optional platform dependency is missing is runtime_unavailable.
func TestNativeBinaryOfTheNpmPackage(t *testing.T) {
	target, ok := npmTargets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		t.Skip("no npm target for this platform")
	}
	nm := filepath.Join(t.TempDir(), "node_modules")
	script := fakeCLI(t, filepath.Join(nm, "@openai", "codex", "bin"), "exit 0")
	if err := os.Rename(script, filepath.Join(filepath.Dir(script), "codex.js")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(nm, ".bin", "codex")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../@openai/codex/bin/codex.js", link); err != nil {
		t.Fatal(err)
	}
	if _, err := native(link); backend.CodeOf(err) != backend.FailRuntimeUnavailable || !strings.Contains(err.Error(), target[1]) {
		t.Fatalf("without the platform package: %v", err)
	}
	want := fakeCLI(t, filepath.Join(nm, "@openai", target[1], "vendor", target[0], "bin"), "exit 0")
	got, err := native(link)
	if err != nil || got != want {
		t.Fatalf("native = %q, %v; want %q", got, err, want)
	}
	plain := fakeCLI(t, t.TempDir(), "exit 0")
	if got, err := native(plain); err != nil || got != plain {
		t.Fatalf("a plain binary resolves to itself: %q %v", got, err)
	}
}

// TestSandboxLink: the sandbox helper is linked into AgentHub's bin
// directory, and the link follows a new binary.
func TestSandboxLink(t *testing.T) {
	cfg := Config{Model: "m", Dir: t.TempDir()}
	for _, bin := range []string{"/opt/a/codex", "/opt/b/codex", "/opt/b/codex"} {
		if err := cfg.prepareHome(bin); err != nil {
			t.Fatal(err)
		}
		if got, err := os.Readlink(filepath.Join(cfg.binDir(), "codex-linux-sandbox")); err != nil || got != bin {
			t.Fatalf("link = %q %v, want %q", got, err, bin)
		}
	}
	if b, err := os.ReadFile(filepath.Join(cfg.codexHome(), "config.toml")); err != nil || !strings.Contains(string(b), `model = "m"`) {
		t.Fatalf("config.toml: %q %v", b, err)
	}
}

// fakeCLI writes a shell script standing in for the CLI.
func fakeCLI(t *testing.T, dir, body string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "codex")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCapabilities(t *testing.T) {
	g := Capabilities("")
	if g.PartialApply || !g.Streaming || g.Gating[backend.ActionPatch] != backend.Enforced ||
		g.Gating[backend.ActionShell] != backend.Enforced || g.Gating[backend.ActionRead] != backend.Advisory {
		t.Fatalf("enforced: %+v", g)
	}
	a := Capabilities(GatingAdvisory)
	for k, e := range a.Gating {
		if e != backend.Advisory {
			t.Errorf("advisory %s: %s", k, e)
		}
	}
	if a.PartialApply {
		t.Error("advisory: partial apply")
	}
}
