package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/backend/patch"
	"agenthub/backend/scrub"
	"agenthub/workspace"
)

// fileTool proxies Write, Edit and MultiEdit: the reviewer sees a staged
// patch; after approval the CLI is allowed to write exactly the approved
// content, and the file is compared with it afterwards (agent-clis.md B10).
type fileTool struct{ name string }

func (t fileTool) Spec() backend.ToolSpec {
	return spec(t.name, "A file change Claude Code asked to make, shown as a staged patch.")
}

// Action proposes the change from the arguments and the live workspace.
func (t fileTool) Action(_ context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decodeArgs(raw)
	if err != nil {
		return nil, err
	}
	if len(a.Outside) > 0 {
		return nil, outsideError(a)
	}
	in, err := decodeFileInput(a)
	if err != nil {
		return nil, err
	}
	w, err := agentpath.Open(env)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	p, err := w.Resolve(in.FilePath)
	if err != nil {
		return nil, err
	}
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, p); ok {
		return agentpath.SecretAccess{Label: t.name, Tool: t.name, Path: p, Pattern: pat}.Action(), nil
	}
	c, err := propose(w, a.Tool, in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Tool, err)
	}
	return gated(env, t.name, c)
}

// Execute runs only after approval: it answers the CLI with the approved
// content, waits for the CLI's result and checks the file.
func (t fileTool) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	s, p, a, err := lookup(in.Arguments)
	if err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", t.name, err), nil
	}
	s.emitDiags(env)
	fin, err := decodeFileInput(a)
	if err != nil {
		return s.refuse(env, p, "%s: %v", a.Tool, err), nil
	}
	w, err := agentpath.Open(env)
	if err != nil {
		return backend.ToolResult{}, err
	}
	defer w.Close()
	c, err := propose(w, a.Tool, fin)
	if err != nil {
		return s.refuse(env, p, "%s: nothing was written: %v", a.Tool, err), nil
	}
	c, sel, err := patch.Narrow(c, in.ResumeInput)
	sel.EmitRejected(env, t.name, c.Path)
	if err != nil {
		return s.refuse(env, p, "%s: nothing was written to %s: %v%s", a.Tool, c.Path, err, sel.Describe()), nil
	}
	upd, err := updatedInput(p, a.Tool, c, sel)
	if err != nil {
		return s.refuse(env, p, "%s: %v", a.Tool, err), nil
	}
	ckID, err := s.checkpoint(w, c)
	if err != nil {
		return s.refuse(env, p, "%s: nothing was written to %s: %v", a.Tool, c.Path, err), nil
	}
	if err := s.allow(p, upd); err != nil {
		return backend.ToolResult{}, err
	}
	if sel.Partial() {
		s.tell(fmt.Sprintf("AgentHub: for your %s of %s, the reviewer approved only part of the change%s. "+
			"Only the approved hunks were written: read the file again before relying on its content.", a.Tool, c.Path, sel.Describe()))
	}
	res, err := s.waitResult(ctx, p.toolUseID)
	if err != nil && ctx.Err() != nil {
		s.stop()
		return backend.ToolResult{}, fmt.Errorf("%s: %w", a.Tool, err)
	}
	if err != nil { // the CLI exited: the next Stream fails the run with its stderr
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", a.Tool, err), nil
	}
	return t.verify(env, w, s, c, sel, res, ckID), nil
}

// refuse tells the CLI no and returns the same text as the tool's result.
func (s *session) refuse(env backend.ToolEnv, p *permission, format string, args ...any) backend.ToolResult {
	r := scrub.Failure(env.WorkspaceRoot, format, args...)
	_ = s.deny(p, r.Content)
	return r
}

