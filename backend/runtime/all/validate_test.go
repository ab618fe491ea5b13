package all

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend/profile"
	"agenthub/backend/runtime"
)

// parse reads a profile as the loader does: the checks common to every
// runtime, then its adapter's.
func parse(text []byte) (profile.Profile, error) {
	p, err := profile.Parse(text)
	if err != nil {
		return p, err
	}
	return p, runtime.Validate(p)
}

func TestParse(t *testing.T) {
	tests := []struct{ name, text, wantErr string }{
		{"native ok", `name = "local"
runtime = "native"
provider = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen3"
run_timeout = "10m"
[stop]
max_rounds = 3
timeout = "90s"`, ""},
		{"script ok", "name = \"tour\"\nruntime = \"script\"\nplaybook = \"tour.toml\"", ""},
		{"typo", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\nmodle = \"m\"", "modle"},
		{"bad name", "name = \"Bad Name\"\nruntime = \"script\"\nplaybook = \"p\"", "name"},
		{"bad runtime", "name = \"x\"\nruntime = \"magic\"", "runtime"},
		{"bad provider", "name = \"x\"\nruntime = \"native\"\nprovider = \"acme\"\nmodel = \"m\"", "provider"},
		{"no model", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"", "model"},
		{"key in key_env", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\nkey_env = \"KEY=sk-1\"", "key_env"},
		{"bad duration", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\nrun_timeout = \"soon\"", "duration"},
		{"script without playbook", "name = \"x\"\nruntime = \"script\"", "playbook"},
		{"context window ok", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\ncontext_window = 32768\nmax_tokens = 4096", ""},
		{"state keys ok", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\nstate_keys = [\"plan\", \"found_2\"]", ""},
		{"state key bad", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\nstate_keys = [\"Plan\"]", "state_keys"},
		{"executor ok", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\nexecutor = \"parallel_streaming\"", ""},
		{"executor bad", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\nexecutor = \"parallel\"", "executor"},
		{"keychain ok", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\nkeychain = \"agenthub/openai\"", ""},
		{"keychain and key_env", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\nkeychain = \"a/b\"\nkey_env = \"K\"", "keep one"},
		{"keychain bad ref", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\nkeychain = \"openai\"", "service/account"},
		{"mcp ok", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\n" +
			"[[mcp_servers]]\nname = \"notes\"\ncommand = \"notes-mcp\"\nargs = [\"--db\", \"n.db\"]\nenv = [\"NOTES_TOKEN\"]\nallow_read_only = true\ncall_timeout = \"30s\"", ""},
		{"mcp bad name", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\n[[mcp_servers]]\nname = \"a__b\"\ncommand = \"c\"", "mcp_servers[0].name"},
		{"mcp env value", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\n[[mcp_servers]]\nname = \"a\"\ncommand = \"c\"\nenv = [\"TOKEN=abc\"]", "not a value"},
		{"mcp command with args", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\n[[mcp_servers]]\nname = \"a\"\ncommand = \"npx server\"", "one program"},
		{"mcp twice", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\n[[mcp_servers]]\nname = \"a\"\ncommand = \"c\"\n[[mcp_servers]]\nname = \"a\"\ncommand = \"d\"", "twice"},
		{"mcp typo", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\n[[mcp_servers]]\nname = \"a\"\ncomand = \"c\"", "comand"},
		{"context window tiny", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\ncontext_window = 100", "context_window"},
		{"max_tokens over window", "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\ncontext_window = 2048\nmax_tokens = 4096", "max_tokens"},
		{"claude ok", "name = \"cc\"\nruntime = \"claude\"\nbase_url = \"http://127.0.0.1:8080\"\nmodel = \"m\"\n" +
			"key_env = \"MY_KEY\"\ncommand = \"/opt/claude/bin/claude\"", ""},
		{"claude without base_url", "name = \"cc\"\nruntime = \"claude\"\nmodel = \"m\"", "base_url"},
		{"claude without model", "name = \"cc\"\nruntime = \"claude\"\nbase_url = \"http://h\"", "model"},
		{"claude bad url", "name = \"cc\"\nruntime = \"claude\"\nmodel = \"m\"\nbase_url = \"127.0.0.1:1\"", "base_url"},
		{"claude other provider", "name = \"cc\"\nruntime = \"claude\"\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://h\"", "provider"},
		{"claude command with args", "name = \"cc\"\nruntime = \"claude\"\nmodel = \"m\"\nbase_url = \"http://h\"\ncommand = \"claude --x\"", "command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parse([]byte(tc.text))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to mention %q (%+v)", err, tc.wantErr, p)
			}
		})
	}
	p, _ := parse([]byte(tests[0].text))
	if p.RunTimeout.Duration != 10*time.Minute || p.Stop.Timeout.Duration != 90*time.Second || p.Stop.MaxRounds != 3 {
		t.Fatalf("parsed %+v", p)
	}
}

func TestCodexProfiles(t *testing.T) {
	base := "name = \"cx\"\nruntime = \"codex\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"gpt-5.5\"\n"
	tests := []struct {
		extra, want string
	}{
		{"", ""},
		{"gating = \"advisory\"\n", ""},
		{"mode = \"exec\"\n", ""}, // loads; the runtime refuses it at run time, with the reason
		{"mode = \"exec\"\ngating = \"advisory\"\nsandbox = \"workspace-write\"\n", ""},
		{"key_env = \"OPENAI_API_KEY\"\ncommand = \"/opt/codex\"\n", ""},
		{"gating = \"none\"\n", "gating"},
		{"sandbox = \"danger-full-access\"\n", "never runs Codex without its sandbox"},
		{"mode = \"app-server\"\ngating = \"advisory\"\n", "always gates"},
		{"mode = \"tui\"\n", "mode"},
		{"provider = \"anthropic\"\n", "provider"},
		{"tools = [\"read_file\"]\n", "tools"},
		{"system = \"x\"\n", "not supported"},
		{"command = [\"codex\", \"--yolo\"]\n", "one program"},
	}
	for _, tt := range tests {
		_, err := parse([]byte(base + tt.extra))
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%q: %v, want %q", tt.extra, err, tt.want)
		}
	}
	if _, err := parse([]byte("name = \"cx\"\nruntime = \"codex\"\nmodel = \"gpt-5.5\"\n")); err == nil || !strings.Contains(err.Error(), "base_url") {
		t.Errorf("a codex profile without base_url: %v", err)
	}
	if _, err := parse([]byte("name = \"n\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\ngating = \"advisory\"\n")); err == nil ||
		!strings.Contains(err.Error(), "codex runtime") {
		t.Errorf("gating on a native profile: %v", err)
	}
}

