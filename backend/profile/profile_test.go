package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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
			p, err := Parse([]byte(tc.text))
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
	p, _ := Parse([]byte(tests[0].text))
	if p.RunTimeout.Duration != 10*time.Minute || p.Stop.Timeout.Duration != 90*time.Second || p.Stop.MaxRounds != 3 {
		t.Fatalf("parsed %+v", p)
	}
}

func TestLoadDirSkipsBrokenAndDuplicates(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.toml":     "name = \"a\"\nruntime = \"script\"\nplaybook = \"play.toml\"",
		"b.toml":     "name = \"a\"\nruntime = \"script\"\nplaybook = \"p\"",
		"c.toml":     "name = ",
		"notes.txt":  "ignored",
		"play.toml2": "",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	list, problems := LoadDir(dir)
	if len(list) != 1 || list[0].Name != "a" || list[0].Playbook != filepath.Join(dir, "play.toml") {
		t.Fatalf("profiles: %+v", list)
	}
	if len(problems) != 2 || !strings.Contains(problems[0].Error(), "already exists") {
		t.Fatalf("problems: %v", problems)
	}
	if list, problems := LoadDir(filepath.Join(dir, "missing")); len(list) != 0 || len(problems) != 0 {
		t.Fatalf("a missing directory is no profiles and no problem: %v %v", list, problems)
	}
}
