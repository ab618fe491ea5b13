package profile

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAcceptAdvisory(t *testing.T) {
	const gemini = `name = "g"` + "\n" + `runtime = "gemini"` + "\n"
	const codex = `name = "c"` + "\n" + `runtime = "codex"` + "\n" + `base_url = "http://127.0.0.1:1/v1"` + "\n" +
		`model = "gpt-5.5"` + "\n"
	tests := []struct {
		name, text string
		kinds      []string
		by, err    string
	}{
		{"none", gemini, nil, "", ""},
		{"gemini shell", gemini + `accept_advisory = ["shell"]`, []string{"shell"}, "accept_advisory", ""},
		{"acp several", `name = "a"` + "\n" + `runtime = "acp"` + "\n" + `command = ["x"]` + "\n" +
			`accept_advisory = ["shell", "network", "write"]`, []string{"shell", "network", "write"}, "accept_advisory", ""},
		{"codex advisory accepts every kind", codex + `gating = "advisory"`,
			[]string{"read", "write", "patch", "shell", "network"}, `gating = "advisory"`, ""},
		{"codex enforced", codex, nil, "", ""},
		{"unknown kind", gemini + `accept_advisory = ["shel"]`, nil, "", `"shel": use read, write, patch, shell or network`},
		{"kind that is never advisory", gemini + `accept_advisory = ["push"]`, nil, "", `"push"`},
		{"named twice", gemini + `accept_advisory = ["shell", "shell"]`, nil, "", "named twice"},
		{"native", `name = "n"` + "\n" + `runtime = "native"` + "\n" + `provider = "openai"` + "\n" + `model = "m"` + "\n" +
			`accept_advisory = ["shell"]`, nil, "", "gates every action itself"},
		{"not a list", gemini + `accept_advisory = "shell"`, nil, "", "AcceptAdvisory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse([]byte(tt.text))
			if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if err != nil {
				return
			}
			kinds, by := p.AcceptsAdvisory()
			if d := cmp.Diff(tt.kinds, kinds); d != "" || by != tt.by {
				t.Fatalf("AcceptsAdvisory = %v, %q; want %v, %q (%s)", kinds, by, tt.kinds, tt.by, d)
			}
		})
	}
}