func TestACPProfiles(t *testing.T) {
	tests := []struct {
		name, text string
		line       []string
		err        string
	}{
		{"gemini sugar", `name = "g"` + "\n" + `runtime = "gemini"`, nil, ""},
		{"gemini local server", `name = "g"` + "\n" + `runtime = "gemini"` + "\n" + `base_url = "http://127.0.0.1:8080"` +
			"\n" + `model = "gemini-test"` + "\n" + `key_env = "GEMINI_KEY"`, nil, ""},
		{"gemini command string", `name = "g"` + "\n" + `runtime = "gemini"` + "\n" + `command = "/opt/bin/gemini --acp"`,
			[]string{"/opt/bin/gemini", "--acp"}, ""},
		{"acp array", `name = "a"` + "\n" + `runtime = "acp"` + "\n" + `command = ["my agent", "--acp", "a b"]`,
			[]string{"my agent", "--acp", "a b"}, ""},
		{"acp without command", `name = "a"` + "\n" + `runtime = "acp"`, nil, "command is required"},
		{"acp with model", `name = "a"` + "\n" + `runtime = "acp"` + "\n" + `command = ["x"]` + "\n" + `model = "m"`, nil, "not used"},
		{"gemini with tools", `name = "g"` + "\n" + `runtime = "gemini"` + "\n" + `tools = ["read_file"]`, nil, "tools"},
		{"gemini bad url", `name = "g"` + "\n" + `runtime = "gemini"` + "\n" + `base_url = "ftp://x"`, nil, "base_url"},
		{"claude array", `name = "c"` + "\n" + `runtime = "claude"` + "\n" + `base_url = "http://x"` + "\n" +
			`model = "m"` + "\n" + `command = ["claude", "-p"]`, nil, "name one program"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parse([]byte(tt.text))
			if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if err == nil {
				if d := cmp.Diff(tt.line, p.Command.Line()); d != "" {
					t.Errorf("command line (-want +got):\n%s", d)
				}
			}
		})
	}
}

func TestACPModelProtocol(t *testing.T) {
	for _, tc := range []struct {
		toml string
		ok   bool
	}{
		{"runtime = \"acp\"\ncommand = \"agent\"\nmodel_protocol = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"", true},
		{"runtime = \"acp\"\ncommand = \"agent\"\nmodel_protocol = \"anthropic\"\nkey_env = \"K\"", true},
		{"runtime = \"acp\"\ncommand = \"agent\"\nbase_url = \"http://127.0.0.1:8080/v1\"", false},
		{"runtime = \"acp\"\ncommand = \"agent\"\nmodel_protocol = \"gemini\"", false},
		{"runtime = \"gemini\"\nmodel_protocol = \"openai\"", false},
		{"runtime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\nmodel_protocol = \"openai\"", false},
	} {
		if _, err := parse([]byte("name = \"p\"\n" + tc.toml)); (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.toml, err)
		}
	}
}
