package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/store"
)

// heldGrant is a run grant the engine consults before asking (AP11).
type heldGrant struct {
	id       string
	decision string
	g        approval.Grant
}

// decisionsFor lists the decisions offered for a request and the pattern
// "approve for this run" and "always allow" would cover (grantPreview).
// Push, publish, deploy, secrets and whatever approval.GrantPattern refuses
// get only approve once and the two rejections (AP6), and so does a
// pattern that holds a secret (redact changes it): an "always allow" rule
// would write the secret into the policy file.
func decisionsFor(tool string, a backend.GatedAction, res backend.PolicyResult,
	redact func(string) string) ([]backend.DecisionKind, string) {
	once := []backend.DecisionKind{backend.ApproveOnce, backend.RejectAndTell, backend.RejectAndStop}
	if res.Kind.AlwaysAsks() || res.Kind == backend.ActionSecret || a.Kind.AlwaysAsks() {
		return once, ""
	}
	g, err := grantFor(tool, a)
	if err != nil || redact(g.Preview()) != g.Preview() {
		return once, ""
	}
	return []backend.DecisionKind{backend.ApproveOnce, backend.ApproveForRun, backend.AlwaysAllowWorkspace,
		backend.RejectAndTell, backend.RejectAndStop}, g.Preview()
}

// grantFor is the grant that would cover a tool's action.
func grantFor(tool string, a backend.GatedAction) (approval.Grant, error) {
	act, err := approval.ActionOf(backend.GateRequest{Tool: tool, Action: a})
	if err != nil {
		return approval.Grant{}, err
	}
	return approval.GrantPattern(act)
}

// checkDecision refuses a decision the ticket does not offer, so no client
// can turn an approval of push, publish, deploy or secrets into a grant or
// a rule (AP6), and an unknown decision never counts as a rejection.
func checkDecision(tk store.Ticket, k backend.DecisionKind) error {
	grant := k == backend.ApproveForRun || k == backend.AlwaysAllowWorkspace
	switch {
	case !k.Approves() && k != backend.RejectAndTell && k != backend.RejectAndStop:
		return backend.Errorf(backend.CodeInvalidInput, "unknown decision %q", k)
	case grant && (tk.Kind.AlwaysAsks() || tk.Kind == backend.ActionSecret):
		return backend.Errorf(backend.CodeInvalidInput, "%s is never offered for %s", k, tk.Kind)
	case len(tk.DecisionsOffered) > 0 && !slices.Contains(tk.DecisionsOffered, k):
		return backend.Errorf(backend.CodeInvalidInput, "%s is not offered for this approval", k)
	}
	return nil
}

// coveringGrant returns the run grant that covers a request the policy asks
// about. Deny never gets here (the policy is evaluated first), push,
// publish, deploy and secrets are never covered, and under a policy file
// that cannot be read no grant applies: a deny rule in it cannot be seen.
func (rc *runCtl) coveringGrant(req backend.GateRequest, res backend.PolicyResult) (heldGrant, bool) {
	if res.Kind.AlwaysAsks() || res.Kind == backend.ActionSecret {
		return heldGrant{}, false
	}
	for _, s := range res.Trace {
		if s.Rule == approval.RuleBrokenPolicy || s.Rule == approval.RuleInvalidSubject {
			return heldGrant{}, false
		}
	}
	a, err := approval.ActionOf(req)
	if err != nil {
		return heldGrant{}, false
	}
	if err := rc.loadGrants(); err != nil {
		rc.e.log.Error("read run grants", "run_id", rc.rec.ID, "err", err)
		return heldGrant{}, false // ask: fail closed
	}
	for _, h := range rc.grants {
		if h.g.Covers(a) {
			return h, true
		}
	}
	return heldGrant{}, false
}

// loadGrants reads the run's grants once per activation.
func (rc *runCtl) loadGrants() error {
	if rc.grantsRead {
		return nil
	}
	rows, err := rc.e.store.RunGrants(context.Background(), rc.rec.ID)
	if err != nil {
		return fmt.Errorf("read grants of %s: %w", rc.rec.ID, err)
	}
	rc.grants = rc.grants[:0]
	for _, row := range rows {
		var g approval.Grant
		if err := json.Unmarshal(row.Pattern, &g); err != nil {
			continue // a pattern that cannot be read covers nothing
		}
		rc.grants = append(rc.grants, heldGrant{id: row.ID, decision: row.DecisionID, g: g})
	}
	rc.grantsRead = true
	return nil
}

// keepGrant records what an "approve for this run" or "always allow"
// decision covers from now on. It runs after the approved action was
// verified and before it executes. A request no grant may cover proceeds
// as approved once.
func (rc *runCtl) keepGrant(d store.StoredDecision, c *callState, action *backend.GatedAction) *ending {
	if action == nil || (d.Kind != backend.ApproveForRun && d.Kind != backend.AlwaysAllowWorkspace) {
		return nil
	}
	g, err := grantFor(c.Req.Name, *action)
	if err != nil {
		rc.e.log.Warn("no grant for an approved call", "run_id", rc.rec.ID, "call_id", c.Req.ID, "err", err)
		return nil
	}
	if d.Kind == backend.ApproveForRun {
		return rc.addRunGrant(d, g)
	}
	return rc.addWorkspaceRule(d, c, g)
}

