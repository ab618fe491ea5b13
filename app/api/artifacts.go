package api

import (
	"context"
	"encoding/base64"
	"strings"

	"agenthub/backend"
	"agenthub/backend/preview"
	"agenthub/backend/store"
)

// ArtifactQuery narrows the artifacts list (docs/ARTIFACTS.md); empty
// fields match everything. From and To are dates or timestamps
// (backend.TimeFormat), To exclusive.
type ArtifactQuery struct {
	RunID       string `json:"runId,omitempty"`
	WorkspaceID string `json:"workspaceId,omitempty"`
	Kind        string `json:"kind,omitempty"`
	From        string `json:"from,omitempty"`
	To          string `json:"to,omitempty"`
	Limit       int    `json:"limit,omitempty"`
}

// ArtifactView is an artifact with what a viewer needs to show it: the
// text of a text kind, a data: URL of an image or PDF, and for an HTML
// page the preview document (backend/preview: no script, no network) to
// put in a sandboxed frame.
type ArtifactView struct {
	Artifact backend.Artifact `json:"artifact"`
	Text     string           `json:"text,omitempty"`
	DataURL  string           `json:"dataUrl,omitempty"`
	Preview  string           `json:"preview,omitempty"`
}

// ArtifactsAPI lists and reads the artifacts runs produced. It only reads.
type ArtifactsAPI struct{ core *Core }

// NewArtifactsAPI returns the facade.
func NewArtifactsAPI(c *Core) *ArtifactsAPI { return &ArtifactsAPI{core: c} }

// List returns the artifacts q matches, newest first.
func (a *ArtifactsAPI) List(q ArtifactQuery) ([]backend.Artifact, error) {
	if q.Kind != "" && !backend.ArtifactKind(q.Kind).Valid() {
		return nil, backend.Errorf(backend.CodeInvalidInput, "unknown artifact kind %q; use one of %s", q.Kind,
			kindList())
	}
	db, err := a.core.db()
	if err != nil {
		return nil, err
	}
	return db.Artifacts(context.Background(), store.ArtifactFilter{RunID: q.RunID, WorkspaceID: q.WorkspaceID,
		Kind: backend.ArtifactKind(q.Kind), From: q.From, To: q.To, Limit: q.Limit})
}

// Get returns one artifact with its content as the viewer shows it.
func (a *ArtifactsAPI) Get(id string) (ArtifactView, error) {
	art, data, err := ArtifactBytes(a.core, id)
	if err != nil {
		return ArtifactView{}, err
	}
	v := ArtifactView{Artifact: art}
	switch {
	case art.Kind == backend.ArtifactHTML:
		v.Text, v.Preview = string(data), string(preview.HTML(data))
	case art.Kind.Text():
		v.Text = string(data)
	default:
		v.DataURL = "data:" + art.MediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
	}
	return v, nil
}

// ArtifactBytes returns an artifact and its stored bytes (export, the HTTP
// content route), checked against their hash.
func ArtifactBytes(c *Core, id string) (backend.Artifact, []byte, error) {
	if !strings.HasPrefix(id, backend.PrefixArtifact+"_") {
		return backend.Artifact{}, nil, backend.Errorf(backend.CodeInvalidInput,
			"%q is not an artifact id (art_…); list them with agenthub artifacts list", id)
	}
	db, err := c.db()
	if err != nil {
		return backend.Artifact{}, nil, err
	}
	return db.ArtifactContent(context.Background(), id)
}

// ArtifactFileName is the suggested file name of an exported artifact: its
// source file's name, else its id with the kind's extension.
func ArtifactFileName(a backend.Artifact) string {
	if a.Path != "" {
		if i := strings.LastIndexByte(a.Path, '/'); i >= 0 {
			return a.Path[i+1:]
		}
		return a.Path
	}
	ext := map[backend.ArtifactKind]string{backend.ArtifactDocument: ".md", backend.ArtifactHTML: ".html",
		backend.ArtifactPDF: ".pdf", backend.ArtifactFile: ".txt"}[a.Kind]
	if ext == "" {
		ext = "." + strings.TrimPrefix(a.MediaType, "image/")
	}
	return a.ID + ext
}

func kindList() string {
	var s []string
	for _, k := range backend.ArtifactKinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

// Review records that the user has looked at a screenshot pending its
// privacy review (issue 18: a screenshot is shown before it is kept or
// shared); only then may it be exported. Audited artifact.reviewed.
func (a *ArtifactsAPI) Review(id string) (backend.Artifact, error) {
	art, _, err := ArtifactBytes(a.core, id)
	if err != nil {
		return art, err
	}
	if err := a.core.writable(); err != nil {
		return art, err
	}
	if art.Meta.Privacy != backend.PrivacyPending {
		return art, nil // nothing to review, or reviewed already: the first review stands
	}
	db, err := a.core.db()
	if err != nil {
		return art, err
	}
	by := a.core.By()
	if _, err := db.Do(context.Background(), func(tx *store.Tx) error {
		if err := tx.SetArtifactPrivacy(art.ID, backend.PrivacyApproved); err != nil {
			return err
		}
		_, err := tx.Audit(backend.AuditEntry{At: backend.Stamp(nowUTC()), Actor: by.Actor, Surface: by.Surface,
			Kind: "artifact.reviewed", RunID: art.RunID, Data: map[string]any{"artifactId": art.ID,
				"kind": string(art.Kind), "sha256": art.SHA256, "workspaceId": art.WorkspaceID}})
		return err
	}); err != nil {
		return art, err
	}
	art.Meta.Privacy = backend.PrivacyApproved
	return art, nil
}

// Shareable refuses the bytes of a screenshot still pending its privacy
// review leaving AgentHub (export, download).
func Shareable(a backend.Artifact) error {
	if a.Meta.Privacy == backend.PrivacyPending {
		return &backend.Error{Code: backend.CodeConflict,
			Message: "screenshot " + a.ID + " has not been reviewed for privacy yet",
			Next:    "Look at it (agenthub artifacts show " + a.ID + ", or the Artifacts page), then mark it reviewed: agenthub artifacts review " + a.ID + "."}
	}
	return nil
}
