package api

import (
	"context"
	"encoding/json"
	"io"

	"agenthub/backend"
)

// AuditFilter narrows the audit list; empty fields match everything.
type AuditFilter struct {
	RunID string `json:"runId,omitempty"`
	Actor string `json:"actor,omitempty"`
	Kind  string `json:"kind,omitempty"`
}

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
	out := []backend.AuditEntry{}
	for _, e := range all {
		if (f.RunID == "" || e.RunID == f.RunID) && (f.Actor == "" || e.Actor == f.Actor) && (f.Kind == "" || e.Kind == f.Kind) {
			out = append(out, e)
		}
	}
	return out, nil
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
	entries, err := a.List(AuditFilter{})
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
	return v, enc.Encode(map[string]any{"chainHead": v.Head, "entries": len(entries), "verified": v.OK})
}
