package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/backend/patch"
	"agenthub/backend/scrub"
	"agenthub/workspace"
)

// fileTool proxies one file of item/fileChange/requestApproval: the
// reviewer sees a staged patch of that file. Codex accepts or declines its
// patch as a whole, so the request is accepted once every file of it is
// approved, each whole; anything less declines all of it.
type fileTool struct{}

func (fileTool) Spec() backend.ToolSpec {
	return spec(ToolFile, "One file of a patch Codex asked to apply, shown as a staged patch.")
}

// wholeNote is said in every preview and every partial refusal.
const wholeNote = "Codex applies a patch as a whole: approve all of its hunks and files, or reject it. " +
	"Approving only some hunks or files declines the whole patch; nothing of it is written."

// Action proposes the file's change from the arguments and the live
// workspace.
func (fileTool) Action(_ context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decodeArgs(raw)
	if err != nil {
		return nil, err
	}
	if a.File == nil {
		return nil, errors.New("a Codex file change without a file")
	}
	if a.File.Outside || len(a.Outside) > 0 {
		return nil, outsideError("a file of Codex's patch")
	}
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, a.File.Path); ok {
		return agentpath.SecretAccess{Label: "Codex", Tool: ToolFile, Path: a.File.Path, Pattern: pat,
			Runtime: "codex"}.Action(), nil
	}
	if a.File.From != "" {
		if ok, pat := agentpath.Secret(env.WorkspaceRoot, a.File.From); ok {
			return agentpath.SecretAccess{Label: "Codex", Tool: ToolFile, Path: a.File.From, Pattern: pat,
				Runtime: "codex"}.Action(), nil
		}
	}
	w, err := agentpath.Open(env)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	c, err := propose(w, *a.File)
	if err != nil {
		return nil, fmt.Errorf("Codex's change of %s: %w", a.File.Path, err)
	}
	ga, err := patch.Gated(env, patch.Request{Tool: ToolFile, Runtime: "codex",
		Scrub: func(s string) string { return scrub.Paths(env.WorkspaceRoot, s) }}, c)
	if err != nil {
		return nil, err
	}
	if ga.Preview, err = annotate(ga.Preview, a); err != nil {
		return nil, err
	}
	if a.Of > 1 {
		ga.Title += fmt.Sprintf(" (file %d of %d of one Codex patch)", a.Index, a.Of)
	}
	return ga, nil
}

// annotate adds to a staged patch's preview that it cannot be applied in
// part, and which file of the patch it is.
func annotate(preview json.RawMessage, a callArgs) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(preview, &m); err != nil {
		return nil, fmt.Errorf("preview: %w", err)
	}
	m["partialApply"] = false
	m["note"] = wholeNote
	m["patchFile"] = map[string]int{"index": a.Index, "of": a.Of}
	if a.File.Op == "move_from" || a.File.Op == "move_to" {
		m["move"] = map[string]string{"op": a.File.Op, "from": a.File.From}
	}
	return json.Marshal(m)
}

// propose computes the whole-file change one file of a Codex patch makes,
// from the workspace as it is now. Its error is written for the agent.
func propose(w *workspace.FS, f fileArgs) (patch.Proposal, error) {
	p, err := w.Resolve(f.Path)
	if err != nil {
		return patch.Proposal{}, err
	}
	var source []byte
	if f.Op == "move_to" {
		from, err := w.Resolve(f.From)
		if err != nil {
			return patch.Proposal{}, err
		}
		src, exists, _, err := patch.ReadTarget(w, from)
		switch {
		case err != nil:
			return patch.Proposal{}, err
		case !exists:
			return patch.Proposal{}, fmt.Errorf("%s, the file to move, does not exist", from)
		}
		if source, err = applyHunks(src, f.Diff); err != nil {
			return patch.Proposal{}, err
		}
	}
	return patch.Prepare(w, p, func(cur []byte, exists bool) ([]byte, bool, error) {
		switch f.Op {
		case "add":
			return []byte(f.Diff), false, nil
		case "delete", "move_from":
			if !exists {
				return nil, false, fmt.Errorf("%s does not exist", p)
			}
			return nil, true, nil
		case "update":
			if !exists {
				return nil, false, fmt.Errorf("%s does not exist", p)
			}
			next, err := applyHunks(cur, f.Diff)
			return next, false, err
		case "move_to":
			return source, false, nil
		}
		return nil, false, fmt.Errorf("unknown change %q", f.Op)
	})
}

// Execute runs only after approval. The last file of a patch to be
// approved accepts it (after checking every file is still as approved),
// waits for Codex to apply it and compares the files with the approved
// content; the others only record their approval.
func (fileTool) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	s, r, a, err := lookup(in.CallID, in.Arguments)
	if err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", ToolFile, err), nil
	}
	s.emitDiags(env)
	w, err := agentpath.Open(env)
	if err != nil {
		return backend.ToolResult{}, err
	}
	defer w.Close()
	c, err := propose(w, *a.File)
	if err != nil {
		return s.refuse(env, r, "nothing of the patch was written: %s: %v", a.File.Path, err), nil
	}
	_, sel, err := patch.Narrow(c, in.ResumeInput)
	if sel.Chosen && (sel.Partial() || errors.Is(err, patch.ErrNothingApproved)) {
		sel.EmitRejected(env, ToolFile, c.Path)
		return s.refuse(env, r, "nothing of the patch was written: for %s the reviewer approved only part of the "+
			"change%s. %s", c.Path, sel.Describe(), wholeNote), nil
	}
	if err != nil {
		return s.refuse(env, r, "nothing of the patch was written: %s: %v", c.Path, err), nil
	}
	if n, all := s.approve(r, a.Index-1, c); !all {
		return backend.ToolResult{Content: fmt.Sprintf("approved %s; Codex applies its patch as a whole, once every "+
			"file of it is approved (%d of %d so far)", c.Path, n, len(r.files))}, nil
	}
	return s.applyPatch(ctx, env, w, r)
}

