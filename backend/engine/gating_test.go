package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/approval"

	"github.com/google/go-cmp/cmp"
)

func TestCheckGating(t *testing.T) {
	const (
		R, W, P, S, N = backend.ActionRead, backend.ActionWrite, backend.ActionPatch, backend.ActionShell,
			backend.ActionNetwork
		adv, enf = backend.Advisory, backend.Enforced
	)
	all := func(backend.ActionKind) bool { return true }
	noNetwork := func(k backend.ActionKind) bool { return k != N }
	tests := []struct {
		name             string
		gating           map[backend.ActionKind]backend.Enforcement
		accepted         []backend.ActionKind
		gates            func(backend.ActionKind) bool
		refused, records []backend.ActionKind
	}{
		{name: "everything enforced", gating: map[backend.ActionKind]backend.Enforcement{R: enf, W: enf, S: enf},
			gates: all},
		{name: "advisory reads never refuse", gating: map[backend.ActionKind]backend.Enforcement{R: adv, W: enf},
			gates: all},
		{name: "advisory shell under an asking policy",
			gating: map[backend.ActionKind]backend.Enforcement{R: adv, W: enf, P: enf, S: adv, N: enf},
			gates:  all, refused: []backend.ActionKind{S}},
		{name: "every advisory kind is named, sorted",
			gating: map[backend.ActionKind]backend.Enforcement{R: adv, W: adv, P: adv, S: adv, N: adv},
			gates:  all, refused: []backend.ActionKind{N, P, S, W}},
		{name: "accepted kinds are recorded, the others refuse",
			gating:   map[backend.ActionKind]backend.Enforcement{R: adv, S: adv, N: adv},
			accepted: []backend.ActionKind{S}, gates: all,
			refused: []backend.ActionKind{N}, records: []backend.ActionKind{S}},
		{name: "everything accepted", gating: map[backend.ActionKind]backend.Enforcement{R: adv, S: adv, N: adv},
			accepted: []backend.ActionKind{N, S, R}, gates: all, records: []backend.ActionKind{N, S}},
		{name: "a kind the policy allows whole does not refuse",
			gating: map[backend.ActionKind]backend.Enforcement{S: enf, N: adv}, gates: noNetwork},
		{name: "an accepted kind the policy allows whole is not recorded",
			gating:   map[backend.ActionKind]backend.Enforcement{S: adv, N: adv},
			accepted: []backend.ActionKind{S, N}, gates: noNetwork, records: []backend.ActionKind{S}},
		{name: "accepting an enforced kind changes nothing",
			gating:   map[backend.ActionKind]backend.Enforcement{S: enf},
			accepted: []backend.ActionKind{S}, gates: all},
		{name: "no capabilities", gates: all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkGating(tt.gating, tt.accepted, tt.gates)
			if diff := cmp.Diff(tt.refused, got.refused); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.records, got.accepted); diff != "" {
				t.Errorf("accepted (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAdvisoryGatingRefusedAtPreparing runs an external-runtime profile
// whose shell gating is advisory through the real engine, the policy gate
// and SQLite: under the default policy (shell asks) the run fails at
// Preparing with runtime_unavailable and the next step naming
// accept_advisory, before the runtime (the model) starts; with the kind
// accepted the run goes on and the acceptance is recorded as an event and
// in the audit trail; with a policy that allows every host, advisory
// network gating refuses nothing.
func TestAdvisoryGatingRefusedAtPreparing(t *testing.T) {
	root, db := newWorkspace(t)
	g := newGated(t, root, db)
	defer g.close(t)
	caps := &backend.Capabilities{Gating: map[backend.ActionKind]backend.Enforcement{
		backend.ActionRead: backend.Advisory, backend.ActionWrite: backend.Enforced,
		backend.ActionPatch: backend.Enforced, backend.ActionShell: backend.Advisory,
		backend.ActionNetwork: backend.Advisory}}
	start := func(name string, p Profile) (backend.RunSummary, *hookedModel) {
		t.Helper()
		m := &hookedModel{steps: []backend.ModelResponse{{Text: "done"}}}
		p.Runtime, p.Model, p.Stop, p.Capabilities = "gemini", m, DefaultStop, caps
		g.e.AddProfile(name, p)
		r, err := g.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Profile: name, Task: "t",
			Actor: "me", Surface: backend.SurfaceCLI})
		if err != nil {
			t.Fatal(err)
		}
		return r, m
	}

	t.Run("refused", func(t *testing.T) {
		r, m := start("gm", Profile{})
		got := g.wait(t, r.ID, backend.RunFailed)
		if got.Failure == nil || got.Failure.Code != backend.FailRuntimeUnavailable {
			t.Fatalf("failure = %+v", got.Failure)
		}
		for _, want := range []string{"gemini runtime", "network, shell", "Gemini CLI"} {
			if !strings.Contains(got.Failure.Message, want) {
				t.Errorf("message %q does not name %q", got.Failure.Message, want)
			}
		}
		if want := `add accept_advisory = ["network", "shell"] to the profile "gm"`; !strings.Contains(got.Failure.Next, want) {
			t.Errorf("next = %q, want it to contain %q", got.Failure.Next, want)
		}
		if strings.Contains(got.Failure.Message, "accept_advisory") {
			t.Errorf("the message repeats the next step: %q", got.Failure.Message)
		}
		if m.calls != 0 {
			t.Fatalf("the runtime started %d times", m.calls)
		}
		evs, err := g.e.Events(t.Context(), r.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var types []backend.EventType
		var ended, unavailable map[string]any
		for _, ev := range evs {
			types = append(types, ev.Type)
			switch ev.Type {
			case backend.EvRunFailed:
				_ = json.Unmarshal(ev.Payload, &ended)
			case backend.EvRuntimeUnavailable:
				_ = json.Unmarshal(ev.Payload, &unavailable)
			}
		}
		want := []backend.EventType{backend.EvRunCreated, backend.EvRunStatusChanged, backend.EvRunStatusChanged,
			backend.EvRunStatusChanged, backend.EvRuntimeUnavailable, backend.EvRunFailed}
		if diff := cmp.Diff(want, types); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
		if ended["next"] != got.Failure.Next || ended["recovery"] != backend.Recovery[backend.FailRuntimeUnavailable] ||
			ended["code"] != string(backend.FailRuntimeUnavailable) || unavailable["next"] != got.Failure.Next {
			t.Fatalf("run.failed = %v\nruntime.unavailable = %v", ended, unavailable)
		}
	})

	t.Run("accepted", func(t *testing.T) {
		r, m := start("gm-ok", Profile{AcceptAdvisory: []backend.ActionKind{backend.ActionShell,
			backend.ActionNetwork}, AcceptedBy: "accept_advisory"})
		g.wait(t, r.ID, backend.RunCompleted)
		if m.calls != 1 {
			t.Fatalf("model calls = %d", m.calls)
		}
		evs, err := g.e.Events(t.Context(), r.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var rec []backend.GatingAdvisory
		for _, ev := range evs {
			if ev.Type == backend.EvGatingAdvisory {
				var p backend.GatingAdvisory
				if err := json.Unmarshal(ev.Payload, &p); err != nil {
					t.Fatal(err)
				}
				rec = append(rec, p)
			}
		}
		want := []backend.GatingAdvisory{{Runtime: "gemini", Profile: "gm-ok",
			Kinds: []backend.ActionKind{backend.ActionNetwork, backend.ActionShell}, AcceptedBy: "accept_advisory"}}
		if diff := cmp.Diff(want, rec); diff != "" {
			t.Fatalf("runtime.gating_advisory (-want +got):\n%s", diff)
		}
		if !slices.Contains(g.auditKinds(t), "gating.advisory_accepted/engine") {
			t.Fatalf("audit: %v", g.auditKinds(t))
		}
	})

	t.Run("policy allows every host", func(t *testing.T) {
		setPolicy(t, root, "version = 1\n[[network]]\nhost = \"*\"\nverdict = \"allow\"\n")
		r, _ := start("gm-net", Profile{AcceptAdvisory: []backend.ActionKind{backend.ActionShell}})
		g.wait(t, r.ID, backend.RunCompleted)
		// The profile's overrides tighten the effective policy: a deny rule
		// for one host gates network again.
		over := &approval.Policy{Version: 1, Network: []approval.NetworkRule{{Host: "evil.test", Verdict: backend.Deny}}}
		r, m := start("gm-over", Profile{AcceptAdvisory: []backend.ActionKind{backend.ActionShell}, Policy: over})
		got := g.wait(t, r.ID, backend.RunFailed)
		if !strings.Contains(got.Failure.Message, "policy for network:") || m.calls != 0 {
			t.Fatalf("failure = %+v, model calls %d", got.Failure, m.calls)
		}
	})

	t.Run("built-in loop", func(t *testing.T) {
		r := g.start(t, &hookedModel{steps: []backend.ModelResponse{{Text: "done"}}})
		g.wait(t, r.ID, backend.RunCompleted)
	})
}
