package approval

import (
	"testing"

	"agenthub/backend"
)

// TestShellNetworkNeedsItsOwnAllow: a command that asks for the network
// (run_shell's network argument) is a capability the rule must grant by
// name: an allow rule for the command alone asks; network = true allows;
// a deny still denies.
func TestShellNetworkNeedsItsOwnAllow(t *testing.T) {
	p, err := ParsePolicy([]byte(`version = 1
[[shell]]
id = "go"
prefix = ["go", "test"]
verdict = "allow"
[[shell]]
id = "npm"
prefix = ["npm", "install"]
verdict = "allow"
network = true
[[shell]]
id = "no-curl"
prefix = ["curl"]
verdict = "deny"
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		command string
		network bool
		want    backend.Verdict
	}{
		{"go test ./...", false, backend.Allow},
		{"go test ./...", true, backend.Ask},
		{"npm install", true, backend.Allow},
		{"npm install", false, backend.Allow},
		{"npm install && go test ./...", true, backend.Ask},
		{"curl https://example.com", true, backend.Deny},
	}
	for _, tc := range tests {
		res := p.Evaluate(Action{Kind: backend.ActionShell, Command: tc.command, Network: tc.network})
		if res.Verdict != tc.want {
			t.Errorf("%q network=%v: %s (%s), want %s", tc.command, tc.network, res.Verdict, res.Reason, tc.want)
		}
	}
}
