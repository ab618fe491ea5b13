package store

import (
	"context"
	"encoding/json"
	"fmt"

	"agenthub/backend"
)

// Grant scopes (the grants table's scope column).
const (
	GrantRun       = "run"       // "approve for this run": ends with its run
	GrantWorkspace = "workspace" // "always allow": a rule written to the policy file
)

// Grant records an approval that covers later requests (AP11). Pattern is
// the exact pattern shown as grantPreview (approval.Grant as JSON); for the
// workspace scope the policy file holds the rule itself and this row is its
// record.
type Grant struct {
	ID          string
	Scope       string
	RunID       string
	WorkspaceID string
	DecisionID  string
	Kind        backend.ActionKind
	Tool        string
	Pattern     json.RawMessage
	CreatedAt   string
	// RuleSite and RuleID name the rule a workspace grant wrote
	// (backend.RuleSiteData or RuleSiteRepository, and the rule's name).
	RuleSite string
	RuleID   string
}

// AddGrant stores a grant with its audit entry, in this transaction (AU1).
func (t *Tx) AddGrant(g Grant, by By) error {
	if g.CreatedAt == "" {
		g.CreatedAt = now()
	}
	pattern := t.s.red.json(g.Pattern)
	_, err := t.tx.ExecContext(t.ctx, `INSERT INTO grants (id, scope, run_id, workspace_id, decision_id, kind, tool,
		pattern, created_at, rule_site, rule_id) VALUES (?, ?, nullif(?, ''), nullif(?, ''), nullif(?, ''), ?, ?, ?, ?,
		?, ?)`,
		g.ID, g.Scope, g.RunID, g.WorkspaceID, g.DecisionID, string(g.Kind), g.Tool, string(pattern), g.CreatedAt,
		g.RuleSite, g.RuleID)
	if err != nil {
		return fmt.Errorf("add grant %s: %w", g.ID, err)
	}
	var data map[string]any
	if err := json.Unmarshal(pattern, &data); err != nil {
		return fmt.Errorf("add grant %s: pattern: %w", g.ID, err)
	}
	_, err = t.Audit(backend.AuditEntry{Actor: by.Actor, Surface: by.Surface, Kind: "grant.added", RunID: g.RunID,
		Data: map[string]any{"grantId": g.ID, "scope": g.Scope, "workspaceId": g.WorkspaceID,
			"decisionId": g.DecisionID, "pattern": data}})
	return err
}

// RunGrants returns the live grants of a run, oldest first. They survive a
// restart of a waiting run (AP8) and end with it.
func (s *Store) RunGrants(ctx context.Context, runID string) ([]Grant, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, scope, coalesce(run_id, ''), coalesce(workspace_id, ''),
		coalesce(decision_id, ''), kind, tool, pattern, created_at FROM grants
		WHERE scope = 'run' AND run_id = ? AND revoked_at IS NULL ORDER BY created_at, rowid`, runID)
	if err != nil {
		return nil, fmt.Errorf("list grants of %s: %w", runID, err)
	}
	defer rows.Close()
	var out []Grant
	for rows.Next() {
		var g Grant
		var pattern string
		if err := rows.Scan(&g.ID, &g.Scope, &g.RunID, &g.WorkspaceID, &g.DecisionID, &g.Kind, &g.Tool, &pattern,
			&g.CreatedAt); err != nil {
			return nil, fmt.Errorf("list grants of %s: %w", runID, err)
		}
		g.Pattern = json.RawMessage(pattern)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list grants of %s: %w", runID, err)
	}
	return out, nil
}

// RuleOrigin is who added a workspace rule through "always allow", and
// when: the decision that wrote it.
type RuleOrigin struct {
	GrantID   string
	RunID     string
	Actor     string
	Surface   backend.Surface
	CreatedAt string
}

// RuleOrigins returns the origins of the live workspace rules of a
// workspace by rule site and id ("data/always-shell-1").
func (s *Store) RuleOrigins(ctx context.Context, workspaceID string) (map[string]RuleOrigin, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT g.rule_site, g.rule_id, g.id, coalesce(g.run_id, ''),
		coalesce(d.actor, ''), coalesce(d.surface, ''), g.created_at FROM grants g
		LEFT JOIN decisions d ON d.id = g.decision_id
		WHERE g.scope = 'workspace' AND g.workspace_id = ? AND g.rule_id <> '' AND g.revoked_at IS NULL
		ORDER BY g.created_at, g.rowid`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("list rule origins of %s: %w", workspaceID, err)
	}
	defer rows.Close()
	out := map[string]RuleOrigin{}
	for rows.Next() {
		var site, id string
		var o RuleOrigin
		if err := rows.Scan(&site, &id, &o.GrantID, &o.RunID, &o.Actor, &o.Surface, &o.CreatedAt); err != nil {
			return nil, fmt.Errorf("list rule origins of %s: %w", workspaceID, err)
		}
		out[site+"/"+id] = o // a later grant of the same name replaces an earlier one
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list rule origins of %s: %w", workspaceID, err)
	}
	return out, nil
}

// RevokeRule marks the grants that wrote a workspace rule revoked and
// audits the revocation (policy.rule_revoked) with data, in this
// transaction.
func (t *Tx) RevokeRule(workspaceID, site, ruleID string, by By, data map[string]any) error {
	at := now()
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE grants SET revoked_at = ? WHERE scope = 'workspace'
		AND workspace_id = ? AND rule_site = ? AND rule_id = ? AND revoked_at IS NULL`,
		at, workspaceID, site, ruleID); err != nil {
		return fmt.Errorf("revoke rule %s: %w", ruleID, err)
	}
	d := map[string]any{"workspaceId": workspaceID, "site": site, "ruleId": ruleID}
	for k, v := range data {
		d[k] = v
	}
	_, err := t.Audit(backend.AuditEntry{Actor: by.Actor, Surface: by.Surface, Kind: "policy.rule_revoked", Data: d})
	return err
}
