package profile

import (
	"fmt"
	"slices"
)

// Action kinds accept_advisory may name: the kinds an external runtime
// declares gating for (backend.Capabilities). The names are those of
// backend.ActionKind; this package stays free of the backend vocabulary.
var advisoryKinds = []string{"read", "write", "patch", "shell", "network"}

// validateAdvisory checks accept_advisory: only external runtimes gate
// advisorily, each kind is named once, and only kinds a runtime declares.
func (p Profile) validateAdvisory() error {
	if len(p.AcceptAdvisory) == 0 {
		return nil
	}
	if p.Runtime == RuntimeNative || p.Runtime == RuntimeScript {
		return fmt.Errorf("accept_advisory: the %s runtime gates every action itself; leave it out", p.Runtime)
	}
	for i, k := range p.AcceptAdvisory {
		if !slices.Contains(advisoryKinds, k) {
			return fmt.Errorf("accept_advisory: %q: use read, write, patch, shell or network", k)
		}
		if slices.Contains(p.AcceptAdvisory[:i], k) {
			return fmt.Errorf("accept_advisory: %q is named twice", k)
		}
	}
	return nil
}

// AcceptsAdvisory lists the action kinds whose advisory gating the profile
// accepts, and the setting that says so: accept_advisory, or for Codex
// gating = "advisory", which accepts every kind (exec --json asks for
// nothing). The engine refuses a run whose runtime only advises on a kind
// the policy gates, unless it is listed here.
func (p Profile) AcceptsAdvisory() (kinds []string, by string) {
	if p.Runtime == RuntimeCodex && p.Gating == GatingAdvisory {
		return slices.Clone(advisoryKinds), `gating = "advisory"`
	}
	if len(p.AcceptAdvisory) == 0 {
		return nil, ""
	}
	return slices.Clone(p.AcceptAdvisory), "accept_advisory"
}
