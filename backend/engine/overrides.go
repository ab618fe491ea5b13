package engine

import (
	"agenthub/backend"
	"agenthub/backend/approval"
)

// policy puts a request to the workspace gate, then to the profile's policy
// overrides, which can only make the verdict stricter (deny > ask > allow)
// and add their steps to the trace (approval.Tighten, docs/POLICY.md).
func (rc *runCtl) policy(req backend.GateRequest) backend.PolicyResult {
	res := rc.e.cfg.Gate.Evaluate(rc.ctx, req)
	if rc.p.Policy == nil {
		return res
	}
	return approval.Tighten(res, rc.p.Policy, req)
}