// approve records one file's approved change; all reports whether every
// file of the request is approved now.
func (s *session) approve(r *request, i int, c patch.Proposal) (n int, all bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if r.approved == nil {
		r.approved = map[int]patch.Proposal{}
	}
	r.approved[i] = c
	return len(r.approved), len(r.approved) == len(r.files)
}

// refuse declines the whole request, tells the agent, and returns the same
// text as the call's failed result.
func (s *session) refuse(env backend.ToolEnv, r *request, format string, args ...any) backend.ToolResult {
	res := scrub.Failure(env.WorkspaceRoot, format, args...)
	s.decline(r, "your patch (item "+scrub.Clip(r.itemID, 40)+") was declined: "+res.Content)
	return res
}

// applyPatch accepts a fully approved patch and verifies what Codex wrote.
func (s *session) applyPatch(ctx context.Context, env backend.ToolEnv, w *workspace.FS, r *request) (backend.ToolResult, error) {
	for i, f := range r.files {
		now, err := propose(w, f)
		if err != nil || now.Preimage() != r.approved[i].Preimage() || now.Postimage() != r.approved[i].Postimage() {
			return s.refuse(env, r, "nothing of the patch was written: %s changed after it was approved; "+
				"look at it again and propose the change anew", f.Path), nil
		}
	}
	ckID, err := s.checkpoint(w, r)
	if err != nil {
		return s.refuse(env, r, "nothing of the patch was written: %v", err), nil
	}
	if err := s.answer(r, "accept"); err != nil {
		return backend.ToolResult{}, err
	}
	it, err := s.waitItem(ctx, r.itemID)
	if err != nil && ctx.Err() != nil {
		s.stop()
		return backend.ToolResult{}, fmt.Errorf("%s: %w", ToolFile, err)
	}
	if err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", ToolFile, err), nil
	}
	return s.verify(env, w, r, it, ckID), nil
}

// checkpoint keeps the pre-images of every file of an approved patch in
// AgentHub's checkpoint store (never the user's .git), so that `undo`
// restores them; the manifest names the approved content. It also fails
// when a file no longer holds the pre-image the reviewer saw.
func (s *session) checkpoint(w *workspace.FS, r *request) (string, error) {
	if s.cfg.Checkpoints == "" {
		return "", errors.New("no checkpoint store is configured, so the change could not be made undoable")
	}
	store, err := workspace.NewCheckpointStore(s.cfg.Checkpoints, 0)
	if err != nil {
		return "", errors.New("the checkpoint store could not be opened")
	}
	var changes []workspace.Change
	for i := range r.files {
		c := r.approved[i]
		changes = append(changes, workspace.Change{Path: c.Path, PreimageSHA256: c.Preimage(), NewContent: c.Next,
			Delete: c.Delete})
	}
	id, err := workspace.Record(w, changes, store)
	if errors.Is(err, workspace.ErrConflict) {
		return "", errors.New("a file of the patch changed since it was proposed; read it again and redo the change")
	}
	if err != nil {
		return "", fmt.Errorf("checkpoint: %s", workspace.Scrub(err.Error(), s.cfg.Checkpoints, scrub.Home()))
	}
	return id, nil
}

// verify compares every file with the approved post-image (AD3) and
// records the outcome with run.patch.applied.
func (s *session) verify(env backend.ToolEnv, w *workspace.FS, r *request, it threadItem, ckID string) backend.ToolResult {
	matches := true
	var files []map[string]string
	var paths []string
	for i := range r.files {
		c := r.approved[i]
		data, err := w.ReadFile(c.Path)
		actual := workspace.Absent
		if err == nil {
			actual = workspace.Hash(data)
		}
		ok := actual == c.Postimage() && (c.Delete || bytes.Equal(data, c.Next))
		matches = matches && ok
		files = append(files, map[string]string{"path": c.Path, "preimage": c.Preimage(),
			"postimage": c.Postimage(), "actual": actual})
		paths = append(paths, c.Path)
	}
	if env.Emit != nil {
		env.Emit(backend.EvPatchApplied, map[string]any{"tool": ToolFile, "runtime": "codex", "item": r.itemID,
			"status": it.Status, "matchesApproval": matches, "checkpointId": ckID, "files": files})
	}
	switch {
	case it.Status != "completed" && !matches:
		return backend.ToolResult{IsError: true, Content: fmt.Sprintf("Codex did not apply its patch (status %s); "+
			"%s do not hold the approved content", it.Status, strings.Join(paths, ", "))}
	case !matches:
		return backend.ToolResult{IsError: true, Content: fmt.Sprintf("after Codex applied its patch, %s do not "+
			"hold the approved content; review them", strings.Join(paths, ", "))}
	}
	return backend.ToolResult{Content: fmt.Sprintf("Codex applied its patch: %s (status %s)",
		strings.Join(paths, ", "), it.Status)}
}
