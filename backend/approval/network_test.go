package approval

import (
	"strings"
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

// TestShellGrantNetwork: a grant from a command approved without the
// network never covers the same command asking for it; one approved with
// the network covers both, says so, and its "always allow" rule carries
// network = true.
func TestShellGrantNetwork(t *testing.T) {
	plain := Action{Kind: backend.ActionShell, Command: "go test ./...", Cwd: "."}
	net := plain
	net.Network = true
	g, err := GrantPattern(plain)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Covers(plain) || g.Covers(net) {
		t.Errorf("a grant without the network: covers plain %v, with network %v", g.Covers(plain), g.Covers(net))
	}
	gn, err := GrantPattern(net)
	if err != nil {
		t.Fatal(err)
	}
	if !gn.Covers(net) || !gn.Covers(plain) || !strings.Contains(gn.Preview(), "with network") {
		t.Errorf("a grant with the network: %+v %q", gn, gn.Preview())
	}
	text, err := AddRule(nil, gn)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePolicy(text)
	if err != nil {
		t.Fatal(err)
	}
	if res := p.Evaluate(net); res.Verdict != backend.Allow {
		t.Errorf("the rule added for a network grant asks for the network command: %s\n%s", res.Reason, text)
	}
}
