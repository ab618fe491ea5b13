package confine

import (
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	cmd := ForCommand("/w", "/usr/bin:/bin", "/h", Network{})
	tests := []struct {
		name    string
		rules   Rules
		support Support
		want    string
	}{
		{"command", cmd, Support{ABI: 7, NetNS: true},
			"writes: workspace, private temp; reads: system, devices, tools on PATH, git config, workspace; UNIX sockets: none; network: none (network namespace)"},
		{"command without namespaces", cmd, Support{ABI: 7, NetNSReason: "the kernel refuses"},
			"network: no tcp (landlock) (UDP and raw sockets are not restricted: the kernel refuses)"},
		{"namespace without Landlock", cmd, Support{Reason: "the kernel lacks Landlock", NetNS: true},
			"not confined: the kernel lacks Landlock; network: none (network namespace)"},
		{"namespace before ABI 4", cmd, Support{ABI: 3, NetNS: true}, "network: none (network namespace)"},
		{"approved network", ForCommand("/w", "", "", Network{Any: true}), Support{ABI: 7, NetNS: true},
			"writes: workspace, private temp; reads: system, devices, workspace; UNIX sockets: none; network: any"},
		{"model port", Rules{Write: []Dir{{Path: "/w", Label: LabelWorkspace}, {Path: "/s", Label: LabelState}},
			Network: Network{ConnectTCP: []uint16{8080}}}, Support{ABI: 4, NetNS: true}, "writes: workspace, agent state; reads: nothing; network: tcp ports 8080 (landlock)"},
		{"no TCP rules before ABI 4", cmd, Support{ABI: 3}, "network: not restricted (Landlock ABI 3 cannot restrict TCP (4 can))"},
		{"no Landlock", cmd, Support{Reason: "the kernel lacks Landlock"}, "not confined: the kernel lacks Landlock"},
		{"no reason given", cmd, Support{}, "not confined: the kernel lacks Landlock"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Describe(tc.rules, tc.support).Text(); !strings.HasSuffix(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSwitchOff(t *testing.T) {
	t.Setenv(SwitchEnv, "off")
	if s := Probe(); s.ABI != 0 || !strings.Contains(s.Reason, SwitchEnv) {
		t.Fatalf("%+v", s)
	}
}

func TestPathDirs(t *testing.T) {
	got := PathDirs("/usr/bin::relative:/usr/bin:/opt/x/bin")
	if len(got) != 2 || got[0].Path != "/usr/bin" || got[1].Path != "/opt/x/bin" {
		t.Fatalf("%+v", got)
	}
}
