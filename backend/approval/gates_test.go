package approval

import (
	"testing"

	"agenthub/backend"
)

func TestPolicyGates(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		kind   backend.ActionKind
		want   bool
	}{
		{"default reads (secret files are denied)", "", backend.ActionRead, true},
		{"default writes", "", backend.ActionWrite, true},
		{"default patches", "", backend.ActionPatch, true},
		{"default shell", "", backend.ActionShell, true},
		{"default network", "", backend.ActionNetwork, true},
		{"unknown kind", "", backend.ActionKind("teleport"), true},
		{"writes allowed everywhere still deny .agenthub/", "version = 1\n[[write]]\nglob = \"**\"\nverdict = \"allow\"\n",
			backend.ActionWrite, true},
		{"shell with broad allow rules", "version = 1\n[[shell]]\nprefix = [\"ls\"]\nverdict = \"allow\"\n",
			backend.ActionShell, true},
		{"network allowed for every host", "version = 1\n[[network]]\nhost = \"*\"\nverdict = \"allow\"\n",
			backend.ActionNetwork, false},
		{"network allowed for every host with **", "version = 1\n[[network]]\nhost = \"**\"\nverdict = \"allow\"\n",
			backend.ActionNetwork, false},
		{"network allowed for GET only", "version = 1\n[[network]]\nhost = \"*\"\nmethod = \"GET\"\nverdict = \"allow\"\n",
			backend.ActionNetwork, true},
		{"network allowed for one host", "version = 1\n[[network]]\nhost = \"example.com\"\nverdict = \"allow\"\n",
			backend.ActionNetwork, true},
		{"network allowed but one host denied",
			"version = 1\n[[network]]\nhost = \"*\"\nverdict = \"allow\"\n[[network]]\nhost = \"evil.test\"\nverdict = \"deny\"\n",
			backend.ActionNetwork, true},
		{"push always asks", "version = 1\n[[git]]\naction = \"push\"\nverdict = \"allow\"\n", backend.ActionPush, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePolicy([]byte(tt.policy))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Gates(tt.kind); got != tt.want {
				t.Fatalf("Gates(%s) = %v, want %v", tt.kind, got, tt.want)
			}
		})
	}
}

// TestGateGatesBrokenPolicy: a policy file that cannot be used gates every
// kind, like the gate's every-action-asks (fail closed).
func TestGateGatesBrokenPolicy(t *testing.T) {
	root := t.TempDir()
	writePolicy(t, root, "version = 1\n[[network]]\nhost = \"*\"\nverdict = \"allow\"\n")
	g := NewGate(func(string) (string, error) { return root, nil })
	if g.Gates("ws", backend.ActionNetwork) {
		t.Fatal("an allow-every-host policy gates network")
	}
	writePolicy(t, root, "version = 1\n[[network]]\nhost = \"*\"\nverdict = \"maybe\"\n")
	g = NewGate(func(string) (string, error) { return root, nil })
	if !g.Gates("ws", backend.ActionNetwork) {
		t.Fatal("a broken policy does not gate network")
	}
}

func TestOverridesRestrict(t *testing.T) {
	over := &Policy{Network: []NetworkRule{{Host: "evil.test", Verdict: backend.Deny}},
		Git: []GitRule{{Action: "push", Verdict: backend.Deny}}}
	for kind, want := range map[backend.ActionKind]bool{backend.ActionNetwork: true, backend.ActionPush: true,
		backend.ActionCommit: false, backend.ActionShell: false, backend.ActionRead: false, backend.ActionWrite: false} {
		if got := over.Restricts(kind); got != want {
			t.Errorf("Restricts(%s) = %v, want %v", kind, got, want)
		}
	}
	if (*Policy)(nil).Restricts(backend.ActionNetwork) {
		t.Error("no overrides restrict network")
	}
}
