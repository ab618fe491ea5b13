package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"agenthub/backend"
)

// TestRunShellStreamsOutput: a command's output arrives as run.tool.delta
// events of its call while it runs, scrubbed of machine paths, cut only at
// line ends or spaces, and bounded.
func TestRunShellStreamsOutput(t *testing.T) {
	tests := []struct {
		name, command string
		want          func(t *testing.T, joined string)
	}{
		{"stdout and stderr, paths scrubbed", `echo one; echo "$PWD/two" >&2; sleep 0.1; echo three`,
			func(t *testing.T, joined string) {
				for _, line := range []string{"one\n", "./two\n", "three\n"} {
					if !strings.Contains(joined, line) {
						t.Errorf("stream lacks %q: %q", line, joined)
					}
				}
			}},
		{"a token split across writes stays whole", `printf 'key sk-ant-api03-'; sleep 0.1; printf 'abcdefghijklmnopqrstuvwxyz0123456789\n'`,
			func(t *testing.T, joined string) {
				if !strings.Contains(joined, "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789\n") {
					t.Errorf("stream cut the token: %q", joined)
				}
			}},
		{"bounded", `head -c 300000 /dev/zero | tr '\0' a`,
			func(t *testing.T, joined string) {
				if len(joined) != maxStreamedShellOutput {
					t.Errorf("streamed %d bytes, want %d", len(joined), maxStreamedShellOutput)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			args, _ := json.Marshal(shellArgs{Command: tc.command})
			f.execute(t, RunShell, string(args))
			var joined strings.Builder
			deltas := f.eventsOf(backend.EvToolDelta)
			for _, d := range deltas {
				p := d.(map[string]string)
				if p["toolCallId"] != "call_1" {
					t.Errorf("delta of call %q", p["toolCallId"])
				}
				text := p["text"]
				if strings.Contains(text, "sk-ant") && !strings.Contains(text, "0123456789") {
					t.Errorf("a delta ends inside a token: %q", text)
				}
				joined.WriteString(text)
			}
			f.noMachinePaths(t, "stream", joined.String())
			tc.want(t, joined.String())
		})
	}
}
