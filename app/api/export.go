package api

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"time"

	"agenthub/backend"
	"agenthub/backend/bundle"
	"agenthub/backend/redact"
	"agenthub/backend/scrub"
	"agenthub/workspace"
)

// ExportRun writes run runID as a bundle (backend/bundle) to w. Every byte
// passes the secret redactor and loses the machine's paths (the workspace
// root becomes ".", the data directory $AGENTHUB_HOME, the home directory
// "~"), although the store already redacted what it stored: an export
// leaves the machine. It is not a method of a facade: the window binds every
// method of a facade.
func ExportRun(c *Core, runID string, w io.Writer) (bundle.Manifest, error) {
	db, err := c.db()
	if err != nil {
		return bundle.Manifest{}, err
	}
	ctx := context.Background()
	r, err := db.Run(ctx, runID)
	if err != nil {
		return bundle.Manifest{}, err
	}
	ws, err := db.WorkspaceAny(ctx, r.WorkspaceID)
	if err != nil {
		return bundle.Manifest{}, err
	}
	evs, err := db.Events(ctx, runID, 0, 0)
	if err != nil {
		return bundle.Manifest{}, err
	}
	audit, err := db.RunAudit(ctx, runID)
	if err != nil {
		return bundle.Manifest{}, err
	}
	var chain []bundle.Link
	if len(audit) > 0 {
		links, err := db.AuditLinks(ctx, audit[0].Seq, 0)
		if err != nil {
			return bundle.Manifest{}, err
		}
		chain = make([]bundle.Link, len(links))
		for i, l := range links {
			chain[i] = bundle.Link{Seq: l.Seq, PrevHash: l.PrevHash, Hash: l.Hash}
		}
	}
	in := bundle.Input{Run: bundle.RunInfo{ID: r.ID, Task: r.Task, State: r.State, Profile: r.Profile,
		Runtime: r.Runtime, Workspace: ws.Name, CreatedAt: r.CreatedAt, LastEventAt: r.LastEventAt},
		Events: evs, Audit: audit, Chain: chain, Clean: exportCleaner(ws.Path, c.cfg.Home),
		ExportedAt: backend.Stamp(time.Now()), Producer: "agenthub " + c.cfg.Version}
	return bundle.Write(w, in)
}

// ExportRunBytes renders the bundle in memory, so that a failure never
// leaves half a file or half a response.
func ExportRunBytes(c *Core, runID string) ([]byte, bundle.Manifest, error) {
	var buf bytes.Buffer
	m, err := ExportRun(c, runID, &buf)
	if err != nil {
		return nil, m, err
	}
	return buf.Bytes(), m, nil
}

// RunExportName is the suggested file name of a run's bundle.
func RunExportName(runID string) string { return "agenthub-" + runID + ".zip" }

// exportCleaner redacts secrets and rewrites the machine's paths: the
// workspace root in both spellings (symlinks resolved once, not per line).
func exportCleaner(root, dataDir string) func([]byte) []byte {
	red := redact.New()
	home := scrub.Home()
	real := ""
	if root != "" {
		if p, err := filepath.EvalSymlinks(root); err == nil && p != root {
			real = p
		}
	}
	dataDir = strings.TrimRight(dataDir, "/")
	return func(b []byte) []byte {
		s := string(red.Bytes(b))
		if len(dataDir) > 1 {
			s = strings.ReplaceAll(s, dataDir, "$AGENTHUB_HOME")
		}
		if real != "" {
			s = workspace.Scrub(s, real, "")
		}
		return []byte(workspace.Scrub(s, root, home))
	}
}

// VerifyBundle checks a bundle with nothing but its bytes: no database.
func VerifyBundle(r io.ReaderAt, size int64) (bundle.Report, error) {
	b, err := bundle.Open(r, size)
	if err != nil {
		return bundle.Report{}, &backend.Error{Code: backend.CodeInvalidInput, Err: err,
			Message: "this is not a readable AgentHub run bundle: " + strings.TrimPrefix(err.Error(), "bundle: "),
			Next:    "Export the run again with `agenthub runs export RUN -o FILE` and copy the whole file."}
	}
	return bundle.Verify(b), nil
}
