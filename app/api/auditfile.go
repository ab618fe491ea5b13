package api

import (
	"bytes"
	"fmt"
	"path/filepath"
	"time"

	"agenthub/backend"
)

// AuditSaved is the outcome of saving the audit export. File is the base
// name only: surfaces never show the absolute path.
type AuditSaved struct {
	Saved    bool   `json:"saved"` // false when the dialog was cancelled
	File     string `json:"file,omitempty"`
	Entries  int    `json:"entries"`
	Verified bool   `json:"verified"`
	Head     string `json:"head"`
	Filtered bool   `json:"filtered,omitempty"` // only the entries the active filters match
	Total    int    `json:"total,omitempty"`    // the entries of the whole chain, when filtered
}

// AuditFileAPI saves the audit export (see [ExportAudit]) to a file the user
// picks in the window's native save dialog. The browser downloads the same
// bytes from GET /api/audit/export instead.
type AuditFileAPI struct {
	audit *AuditAPI
	pick  func(defaultName string) (string, error)
}

// NewAuditFileAPI returns the facade; pick opens the save dialog with a
// suggested file name and returns the chosen absolute path, or "" when the
// user cancelled.
func NewAuditFileAPI(c *Core, pick func(defaultName string) (string, error)) *AuditFileAPI {
	return &AuditFileAPI{audit: NewAuditAPI(c), pick: pick}
}

// AuditExportName is the suggested file name of an export made at t.
func AuditExportName(t time.Time) string {
	return "agenthub-audit-" + t.UTC().Format("20060102-150405") + ".jsonl"
}

// AuditExportBytes renders the whole export in memory, so that a failure
// never leaves half a file or half a response, and counts its entries.
func AuditExportBytes(a *AuditAPI, f AuditFilter) ([]byte, AuditVerify, int, error) {
	var buf bytes.Buffer
	v, err := ExportAuditFiltered(a, &buf, f)
	if err != nil {
		return nil, v, 0, err
	}
	// Every entry is one line; the last line is the chain head summary.
	return buf.Bytes(), v, bytes.Count(buf.Bytes(), []byte("\n")) - 1, nil
}

// Save asks where to save the export of the entries filter matches (the
// view's active filters), then writes it there atomically.
func (f *AuditFileAPI) Save(filter AuditFilter) (AuditSaved, error) {
	if f.pick == nil {
		return AuditSaved{}, backend.Errorf(backend.CodeInvalidInput,
			"the save dialog exists only in the desktop window; download the export in the browser instead")
	}
	data, v, n, err := AuditExportBytes(f.audit, filter)
	if err != nil {
		return AuditSaved{}, err
	}
	path, err := f.pick(AuditExportName(nowUTC()))
	if err != nil {
		return AuditSaved{}, fmt.Errorf("choose where to save the audit export: %w", err)
	}
	total := n
	if filter.Active() {
		all, err := f.audit.List(AuditFilter{})
		if err != nil {
			return AuditSaved{}, err
		}
		total = len(all)
	}
	if path == "" {
		return AuditSaved{Entries: n, Verified: v.OK, Head: v.Head, Filtered: filter.Active(), Total: total}, nil
	}
	if err := writeAtomic(path, data); err != nil {
		return AuditSaved{}, &backend.Error{Code: backend.CodeInvalidInput, Err: err,
			Message: "the audit export could not be saved as " + filepath.Base(path) + ": " + safeReason(err),
			Next:    "Choose a folder you can write to and try again."}
	}
	return AuditSaved{Saved: true, File: filepath.Base(path), Entries: n, Verified: v.OK, Head: v.Head,
		Filtered: filter.Active(), Total: total}, nil
}
