package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"agenthub/backend"
	"agenthub/backend/bundle"
	"agenthub/backend/redact"
	"agenthub/backend/scrub"
	"agenthub/backend/store"
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
	if in.Artifacts, err = bundleArtifacts(c, r.ID); err != nil {
		return bundle.Manifest{}, err
	}
	return bundle.Write(w, in)
}

// bundleArtifacts are the run's artifacts for its bundle, oldest first,
// named ID-FILE; a screenshot still pending its privacy review stays out
// (only reviewed ones leave AgentHub, docs/ARTIFACTS.md).
func bundleArtifacts(c *Core, runID string) ([]bundle.ArtifactFile, error) {
	db, err := c.db()
	if err != nil {
		return nil, err
	}
	list, err := db.Artifacts(context.Background(), store.ArtifactFilter{RunID: runID})
	if err != nil {
		return nil, err
	}
	var out []bundle.ArtifactFile
	for i := len(list) - 1; i >= 0; i-- {
		a := list[i]
		if Shareable(a) != nil {
			continue
		}
		_, data, err := db.ArtifactContent(context.Background(), a.ID)
		if err != nil {
			return nil, err
		}
		name := strings.NewReplacer("/", "_", "\\", "_").Replace(ArtifactFileName(a))
		out = append(out, bundle.ArtifactFile{Name: a.ID + "-" + name, Data: data})
	}
	return out, nil
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

// runIDShape is what an imported run's id must look like: a bundle is
// foreign input.
var runIDShape = regexp.MustCompile(`^run_[0-9a-z]{8,40}$`)

// ImportRun stores the run of a bundle read-only (see store.Tx.ImportRun),
// after checking the bundle as `runs verify` does: a bundle that does not
// verify is refused.
func ImportRun(c *Core, r io.ReaderAt, size int64) (backend.RunSummary, error) {
	db, err := c.db()
	if err != nil {
		return backend.RunSummary{}, err
	}
	if err := c.writable(); err != nil {
		return backend.RunSummary{}, err
	}
	b, err := bundle.Open(r, size)
	if err != nil {
		return backend.RunSummary{}, &backend.Error{Code: backend.CodeInvalidInput, Err: err,
			Message: "this is not a readable AgentHub run bundle: " + strings.TrimPrefix(err.Error(), "bundle: "),
			Next:    "Ask for the file again: a bundle is what `agenthub runs export RUN -o FILE` wrote."}
	}
	rep := bundle.Verify(b)
	if !rep.OK {
		return backend.RunSummary{}, &backend.Error{Code: backend.CodeInvalidInput,
			Message: "the bundle does not verify: " + rep.Problems[0],
			Next:    "Run `agenthub runs verify FILE` to see every problem, and ask for a fresh export."}
	}
	m := b.Manifest
	if !runIDShape.MatchString(m.Run.ID) {
		return backend.RunSummary{}, backend.Errorf(backend.CodeInvalidInput, "the bundle's run id is not an AgentHub run id")
	}
	evs, err := b.Events()
	if err != nil {
		return backend.RunSummary{}, backend.Errorf(backend.CodeInvalidInput, "the bundle's events cannot be read")
	}
	im := store.Imported{Producer: m.Producer, ExportedAt: m.ExportedAt, Digest: m.Events.Digest,
		State: m.Run.State, Workspace: m.Run.Workspace}
	if h := m.Audit.Head; h != nil {
		im.AuditHead = fmt.Sprintf("%d:%s", h.Seq, h.Hash)
	}
	rec := store.RunRecord{ID: m.Run.ID, SessionID: backend.NewID(backend.PrefixSession), Profile: m.Run.Profile,
		Runtime: m.Run.Runtime, Task: m.Run.Task, State: m.Run.State, CreatedAt: m.Run.CreatedAt,
		LastEventAt: m.Run.LastEventAt}
	if _, err := db.Do(context.Background(), func(tx *store.Tx) error {
		return tx.ImportRun(rec, evs, im, c.By())
	}); err != nil {
		return backend.RunSummary{}, err
	}
	return NewRunsAPI(c).Get(m.Run.ID)
}

// refuseImported returns run_imported for a run imported from a bundle.
func refuseImported(c *Core, id, what string) error {
	db, err := c.db()
	if err != nil {
		return err
	}
	_, imported, err := db.ImportedRun(context.Background(), id)
	if err != nil || !imported {
		return nil // the engine says what is wrong with the run
	}
	return &backend.Error{Code: backend.CodeRunImported,
		Message: "run " + id + " was imported from a bundle and is read-only: it cannot be " + what + " here"}
}

// RunSaved is the outcome of saving a run's bundle from the window. File is
// the base name only: surfaces never show the absolute path.
type RunSaved struct {
	Saved  bool   `json:"saved"` // false when the dialog was cancelled
	File   string `json:"file,omitempty"`
	Events int    `json:"events"`
	Head   string `json:"head,omitempty"` // the audit head SEQ:HASH the bundle proves up to
}

// RunFileAPI saves a run's bundle (see [ExportRun]) where the user picks in
// the window's save dialog. The browser downloads the same bytes from GET
// /api/runs/{id}/export instead.
type RunFileAPI struct {
	core *Core
	pick func(defaultName string) (string, error)
}

// NewRunFileAPI returns the facade; pick is the save dialog (see
// [NewAuditFileAPI]).
func NewRunFileAPI(c *Core, pick func(defaultName string) (string, error)) *RunFileAPI {
	return &RunFileAPI{core: c, pick: pick}
}

// Save renders the bundle, asks where to save it, then writes it there
// atomically.
func (f *RunFileAPI) Save(runID string) (RunSaved, error) {
	if f.pick == nil {
		return RunSaved{}, backend.Errorf(backend.CodeInvalidInput,
			"the save dialog exists only in the desktop window; download the bundle in the browser instead")
	}
	data, m, err := ExportRunBytes(f.core, runID)
	if err != nil {
		return RunSaved{}, err
	}
	out := RunSaved{Events: m.Events.Count}
	if h := m.Audit.Head; h != nil {
		out.Head = fmt.Sprintf("%d:%s", h.Seq, h.Hash)
	}
	path, err := f.pick(RunExportName(runID))
	if err != nil {
		return RunSaved{}, fmt.Errorf("choose where to save the run: %w", err)
	}
	if path == "" {
		return out, nil
	}
	if err := writeAtomic(path, data); err != nil {
		return RunSaved{}, &backend.Error{Code: backend.CodeInvalidInput, Err: err,
			Message: "the run could not be saved as " + filepath.Base(path) + ": " + safeReason(err),
			Next:    "Choose a folder you can write to and try again."}
	}
	out.Saved, out.File = true, filepath.Base(path)
	return out, nil
}
