package engine

import (
	"reflect"

	"agenthub/backend"
	"agenthub/backend/store"
)

// auditAction records the start or the end of a gated action with the
// subject hash it executes under (AU1), in the transaction of the
// transition it belongs to.
func (rc *runCtl) auditAction(tx *store.Tx, c *callState, a *backend.GatedAction, kind string, data map[string]any) error {
	hash := c.Subject
	if h, err := subjectHash(*a); err == nil {
		hash = h
	}
	if data == nil {
		data = map[string]any{}
	}
	data["kind"], data["tool"], data["title"] = string(a.Kind), c.Req.Name, a.Title
	if c.TicketID != "" {
		data["approvalId"] = c.TicketID
	}
	_, err := tx.Audit(backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine, Kind: kind,
		RunID: rc.rec.ID, ToolCallID: c.Req.ID, SubjectHash: hash, Data: data})
	return err
}

// outcome names how an executed action ended, for the audit trail.
func outcome(res backend.ToolResult, err error) string {
	switch {
	case err != nil:
		return "error"
	case res.Suspend != nil:
		return "suspended"
	case res.IsError:
		return "failed"
	}
	return "succeeded"
}

// patchAudit maps the patch events a tool emits to the audit entries that
// record them (AU1).
var patchAudit = map[backend.EventType]string{
	backend.EvPatchApplied:  "patch.applied",
	backend.EvPatchRejected: "patch.rejected",
}

// auditData is the secret-free summary of a patch event for the audit
// trail: which files, with their hashes, and which hunks; never content.
func auditData(payload any) map[string]any {
	out := map[string]any{}
	m, ok := payload.(map[string]any)
	if !ok {
		return out
	}
	for _, k := range []string{"tool", "path", "checkpointId", "files", "reason", "runtime", "matchesApproval"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	switch h := m["hunks"].(type) {
	case map[string]any: // applied: the approved indexes
		out["hunks"] = h
	case nil:
	default: // rejected: the hunks themselves hold content; count them
		if n, ok := lenOf(h); ok {
			out["rejectedHunks"] = n
		}
	}
	return out
}

func lenOf(v any) (int, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return 0, false
	}
	return rv.Len(), true
}

// envFor is the call's tool environment: its patch events are audited
// with the call and the subject it executes under, and its workspace
// changes are recorded as intents first (intent.go); the commit of a
// patch.applied event closes its intent.
func (rc *runCtl) envFor(c *callState) backend.ToolEnv {
	env := rc.env()
	env.Emit = func(typ backend.EventType, payload any) {
		payload = withCallID(typ, payload, c.Req.ID) // changeset.go
		rc.commitLog(func(tx *store.Tx) error {
			if _, err := tx.Append(rc.rec.ID, typ, payload); err != nil {
				return err
			}
			kind, ok := patchAudit[typ]
			if !ok {
				return nil
			}
			if typ == backend.EvPatchApplied {
				if err := closeApplied(tx, payload); err != nil {
					return err
				}
			}
			_, err := tx.Audit(backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine, Kind: kind,
				RunID: rc.rec.ID, ToolCallID: c.Req.ID, SubjectHash: c.Subject, Data: auditData(payload)})
			return err
		})
	}
	env.Intents = callJournal{rc: rc, c: c}
	return env
}
