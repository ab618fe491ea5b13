package cli

import (
	"strings"
	"testing"

	"agenthub/backend/confine"
)

func TestConfinementCheck(t *testing.T) {
	tests := []struct {
		name    string
		support confine.Support
		ok      bool
		detail  string
	}{
		{"landlock and network namespaces", confine.Support{ABI: 7, NetNS: true}, true, "Landlock ABI 7: commands and agent CLIs write only"},
		{"landlock without namespaces", confine.Support{ABI: 7, NetNSReason: "refused"}, false,
			"Landlock ABI 7: commands write only in the workspace and a private temp dir; no TCP unless allowed, but UDP (DNS)"},
		{"landlock without TCP rules", confine.Support{ABI: 3, NetNSReason: "refused"}, false, "Landlock ABI 3 confines files but not the network"},
		{"old landlock, namespaces", confine.Support{ABI: 3, NetNS: true}, true, "Landlock ABI 3: commands and agent CLIs write only"},
		{"no landlock", confine.Support{Reason: "the kernel lacks Landlock"}, false, "not confined: the kernel lacks Landlock"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := confinementFor(tc.support)
			if c.ok != tc.ok || !c.optional && !c.ok || !strings.HasPrefix(c.detail, tc.detail) || (!c.ok && c.fix == "") {
				t.Fatalf("%+v", c)
			}
		})
	}
	t.Setenv(confine.SwitchEnv, "off")
	if c := confinementCheck(); c.ok || !strings.Contains(c.detail, confine.SwitchEnv) {
		t.Errorf("switched off: %+v", c)
	}
}