// addRunGrant persists a run grant (it survives a restart of the waiting
// run) and starts using it. A decision applied again after a restart does
// not add a second grant.
func (rc *runCtl) addRunGrant(d store.StoredDecision, g approval.Grant) *ending {
	if err := rc.loadGrants(); err != nil {
		return failed(backend.FailInternal, "could not read the run's grants")
	}
	for _, h := range rc.grants {
		if h.decision == d.DecisionID {
			return nil
		}
	}
	pattern, err := json.Marshal(g)
	if err != nil {
		return failed(backend.FailInternal, "could not record the grant")
	}
	row := store.Grant{ID: backend.NewID(backend.PrefixGrant), Scope: store.GrantRun, RunID: rc.rec.ID,
		WorkspaceID: rc.rec.WorkspaceID, DecisionID: d.DecisionID, Kind: g.Kind, Tool: g.Tool, Pattern: pattern}
	if err := rc.commit(func(tx *store.Tx) error {
		return tx.AddGrant(row, store.By{Actor: d.Actor, Surface: d.Surface})
	}); err != nil {
		return failed(backend.FailInternal, "could not record the grant")
	}
	rc.grants = append(rc.grants, heldGrant{id: row.ID, decision: d.DecisionID, g: g})
	return nil
}

// addWorkspaceRule appends the grant as an allow rule to the workspace's
// policy file, where the gate finds it for this run and the next ones, and
// audits the change. If the file cannot be changed (it is broken, or a
// symlink), the failure is audited and the call proceeds as approved once.
func (rc *runCtl) addWorkspaceRule(d store.StoredDecision, c *callState, g approval.Grant) *ending {
	by := store.By{Actor: d.Actor, Surface: d.Surface}
	loc := rc.ruleLocation(d.ApprovalID)
	root, err := rc.root()
	var change approval.RuleChange
	if err == nil {
		change, err = rc.e.cfg.Rules.Append(loc, root, rc.rec.WorkspaceID, g)
	}
	if err != nil {
		rc.e.log.Warn("always allow: the rule was not written", "run_id", rc.rec.ID, "err", err)
		rc.commitLog(func(tx *store.Tx) error {
			_, err := tx.Audit(backend.AuditEntry{Actor: by.Actor, Surface: by.Surface, Kind: "policy.change_failed",
				RunID: rc.rec.ID, ToolCallID: c.Req.ID, Data: map[string]any{"workspaceId": rc.rec.WorkspaceID,
					"rule": g.Preview(), "error": err.Error()}})
			return err
		})
		return nil
	}
	pattern, _ := json.Marshal(g)
	row := store.Grant{ID: backend.NewID(backend.PrefixGrant), Scope: store.GrantWorkspace, RunID: rc.rec.ID,
		WorkspaceID: rc.rec.WorkspaceID, DecisionID: d.DecisionID, Kind: g.Kind, Tool: g.Tool, Pattern: pattern,
		RuleSite: loc.Site, RuleID: change.RuleID}
	err = rc.commit(func(tx *store.Tx) error {
		if err := tx.AddGrant(row, by); err != nil {
			return err
		}
		_, err := tx.Audit(backend.AuditEntry{Actor: by.Actor, Surface: by.Surface, Kind: "policy.changed",
			RunID: rc.rec.ID, ToolCallID: c.Req.ID, Data: map[string]any{"workspaceId": rc.rec.WorkspaceID,
				"path": loc.Path, "site": loc.Site, "ruleId": change.RuleID, "grantId": row.ID, "rule": change.Rule,
				"preview": g.Preview(), "beforeSha256": sha(change.Before), "afterSha256": sha(change.After)}})
		return err
	})
	if err != nil {
		return failed(backend.FailInternal, "could not record the policy change")
	}
	return nil
}

// ruleLocation is where the ticket said the rule would be written; a
// ticket from before rule sites (migration 00011) wrote to the repository.
func (rc *runCtl) ruleLocation(approvalID string) backend.RuleLocation {
	tk, err := rc.e.store.Ticket(context.Background(), approvalID)
	if err == nil && tk.RuleLocation != nil &&
		(tk.RuleLocation.Site == backend.RuleSiteData || tk.RuleLocation.Site == backend.RuleSiteRepository) {
		return *tk.RuleLocation
	}
	return backend.RuleLocation{Site: backend.RuleSiteRepository, Path: approval.PolicyPath}
}

func (rc *runCtl) root() (string, error) {
	if rc.e.cfg.Roots == nil {
		return "", fmt.Errorf("workspace %s: no root resolver configured", rc.rec.WorkspaceID)
	}
	return rc.e.cfg.Roots(rc.rec.WorkspaceID)
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
