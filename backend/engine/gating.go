package engine

import (
	"fmt"
	"slices"
	"strings"

	"agenthub/backend"
	"agenthub/backend/store"
)

// This file is AD2 at Preparing: a run whose policy its runtime cannot
// enforce is refused before the runtime starts, unless the profile accepts
// the runtime's advisory gating, and then that acceptance is recorded.

// gatingCheck is what the policy and the profile say about a runtime's
// advisory gating: the kinds that refuse the run, and the accepted ones.
type gatingCheck struct {
	refused  []backend.ActionKind
	accepted []backend.ActionKind
}

// checkGating decides, for each action kind the runtime only advises on,
// whether the run may go on. Reads never refuse a run: the policy allows
// every read inside the workspace (it has no read rules); what it denies,
// secret files and paths outside the workspace, is denied to AgentHub's own
// tools and to reads AgentHub serves, but an agent CLI reads the disk with
// its own tools, which no setting of AgentHub can gate (docs/PROFILES.md).
// Every other advisory kind the policy gates (asks or denies for some
// subject) refuses the run unless accepted names it. Both lists are sorted.
func checkGating(gating map[backend.ActionKind]backend.Enforcement, accepted []backend.ActionKind,
	gates func(backend.ActionKind) bool) gatingCheck {
	var c gatingCheck
	for k, e := range gating {
		if e != backend.Advisory || k == backend.ActionRead || !gates(k) {
			continue
		}
		if slices.Contains(accepted, k) {
			c.accepted = append(c.accepted, k)
		} else {
			c.refused = append(c.refused, k)
		}
	}
	slices.Sort(c.refused)
	slices.Sort(c.accepted)
	return c
}

// gatingEnding refuses a run whose runtime cannot enforce its policy, or
// records the advisory gating its profile accepted; nil lets it go on. A
// profile without capabilities (the built-in loop, playbooks) enforces
// everything itself.
func (rc *runCtl) gatingEnding() *ending {
	caps := rc.p.Capabilities
	if caps == nil {
		return nil
	}
	// The effective policy: the workspace's, tightened by the profile's
	// overrides (overrides.go), which gate every kind they have a rule for.
	gates := func(backend.ActionKind) bool { return true }
	if kg, ok := rc.e.cfg.Gate.(backend.KindGate); ok {
		gates = func(k backend.ActionKind) bool {
			return kg.Gates(rc.rec.WorkspaceID, k) || rc.p.Policy.Restricts(k)
		}
	}
	p := rc.p
	p.Name = rc.rec.Profile // a recovered run's profile may not carry its name
	c := checkGating(caps.Gating, p.AcceptAdvisory, gates)
	if len(c.refused) > 0 {
		return failedNext(backend.FailRuntimeUnavailable, refusal(p, c.refused), acceptStep(p, c.refused))
	}
	if len(c.accepted) == 0 {
		return nil
	}
	rec := backend.GatingAdvisory{Runtime: p.Runtime, Profile: p.Name, Kinds: c.accepted,
		AcceptedBy: p.AcceptedBy}
	if rec.AcceptedBy == "" {
		rec.AcceptedBy = "accept_advisory"
	}
	err := rc.commit(func(tx *store.Tx) error {
		if _, err := tx.Append(rc.rec.ID, backend.EvGatingAdvisory, rec); err != nil {
			return err
		}
		_, err := tx.Audit(backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine,
			Kind: "gating.advisory_accepted", RunID: rc.rec.ID, Data: map[string]any{"runtime": rec.Runtime,
				"profile": rec.Profile, "kinds": kindNames(rec.Kinds), "acceptedBy": rec.AcceptedBy}})
		return err
	})
	if err != nil {
		return failed(backend.FailInternal, "could not record the accepted advisory gating")
	}
	return nil
}

// refusal is the safe message of a refused run: the runtime and the kinds.
func refusal(p Profile, kinds []backend.ActionKind) string {
	return fmt.Sprintf("the %s runtime cannot enforce this run's policy for %s: the policy (the workspace's, "+
		"tightened by the profile) asks or denies some of these actions, but %s may run them without asking "+
		"AgentHub (its gating of them is advisory)",
		p.Runtime, strings.Join(kindNames(kinds), ", "), runtimeName(p.Runtime))
}

// acceptStep is the next step of a refused run: the profile setting that
// accepts the advisory gating of those kinds.
func acceptStep(p Profile, kinds []backend.ActionKind) string {
	quoted := make([]string, len(kinds))
	for i, k := range kinds {
		quoted[i] = fmt.Sprintf("%q", string(k))
	}
	return fmt.Sprintf("To run anyway and have AgentHub only record these actions, add accept_advisory = [%s] "+
		"to the profile %q (docs/PROFILES.md); or choose a profile whose runtime enforces them.",
		strings.Join(quoted, ", "), p.Name)
}

func kindNames(kinds []backend.ActionKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}

// runtimeName names a runtime's CLI in messages.
func runtimeName(runtime string) string {
	switch runtime {
	case "claude":
		return "Claude Code"
	case "codex":
		return "Codex"
	case "gemini":
		return "Gemini CLI"
	}
	return "the agent"
}
