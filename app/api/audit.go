package api

import (
	"context"
	"encoding/json"
	"io"

	"agenthub/backend"
	"agenthub/backend/store"
)

// AuditFilter narrows the audit list; empty fields match everything.
// WorkspaceID matches an entry's own workspace or its run's; From and To are
// timestamps (backend.TimeFormat, To exclusive).
type AuditFilter struct {
	RunID       string `json:"runId,omitempty"`
	Actor       string `json:"actor,omitempty"`
	Kind        string `json:"kind,omitempty"`
	WorkspaceID string `json:"workspaceId,omitempty"`
	From        string `json:"from,omitempty"`
	To          string `json:"to,omitempty"`
}

// Active reports whether f filters anything out.
func (f AuditFilter) Active() bool { return f != AuditFilter{} }

// AuditVerify is the outcome of recomputing the hash chain.
type AuditVerify struct {
	OK        bool   `json:"ok"`
	BrokenSeq int64  `json:"brokenSeq,omitempty"`
	Head      string `json:"head"`
}

// AuditAPI reads and verifies the tamper-evident audit trail.
type AuditAPI struct{ core *Core }

// NewAuditAPI returns the facade.
func NewAuditAPI(c *Core) *AuditAPI { return &AuditAPI{core: c} }

// List returns the entries that match f, oldest first.
func (a *AuditAPI) List(f AuditFilter) ([]backend.AuditEntry, error) {
	db, err := a.core.db()
	if err != nil {
		return nil, err
	}
	all, err := db.AuditEntries(context.Background(), 0, 0)
	if err != nil {
		return nil, err
	}
	runWorkspace := map[string]string{}
	if f.WorkspaceID != "" {
		runs, err := db.Runs(context.Background(), store.RunFilter{})
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			runWorkspace[r.ID] = r.WorkspaceID
		}
	}
	out := []backend.AuditEntry{}
	for _, e := range all {
		if (f.RunID == "" || e.RunID == f.RunID) && (f.Actor == "" || e.Actor == f.Actor) && (f.Kind == "" || e.Kind == f.Kind) &&
			(f.From == "" || e.At >= f.From) && (f.To == "" || e.At < f.To) &&
			(f.WorkspaceID == "" || entryWorkspace(e, runWorkspace) == f.WorkspaceID) {
			out = append(out, e)
		}
	}
	return out, nil
}

// entryWorkspace is an entry's own workspace, else its run's.
func entryWorkspace(e backend.AuditEntry, runWorkspace map[string]string) string {
	if ws, ok := e.Data["workspaceId"].(string); ok && ws != "" {
		return ws
	}
	return runWorkspace[e.RunID]
}

// Verify recomputes the chain and names the first broken entry.
func (a *AuditAPI) Verify() (AuditVerify, error) {
	db, err := a.core.db()
	if err != nil {
		return AuditVerify{}, err
	}
	broken, head, err := db.VerifyAudit(context.Background())
	if err != nil {
		return AuditVerify{}, err
	}
	return AuditVerify{OK: broken == 0, BrokenSeq: broken, Head: head}, nil
}

// ExportAudit writes every entry as a JSON line, then a last line with the
// chain head and the verify outcome, so a copy can be checked on its own. It
// is not a method of AuditAPI: the window binds every method of a facade.
func ExportAudit(a *AuditAPI, w io.Writer) (AuditVerify, error) {
	return ExportAuditFiltered(a, w, AuditFilter{})
}

// ExportAuditFiltered is [ExportAudit] of the entries f matches. A filtered
// export says so in its last line ("filter" and "total", the entries of the
// whole chain): its entries are not a chain on their own, so the head and the
// verify outcome are the whole chain's.
func ExportAuditFiltered(a *AuditAPI, w io.Writer, f AuditFilter) (AuditVerify, error) {
	entries, err := a.List(f)
	if err != nil {
		return AuditVerify{}, err
	}
	v, err := a.Verify()
	if err != nil {
		return AuditVerify{}, err
	}
	enc := json.NewEncoder(w)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return v, err
		}
	}
	summary := map[string]any{"chainHead": v.Head, "entries": len(entries), "verified": v.OK}
	if f.Active() {
		all, err := a.List(AuditFilter{})
		if err != nil {
			return v, err
		}
		summary["filter"], summary["total"] = f, len(all)
	}
	return v, enc.Encode(summary)
}
