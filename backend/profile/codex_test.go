package profile

import (
	"strings"
	"testing"
)

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
		_, err := Parse([]byte(base + tt.extra))
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%q: %v, want %q", tt.extra, err, tt.want)
		}
	}
	if _, err := Parse([]byte("name = \"cx\"\nruntime = \"codex\"\nmodel = \"gpt-5.5\"\n")); err == nil || !strings.Contains(err.Error(), "base_url") {
		t.Errorf("a codex profile without base_url: %v", err)
	}
	if _, err := Parse([]byte("name = \"n\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\ngating = \"advisory\"\n")); err == nil ||
		!strings.Contains(err.Error(), "codex runtime") {
		t.Errorf("gating on a native profile: %v", err)
	}
}
