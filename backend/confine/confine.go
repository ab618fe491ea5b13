// Package confine describes what the operating system lets a process that
// AgentHub starts do, and applies it: on Linux with Landlock, an approved
// command or an agent CLI may write only beneath the directories it names,
// read only beneath the ones it names, and connect over TCP only to the
// ports it names. It holds no policy of its own: callers say which
// directories (the workspace, a private temp dir, a CLI's state dir) and
// proc applies the rules in the process it starts, before the command runs.
//
// Where the kernel lacks Landlock nothing is confined, and [Describe] says so
// in words the approval and doctor show.
package confine

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Dir is a path beneath which access is granted, and the words that name it
// to the user ("workspace", "private temp"): previews never show machine
// paths.
type Dir struct {
	Path  string `json:"path"`
	Label string `json:"label"`
}

// Network is what a confined process may do over TCP. The zero value is no
// TCP connect and no TCP bind at all.
type Network struct {
	// Any leaves TCP unrestricted (network access was approved).
	Any bool `json:"any,omitempty"`
	// ConnectTCP are the ports the process may connect to, on any host:
	// Landlock rules name ports, not addresses.
	ConnectTCP []uint16 `json:"connectTcp,omitempty"`
}

// Rules is the confinement of one process and everything it starts.
type Rules struct {
	// Read are the paths the process may read and execute beneath. Nothing
	// else is readable: callers start from [System].
	Read []Dir `json:"read"`
	// Write are the paths the process may read, write, create and remove
	// beneath.
	Write []Dir `json:"write"`
	// PrivateTemp asks proc for a temp dir of this process alone (mode
	// 0700, removed when it ends): writable, and TMPDIR names it.
	PrivateTemp bool    `json:"privateTemp,omitempty"`
	Network     Network `json:"network"`
	// NoUnixSockets makes socket(AF_UNIX) fail (a seccomp filter): the
	// file rules do not govern connecting to a UNIX socket before Landlock
	// ABI 9, so this keeps a command off the sockets of the user's other
	// programs (Docker, ssh-agent, a git credential cache).
	NoUnixSockets bool `json:"noUnixSockets,omitempty"`
}

// Labels for the directories the callers name.
const (
	LabelSystem    = "system"
	LabelWorkspace = "workspace"
	LabelTemp      = "private temp"
	LabelTools     = "tools on PATH"
	LabelGitConfig = "git config"
	LabelState     = "agent state"
	LabelInstall   = "agent install"
	LabelDevices   = "devices"
	LabelCaches    = "build caches"
)

// systemDirs are read by everything: programs, libraries, configuration,
// certificates, the process table (Landlock keeps another domain's
// /proc/PID/environ and memory out of reach: they need ptrace access).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/nix/store", "/snap", "/run", "/proc", "/sys"}

// System is the read set every confined process gets: the system's
// programs, libraries and configuration, and the devices (also written:
// /dev/null, a terminal).
func System() []Dir {
	var out []Dir
	for _, d := range systemDirs {
		out = append(out, Dir{Path: d, Label: LabelSystem})
	}
	return append(out, Dir{Path: "/dev", Label: LabelDevices})
}

// PathDirs are the directories of a PATH value, readable so that the tools
// found there (also under the user's home: nvm, cargo, ~/.local/bin) run.
func PathDirs(path string) []Dir {
	var out []Dir
	for _, d := range filepath.SplitList(path) {
		if filepath.IsAbs(d) && !slices.ContainsFunc(out, func(x Dir) bool { return x.Path == d }) {
			out = append(out, Dir{Path: d, Label: LabelTools})
		}
	}
	return out
}

// ForCommand is the confinement of an approved command run in workspace
// with the given PATH: it reads the system, the tools on PATH, the user's
// git configuration and the workspace; it writes the workspace and a
// private temp dir; no TCP unless network was approved; no UNIX sockets.
func ForCommand(workspace, path, home string, network Network) Rules {
	read := append(System(), PathDirs(path)...)
	if home != "" {
		read = append(read, Dir{Path: filepath.Join(home, ".gitconfig"), Label: LabelGitConfig},
			Dir{Path: filepath.Join(home, ".config", "git"), Label: LabelGitConfig})
	}
	read = append(read, Dir{Path: workspace, Label: LabelWorkspace})
	return Rules{Read: read, Write: []Dir{{Path: workspace, Label: LabelWorkspace}}, PrivateTemp: true,
		Network: network, NoUnixSockets: true}
}

// Support is what the running kernel offers.
type Support struct {
	// ABI is the Landlock ABI version; 0 means no Landlock.
	ABI int `json:"abi"`
	// Reason says why there is none.
	Reason string `json:"reason,omitempty"`
	// NetNS is whether a process can be started in network and user
	// namespaces of its own (no network at all: TCP, UDP, DNS, raw);
	// NetNSReason says why not.
	NetNS       bool   `json:"netns,omitempty"`
	NetNSReason string `json:"netnsReason,omitempty"`
}

// Isolated reports whether r keeps its process off the network in a
// namespace of its own on a kernel with support s: it may use no network
// at all (not granted, no ports), and the kernel can isolate it.
func (r Rules) Isolated(s Support) bool {
	return s.NetNS && !r.Network.Any && len(r.Network.ConnectTCP) == 0
}

// SwitchEnv, set to "off" in AgentHub's environment, turns confinement
// off (to tell whether it is what breaks a command); doctor and every
// approval then say that nothing is confined.
const SwitchEnv = "AGENTHUB_LANDLOCK"

