package acpagent

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"agenthub/backend"
	"agenthub/backend/patch"
)

// Option ids of a permission request. A per-hunk option is "hunks:N" or
// "hunks:N-M" (hunks numbered from 1, as `agenthub approvals show` numbers
// them).
const (
	optAllowOnce   = "allow_once"
	optAllowForRun = "allow_for_run"
	optReject      = "reject"
	optRejectStop  = "reject_and_stop"
	optHunksPrefix = "hunks:"
)

// RejectReason is the reason recorded with a rejection chosen in an editor:
// ACP's permission dialog has no text field.
const RejectReason = "rejected in the editor over ACP"

// permissionOptions are the choices of one approval, in the order an editor
// shows them: allow once, each hunk group of a patch with several hunks,
// allow for the rest of the run, reject, reject and stop. Only decisions the
// approval offers appear; "always allow in this workspace" writes a policy
// rule and is left to the window and the CLI, which show the rule first.
func permissionOptions(a backend.ApprovalRequest) []acp.PermissionOption {
	offered := map[backend.DecisionKind]bool{}
	for _, d := range a.DecisionsOffered {
		offered[d] = true
	}
	var out []acp.PermissionOption
	if offered[backend.ApproveOnce] {
		name := "Allow once"
		if a.Kind == backend.ActionPatch {
			name = "Apply the whole change"
		}
		out = append(out, acp.PermissionOption{OptionId: optAllowOnce, Name: name, Kind: acp.PermissionOptionKindAllowOnce})
		if n := hunkCount(a); n > 1 {
			for _, g := range hunkGroups(n, maxHunkOptions) {
				out = append(out, acp.PermissionOption{OptionId: acp.PermissionOptionId(hunkOptionID(g)),
					Name: hunkOptionName(g, n), Kind: acp.PermissionOptionKindAllowOnce})
			}
		}
	}
	if offered[backend.ApproveForRun] && !a.Kind.AlwaysAsks() {
		out = append(out, acp.PermissionOption{OptionId: optAllowForRun, Name: "Allow for the rest of this run",
			Kind: acp.PermissionOptionKindAllowAlways})
	}
	if offered[backend.RejectAndTell] {
		out = append(out, acp.PermissionOption{OptionId: optReject, Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce})
	}
	if offered[backend.RejectAndStop] {
		out = append(out, acp.PermissionOption{OptionId: optRejectStop, Name: "Reject and stop the run",
			Kind: acp.PermissionOptionKindRejectOnce})
	}
	return out
}

// hunkGroup is a contiguous range of hunks, numbered from 1.
type hunkGroup struct{ from, to int }

// hunkGroups splits n hunks into at most max contiguous groups of nearly
// equal size: one hunk each while n <= max.
func hunkGroups(n, max int) []hunkGroup {
	if n <= 0 || max <= 0 {
		return nil
	}
	groups := min(n, max)
	out := make([]hunkGroup, 0, groups)
	from := 1
	for g := 0; g < groups; g++ {
		size := n / groups
		if g < n%groups {
			size++
		}
		out = append(out, hunkGroup{from, from + size - 1})
		from += size
	}
	return out
}

func hunkOptionID(g hunkGroup) string {
	if g.from == g.to {
		return optHunksPrefix + strconv.Itoa(g.from)
	}
	return fmt.Sprintf("%s%d-%d", optHunksPrefix, g.from, g.to)
}

func hunkOptionName(g hunkGroup, n int) string {
	if g.from == g.to {
		return fmt.Sprintf("Apply only hunk %d of %d", g.from, n)
	}
	return fmt.Sprintf("Apply only hunks %d–%d of %d", g.from, g.to, n)
}

func hunkCount(a backend.ApprovalRequest) int {
	pv, ok := patchPreview(a)
	if !ok {
		return 0
	}
	return len(pv.Diff.Hunks)
}

func patchPreview(a backend.ApprovalRequest) (patch.Preview, bool) {
	var pv patch.Preview
	if a.Kind != backend.ActionPatch || json.Unmarshal(a.Preview, &pv) != nil || pv.Path == "" {
		return patch.Preview{}, false
	}
	return pv, true
}

// decision turns the editor's choice into the engine's decision, bound to
// the subject hash of the approval the editor was shown (AP9): a changed
// subject is refused by the engine, never applied. cancelled is true when
// the editor cancelled the prompt instead of choosing.
func decision(a backend.ApprovalRequest, out acp.RequestPermissionOutcome) (d backend.Decision, cancelled bool, err error) {
	if out.Selected == nil {
		return backend.Decision{}, true, nil
	}
	d = backend.Decision{ApprovalID: a.ID, ToolCallID: a.ToolCallID, SubjectHash: a.SubjectHash}
	id := string(out.Selected.OptionId)
	offered := false
	for _, o := range permissionOptions(a) {
		offered = offered || string(o.OptionId) == id
	}
	if !offered {
		return backend.Decision{}, false, &backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("the editor chose %q, which approval %s did not offer", id, a.ID),
			Next:    "Decide it in the AgentHub window or with: agenthub approve " + a.ID}
	}
	switch {
	case id == optAllowOnce:
		d.Kind = backend.ApproveOnce
	case id == optAllowForRun:
		d.Kind = backend.ApproveForRun
	case id == optReject:
		d.Kind, d.Reason = backend.RejectAndTell, RejectReason
	case id == optRejectStop:
		d.Kind, d.Reason = backend.RejectAndStop, RejectReason
	case strings.HasPrefix(id, optHunksPrefix):
		pv, _ := patchPreview(a)
		g, err := parseHunkOption(id)
		if err != nil {
			return backend.Decision{}, false, err
		}
		d.Kind = backend.ApproveOnce
		for n := g.from; n <= g.to; n++ {
			d.Hunks = append(d.Hunks, backend.HunkRef{Path: pv.Path, Index: n - 1})
		}
	}
	return d, false, nil
}

func parseHunkOption(id string) (hunkGroup, error) {
	spec := strings.TrimPrefix(id, optHunksPrefix)
	a, b, isRange := strings.Cut(spec, "-")
	from, err1 := strconv.Atoi(a)
	to := from
	var err2 error
	if isRange {
		to, err2 = strconv.Atoi(b)
	}
	if err1 != nil || err2 != nil || from < 1 || to < from {
		return hunkGroup{}, backend.Errorf(backend.CodeInvalidInput, "the option %q names no hunks", id)
	}
	return hunkGroup{from, to}, nil
}