// updatedInput is the input the CLI runs: the approved content and nothing
// else. A whole approval keeps the CLI's own input; a partial one becomes
// a replacement of the whole pre-image by the approved content.
func updatedInput(p *permission, tool string, c patch.Proposal, sel patch.Selection) (json.RawMessage, error) {
	var orig map[string]json.RawMessage
	if err := json.Unmarshal(p.input, &orig); err != nil {
		return nil, fmt.Errorf("read the request: %w", err)
	}
	out := map[string]any{"file_path": orig["file_path"]}
	switch {
	case tool == "Write":
		out["content"] = string(c.Next)
	case !sel.Partial():
		return p.input, nil
	case tool == "Edit":
		out["old_string"], out["new_string"] = string(c.Old), string(c.Next)
	default: // MultiEdit
		out["edits"] = []edit{{OldString: string(c.Old), NewString: string(c.Next)}}
	}
	return json.Marshal(out)
}

// verify compares the file with the approved post-image (AD3) and records
// the outcome with run.patch.applied.
func (t fileTool) verify(env backend.ToolEnv, w *workspace.FS, s *session, c patch.Proposal, sel patch.Selection,
	res toolResult, ckID string) backend.ToolResult {
	data, err := w.ReadFile(c.Path)
	actual := workspace.Absent
	if err == nil {
		actual = workspace.Hash(data)
	}
	text := s.Scrub(res.Content)
	untouched := actual == c.Preimage()
	if res.IsError && untouched {
		return backend.ToolResult{Content: fmt.Sprintf("%s: Claude Code did not write %s: %s", t.name, c.Path, text),
			IsError: true}
	}
	matches := err == nil && bytes.Equal(data, c.Next)
	if env.Emit != nil {
		applied := map[string]any{"tool": t.name, "runtime": "claude", "matchesApproval": matches, "checkpointId": ckID,
			"files": []map[string]string{{"path": c.Path, "preimage": c.Preimage(), "postimage": c.Postimage(),
				"actual": actual}}}
		if sel.Chosen {
			applied["hunks"] = map[string]any{"path": c.Path, "approved": sel.Keep, "of": sel.Total}
		}
		env.Emit(backend.EvPatchApplied, applied)
	}
	if !matches {
		return backend.ToolResult{IsError: true, Content: fmt.Sprintf("%s: %s does not hold the approved content "+
			"after Claude Code wrote it (approved sha256 %s, found %s); review the file: %s",
			t.name, c.Path, scrub.Short(c.Postimage()), scrub.Short(actual), text)}
	}
	return backend.ToolResult{Content: text + sel.Describe()}
}

// checkpoint keeps the pre-image of the file the CLI is about to write, in
// AgentHub's checkpoint store (never the user's .git), so that `undo`
// restores it; the manifest names the approved content.
func (s *session) checkpoint(w *workspace.FS, c patch.Proposal) (string, error) {
	if s.cfg.Checkpoints == "" {
		return "", errors.New("no checkpoint store is configured, so the change could not be made undoable")
	}
	store, err := workspace.NewCheckpointStore(s.cfg.Checkpoints, 0)
	if err != nil {
		return "", errors.New("the checkpoint store could not be opened")
	}
	id, err := workspace.Record(w, []workspace.Change{{Path: c.Path, PreimageSHA256: c.Preimage(),
		NewContent: c.Next}}, store)
	if errors.Is(err, workspace.ErrConflict) {
		return "", fmt.Errorf("%s changed since the change was proposed; read it again and redo the change", c.Path)
	}
	if err != nil {
		return "", fmt.Errorf("checkpoint: %s", workspace.Scrub(err.Error(), s.cfg.Checkpoints, scrub.Home()))
	}
	return id, nil
}

func decodeFileInput(a callArgs) (fileInput, error) {
	var in fileInput
	if err := json.Unmarshal(a.Input, &in); err != nil {
		return in, fmt.Errorf("%s: the input is not an object: %w", a.Tool, err)
	}
	if in.FilePath == "" {
		return in, fmt.Errorf("%s: no file_path", a.Tool)
	}
	return in, nil
}