// NetNSSwitchEnv, set to "off", stops proc from starting commands in a
// network namespace (to tell whether it is what breaks a command, and to
// test the fallback to Landlock's TCP rules): doctor and every approval
// then say what the network confinement no longer covers.
const NetNSSwitchEnv = "AGENTHUB_NETNS"

// Probe asks the kernel which Landlock ABI it supports and whether it
// lets us create network namespaces (probed once per process).
func Probe() Support {
	var s Support
	if strings.EqualFold(os.Getenv(SwitchEnv), "off") {
		s = Support{Reason: "switched off by " + SwitchEnv + "=off"}
	} else {
		s = probe()
	}
	if strings.EqualFold(os.Getenv(NetNSSwitchEnv), "off") {
		s.NetNSReason = "network namespaces switched off by " + NetNSSwitchEnv + "=off"
	} else {
		s.NetNS, s.NetNSReason = probeNetNS()
	}
	return s
}

// Summary is what confinement applies, for the approval dialog and doctor:
// labels, never paths.
type Summary struct {
	Confined bool     `json:"confined"`
	ABI      int      `json:"abi,omitempty"`
	Reads    []string `json:"reads,omitempty"`
	Writes   []string `json:"writes,omitempty"`
	// Network is one of the Net values; Ports are the TCP ports of
	// NetPorts; NetworkBy is the mechanism that enforces it (NetBy values).
	Network   string   `json:"network,omitempty"`
	Ports     []uint16 `json:"ports,omitempty"`
	NetworkBy string   `json:"networkBy,omitempty"`
	// Reason says what is not confined and why ("kernel lacks Landlock").
	Reason string `json:"reason,omitempty"`
	// NoUnixSockets: the process can open no UNIX socket (Rules.NoUnixSockets).
	NoUnixSockets bool `json:"noUnixSockets,omitempty"`
}

// Summary.Network values.
const (
	NetNone         = "none"           // no network at all (a namespace of its own)
	NetNoTCP        = "no tcp"         // no TCP connect or bind; UDP is not restricted
	NetAny          = "any"            // network access was approved
	NetPorts        = "ports"          // TCP connect to Ports only
	NetUnrestricted = "not restricted" // the kernel cannot restrict TCP
)

// Summary.NetworkBy values.
const (
	NetByNamespace = "network namespace" // no interface but a private loopback
	NetByLandlock  = "landlock"          // TCP bind and connect rules
)

// Text is the summary on one line, in English, for logs and the CLI.
func (s Summary) Text() string {
	if !s.Confined {
		t := "not confined: " + s.Reason
		if s.Network == NetNone {
			t += "; network: none (" + s.NetworkBy + ")"
		}
		return t
	}
	list := func(l []string) string {
		if len(l) == 0 {
			return "nothing"
		}
		return strings.Join(l, ", ")
	}
	network := s.Network
	if s.Network == NetPorts {
		ports := make([]string, len(s.Ports))
		for i, p := range s.Ports {
			ports[i] = strconv.Itoa(int(p))
		}
		network = "tcp ports " + strings.Join(ports, ", ")
	}
	if s.NetworkBy != "" {
		network += " (" + s.NetworkBy + ")"
	}
	t := "writes: " + list(s.Writes) + "; reads: " + list(s.Reads)
	if s.NoUnixSockets {
		t += "; UNIX sockets: none"
	}
	t += "; network: " + network
	if s.Reason != "" {
		t += " (" + s.Reason + ")"
	}
	return t
}

// Describe says what r confines on a kernel with support s.
func Describe(r Rules, s Support) Summary {
	if s.ABI < 1 {
		reason := s.Reason
		if reason == "" {
			reason = "the kernel lacks Landlock"
		}
		out := Summary{Reason: reason, NoUnixSockets: r.NoUnixSockets}
		if r.Isolated(s) { // the namespace needs no Landlock
			out.Network, out.NetworkBy = NetNone, NetByNamespace
		}
		return out
	}
	out := Summary{Confined: true, ABI: s.ABI, Reads: labels(r.Read), Writes: labels(r.Write),
		NoUnixSockets: r.NoUnixSockets}
	if r.PrivateTemp {
		out.Writes = append(out.Writes, LabelTemp)
	}
	switch {
	case r.Network.Any:
		out.Network = NetAny
	case r.Isolated(s):
		out.Network, out.NetworkBy = NetNone, NetByNamespace
	case s.ABI < 4:
		out.Network = NetUnrestricted
		out.Reason = "Landlock ABI " + strconv.Itoa(s.ABI) + " cannot restrict TCP (4 can)"
		if len(r.Network.ConnectTCP) == 0 && s.NetNSReason != "" {
			out.Reason += "; " + s.NetNSReason
		}
	case len(r.Network.ConnectTCP) == 0:
		out.Network, out.NetworkBy = NetNoTCP, NetByLandlock
		out.Reason = "UDP and raw sockets are not restricted: " + s.NetNSReason
	default:
		out.Network, out.Ports, out.NetworkBy = NetPorts, slices.Clone(r.Network.ConnectTCP), NetByLandlock
	}
	return out
}

func labels(dirs []Dir) []string {
	var out []string
	for _, d := range dirs {
		if d.Label != "" && !slices.Contains(out, d.Label) {
			out = append(out, d.Label)
		}
	}
	return out
}
