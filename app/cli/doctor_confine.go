package cli

import (
	"fmt"

	"agenthub/backend/confine"
)

// confinementCheck says what confines approved commands and agent CLIs on
// this kernel, and by which mechanism a command without the network is
// kept off it. It warns, never fails: without Landlock they run as before,
// behind the approvals alone.
func confinementCheck() check {
	return confinementFor(confine.Probe())
}

func confinementFor(s confine.Support) check {
	summary := confine.Describe(confine.ForCommand("/", "", "", confine.Network{}), s)
	switch {
	case !summary.Confined:
		return check{name: "confinement", optional: true, detail: summary.Text(),
			fix: "use Linux 5.13 or later with Landlock enabled (landlock in the lsm= boot parameter); 6.7 or later also confines TCP"}
	case summary.Network == confine.NetUnrestricted:
		return check{name: "confinement", optional: true,
			detail: fmt.Sprintf("Landlock ABI %d confines files but not the network (%s)", s.ABI, s.NetNSReason),
			fix:    "allow unprivileged user namespaces (network namespaces), or use Linux 6.7 or later (Landlock ABI 4) to keep commands off TCP"}
	case summary.Network == confine.NetNoTCP:
		return check{name: "confinement", optional: true,
			detail: fmt.Sprintf("Landlock ABI %d: commands write only in the workspace and a private temp dir; no TCP unless allowed, "+
				"but UDP (DNS) and raw sockets are not restricted: %s", s.ABI, s.NetNSReason),
			fix: "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the AppArmor userns restriction off for AgentHub)"}
	}
	return check{name: "confinement", ok: true, detail: fmt.Sprintf(
		"Landlock ABI %d: commands and agent CLIs write only in the workspace, a private temp dir and a CLI's state dir; "+
			"a command without network access runs in a network namespace of its own (no TCP, UDP, DNS or raw sockets)",
		s.ABI)}
}
