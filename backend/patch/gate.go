package patch

import (
	"encoding/json"
	"errors"
	"fmt"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/diffview"
)

// Preview is what the reviewer sees of a proposed change.
type Preview struct {
	Tool      string            `json:"tool"`
	Path      string            `json:"path"`
	Operation string            `json:"operation"` // create | modify | delete
	OldSize   int               `json:"oldSize"`
	NewSize   int               `json:"newSize"`
	Preimage  string            `json:"preimage"`
	Postimage string            `json:"postimage"`
	Unified   string            `json:"unified"`
	Diff      diffview.FileDiff `json:"diff"`
	Runtime   string            `json:"runtime,omitempty"` // the external runtime that asked, if any
}

// Request says who asks for a change and how its preview is cleaned.
type Request struct {
	Tool    string
	Runtime string // empty for built-in tools
	// Scrub rewrites machine paths in the preview: file content may mention
	// them, and previews never show them.
	Scrub func(string) string
}

// Gated describes a proposal for the gate. The subject binds the path, the
// pre-image the diff was computed on and the content that will be written
// (AP9); the diff itself is not bound, since its shape may depend on
// diffview's time budget, but it is a function of the two.
func Gated(env backend.ToolEnv, req Request, pr Proposal) (*backend.GatedAction, error) {
	fd, err := pr.Diff()
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	pv := Preview{Tool: req.Tool, Path: pr.Path, Operation: pr.Operation(), OldSize: len(pr.Old),
		Preimage: pr.Preimage(), Postimage: pr.Postimage(), Unified: string(diffview.Unified(fd)), Diff: fd,
		Runtime: req.Runtime}
	if !pr.Delete {
		pv.NewSize = len(pr.Next)
	}
	preview, err := json.Marshal(pv)
	if err != nil {
		return nil, fmt.Errorf("preview: %w", err)
	}
	if req.Scrub != nil {
		preview = []byte(req.Scrub(string(preview)))
		if !json.Valid(preview) {
			return nil, errors.New("preview: scrubbing broke the JSON")
		}
	}
	subject, err := json.Marshal(map[string]any{"kind": string(backend.ActionPatch), "tool": req.Tool,
		"workspace": env.WorkspaceID, "path": pr.Path,
		"preimages": []approval.Preimage{{Path: pr.Path, SHA256: pr.Preimage()}}, "postimage": pr.Postimage()})
	if err != nil {
		return nil, fmt.Errorf("subject: %w", err)
	}
	title := map[string]string{"create": "Create ", "modify": "Edit ", "delete": "Delete "}[pr.Operation()] + pr.Path
	return &backend.GatedAction{Kind: backend.ActionPatch, Title: title, Risk: backend.RiskMedium,
		Preview: preview, Subject: subject, TitleMessage: patchTitle(pr.Operation(), pr.Path)}, nil
}

// patchTitle is the title as a message the UI localises (issue 21).
func patchTitle(op, path string) *backend.Text {
	switch op {
	case "create":
		return backend.Msg("title_create", "path", path)
	case "delete":
		return backend.Msg("title_delete", "path", path)
	}
	return backend.Msg("title_edit", "path", path)
}
