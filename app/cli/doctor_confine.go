package cli

import (
	"fmt"

	"agenthub/backend/confine"
)

// confinementCheck says what confines approved commands and agent CLIs on
// this kernel. It warns, never fails: without Landlock they run as before,
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
			detail: fmt.Sprintf("Landlock ABI %d confines files but not TCP", s.ABI),
			fix:    "use Linux 6.7 or later (Landlock ABI 4) to keep commands off the network"}
	}
	return check{name: "confinement", ok: true, detail: fmt.Sprintf(
		"Landlock ABI %d: commands and agent CLIs write only in the workspace, a private temp dir and a CLI's state dir; no TCP unless allowed",
		s.ABI)}
}
