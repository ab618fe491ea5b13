package profile

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
			p, err := Parse([]byte(tt.text))
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
		if _, err := Parse([]byte("name = \"p\"\n" + tc.toml)); (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.toml, err)
		}
	}
}
