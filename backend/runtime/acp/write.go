package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	sdk "github.com/coder/acp-go-sdk"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/backend/patch"
	"agenthub/backend/scrub"
	"agenthub/backend/tools"
	"agenthub/workspace"
)

// This file is every write of an ACP agent: a change shown in a permission
// request becomes a staged patch; once approved it is a plan, and the
// agent's fs/write_text_file of that change is applied by AgentHub with
// only the approved hunks (workspace.ApplyWith, with a checkpoint, recorded
// as an intent of the approving call first). A write no
// approval covers is itself shown as a staged patch and applied only after
// approval. Nothing else writes to the workspace.

// plan is an approved change waiting for the agent's write.
type plan struct {
	tool     string
	full     []byte         // the content the agent asked to write
	approved patch.Proposal // narrowed to the reviewer's hunks
	sel      patch.Selection
	done     bool // the write came and was handled
	applied  *workspace.ApplyResult
	err      error
	// opts record the write as an intent of the call that approved it
	// before its first byte (intent before effect, docs/RELIABILITY.md).
	opts workspace.Options
	// env is the approving call's: a document or an image the write creates
	// becomes an artifact of the run (issue 18), as with the built-in tools.
	env backend.ToolEnv
}

// propose computes the change a diff or a write asks for from the live
// workspace. Its error is written for the agent.
func propose(w *workspace.FS, rel string, content []byte, del bool) (patch.Proposal, error) {
	return patch.Prepare(w, rel, func([]byte, bool) ([]byte, bool, error) { return content, del, nil })
}

// gated describes a change for the gate, marked as the ACP agent's.
func gated(env backend.ToolEnv, tool string, pr patch.Proposal) (*backend.GatedAction, error) {
	return patch.Gated(env, patch.Request{Tool: tool, Runtime: "acp",
		Scrub: func(s string) string { return scrub.Paths(env.WorkspaceRoot, s) }}, pr)
}

// editAction shows a permission request's change as a staged patch. A
// request with several files, or none, is a write of high risk naming them.
func editAction(env backend.ToolEnv, a permArgs) (*backend.GatedAction, error) {
	if len(a.Diffs) != 1 {
		return genericWrite(env, a)
	}
	d := a.Diffs[0]
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, d.Path); ok {
		return agentpath.SecretAccess{Label: ToolEdit, Tool: ToolEdit, Path: d.Path, Pattern: pat}.Action(), nil
	}
	w, err := agentpath.Open(env)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	pr, err := propose(w, d.Path, []byte(d.NewText), d.Delete)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", ToolEdit, scrub.Paths(env.WorkspaceRoot, err.Error()))
	}
	return gated(env, ToolEdit, pr)
}

func genericWrite(env backend.ToolEnv, a permArgs) (*backend.GatedAction, error) {
	paths := a.Paths
	for _, d := range a.Diffs {
		paths = append(paths, d.Path)
		if ok, pat := agentpath.Secret(env.WorkspaceRoot, d.Path); ok {
			return agentpath.SecretAccess{Label: ToolEdit, Tool: ToolEdit, Path: d.Path, Pattern: pat}.Action(), nil
		}
	}
	preview, _ := json.Marshal(map[string]any{"title": a.Title, "kind": a.Kind, "paths": paths, "text": a.Text,
		"diffs": a.Diffs, "runtime": "acp"})
	subject, _ := json.Marshal(map[string]any{"kind": string(backend.ActionWrite), "tool": ToolEdit,
		"title": a.Title, "paths": paths, "diffs": a.Diffs})
	return &backend.GatedAction{Kind: backend.ActionWrite, Title: scrub.Clip(a.Title, 120), Risk: backend.RiskHigh,
		Preview: []byte(scrub.Paths(env.WorkspaceRoot, string(preview))), Subject: subject}, nil
}

// planEdit records what the reviewer approved of a request's changes,
// before the agent is allowed to write them. A result means the request
// was answered "no" and the call ends with it.
func (s *session) planEdit(env backend.ToolEnv, p *permission, a permArgs, resume json.RawMessage) ([]*plan,
	*backend.ToolResult) {
	w, err := agentpath.Open(env)
	if err != nil {
		r := scrub.Failure(env.WorkspaceRoot, "%s: %v", ToolEdit, err)
		_ = p.respond(rejectOutcome(p.req.Options))
		return nil, &r
	}
	defer w.Close()
	var plans []*plan
	for _, d := range a.Diffs {
		pr, err := propose(w, d.Path, []byte(d.NewText), d.Delete)
		if err != nil {
			r := scrub.Failure(env.WorkspaceRoot, "%s: nothing was written: %v", ToolEdit, err)
			_ = p.respond(rejectOutcome(p.req.Options))
			return nil, &r
		}
		narrowed, sel, err := patch.Narrow(pr, resume)
		sel.EmitRejected(env, ToolEdit, pr.Path)
		if err != nil {
			r := scrub.Failure(env.WorkspaceRoot, "%s: nothing was written to %s: %v%s", ToolEdit, pr.Path, err, sel.Describe())
			_ = p.respond(rejectOutcome(p.req.Options))
			return nil, &r
		}
		plans = append(plans, &plan{tool: ToolEdit, full: []byte(d.NewText), approved: narrowed, sel: sel,
			opts: tools.JournalOptions(env), env: env})
	}
	s.Mu.Lock()
	s.plans = append(s.plans, plans...)
	s.Mu.Unlock()
	return plans, nil
}

// forget drops plans whose request was not allowed after all.
func (s *session) forget(plans []*plan) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, pl := range plans {
		for i, x := range s.plans {
			if x == pl {
				s.plans = append(s.plans[:i], s.plans[i+1:]...)
				break
			}
		}
	}
}

// takePlan returns the approved plan a write carries out: the same path
// and exactly the content the reviewer was shown.
func (s *session) takePlan(rel, content string) *plan {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for i, pl := range s.plans {
		if pl.approved.Path == rel && bytes.Equal(pl.full, []byte(content)) {
			s.plans = append(s.plans[:i], s.plans[i+1:]...)
			return pl
		}
	}
	return nil
}

// applyPlan writes the approved content. A partial approval is written and
// then reported to the agent as an error, so that it reads the file again
// instead of assuming its whole change is there.
func (s *session) applyPlan(pl *plan) error {
	res, err := s.apply(pl.approved, pl.opts)
	s.Mu.Lock()
	pl.done, pl.err = true, err
	if err == nil {
		pl.applied = &res
	}
	s.Signal()
	s.Mu.Unlock()
	if err == nil && len(res.Files) == 1 && res.Files[0].Action == workspace.ActionCreated {
		tools.PublishCreated(pl.env, res.Files[0].Path, pl.tool)
	}
	switch {
	case err != nil:
		return refused("nothing was written: %v", err)
	case pl.sel.Partial():
		return refused("only part of this change was approved%s. Only the approved hunks were written to %s: "+
			"read the file again before relying on its content", pl.sel.Describe(), pl.approved.Path)
	}
	return nil
}

// apply writes one proposal through workspace.Apply: the pre-image is
// verified, the previous content goes into a checkpoint. Its error is
// written for the agent.
func (s *session) apply(pr patch.Proposal, opts workspace.Options) (workspace.ApplyResult, error) {
	store, err := s.checkpointStore()
	if err != nil {
		return workspace.ApplyResult{}, err
	}
	w, err := workspace.Open(s.Root)
	if err != nil {
		return workspace.ApplyResult{}, errors.New("the workspace cannot be opened")
	}
	defer w.Close()
	res, err := workspace.ApplyWith(w, []workspace.Change{{Path: pr.Path, PreimageSHA256: pr.Preimage(),
		NewContent: pr.Next, Delete: pr.Delete}}, store, opts)
	switch {
	case errors.Is(err, workspace.ErrConflict):
		return res, fmt.Errorf("%s changed since the change was approved; read it again and redo the change", pr.Path)
	case err != nil:
		return res, errors.New(s.Scrub(err.Error()))
	}
	return res, nil
}

func (s *session) checkpointStore() (*workspace.CheckpointStore, error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.checkpoints != nil {
		return s.checkpoints, nil
	}
	if s.cfg.CheckpointDir == "" {
		return nil, errors.New("no checkpoint directory is configured")
	}
	st, err := workspace.NewCheckpointStore(s.cfg.CheckpointDir, 0)
	if err != nil {
		return nil, errors.New(workspace.Scrub(err.Error(), s.cfg.CheckpointDir, scrub.Home()))
	}
	s.checkpoints = st
	return st, nil
}

// editOutcome reports an approved edit once the agent finished its tool
// call: what AgentHub applied, or, when the agent wrote on its own instead
// of through the client, whether the file holds the approved content.
func (s *session) editOutcome(env backend.ToolEnv, plans []*plan, status sdk.ToolCallStatus, text string) backend.ToolResult {
	s.forget(plans) // a write that did not come is not allowed later
	var out []string
	isErr := status != sdk.ToolCallStatusCompleted
	for _, pl := range plans {
		s.Mu.Lock()
		done, applied, perr := pl.done, pl.applied, pl.err
		s.Mu.Unlock()
		pr := pl.approved
		switch {
		case done && perr != nil:
			isErr = true
			out = append(out, fmt.Sprintf("%s: nothing was written to %s: %v", ToolEdit, pr.Path, perr))
		case done:
			emitApplied(env, ToolEdit, pr, pl.sel, applied, true)
			out = append(out, fmt.Sprintf("%s: %s %s; checkpoint %s holds the previous state%s", ToolEdit,
				applied.Files[0].Action, pr.Path, applied.CheckpointID, pl.sel.Describe()))
		default:
			ok := s.verify(pr)
			emitApplied(env, ToolEdit, pr, pl.sel, nil, ok)
			if !ok {
				isErr = true
				out = append(out, fmt.Sprintf("%s: the agent did not write %s through AgentHub, and the file does not "+
					"hold the approved content; review it", ToolEdit, pr.Path))
			} else {
				out = append(out, fmt.Sprintf("%s: the agent wrote %s itself; it holds the approved content%s",
					ToolEdit, pr.Path, pl.sel.Describe()))
			}
		}
	}
	if text != "" {
		out = append(out, "agent: "+scrub.Clip(text, 4000))
	}
	return backend.ToolResult{Content: scrub.Paths(env.WorkspaceRoot, joinLines(out)), IsError: isErr}
}

// verify reports whether the file holds the approved post-image.
func (s *session) verify(pr patch.Proposal) bool {
	w, err := workspace.Open(s.Root)
	if err != nil {
		return false
	}
	defer w.Close()
	data, err := w.ReadFile(pr.Path)
	if pr.Delete {
		return errors.Is(err, fs.ErrNotExist)
	}
	return err == nil && bytes.Equal(data, pr.Next)
}

// emitApplied records run.patch.applied for one file.
func emitApplied(env backend.ToolEnv, tool string, pr patch.Proposal, sel patch.Selection, res *workspace.ApplyResult, matches bool) {
	if env.Emit == nil {
		return
	}
	applied := map[string]any{"tool": tool, "runtime": "acp", "matchesApproval": matches}
	if res != nil {
		applied["checkpointId"], applied["files"] = res.CheckpointID, res.Files
	} else {
		applied["files"] = []map[string]string{{"path": pr.Path, "preimage": pr.Preimage(), "postimage": pr.Postimage()}}
	}
	if sel.Chosen {
		applied["hunks"] = map[string]any{"path": pr.Path, "approved": sel.Keep, "of": sel.Total}
	}
	env.Emit(backend.EvPatchApplied, applied)
}

func joinLines(ls []string) string {
	var b bytes.Buffer
	for i, l := range ls {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return b.String()
}

// writeReq is an fs/write_text_file no approval covered, proxied to the
// engine as a call.
type writeReq struct {
	callID   string
	rel      string
	content  string
	answer   chan error
	sent     bool
	answered bool
	s        *session
}

// newWrite registers a write and queues it for Stream. A write that
// changes nothing is answered at once.
func (s *session) newWrite(rel, content string) *writeReq {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.reqSeq++
	wr := &writeReq{callID: fmt.Sprintf("acp-%s-write-%d", s.ID, s.reqSeq), rel: rel, content: content,
		answer: make(chan error, 1), s: s}
	s.writes[wr.callID] = wr
	live.AddCall(wr.callID, s)
	if s.closing {
		wr.answered = true
		wr.answer <- refused("the run is stopping; nothing was written")
		return wr
	}
	s.Push(item{kind: itemWrite, write: wr})
	return wr
}

func (wr *writeReq) respond(err error) {
	wr.s.Mu.Lock()
	defer wr.s.Mu.Unlock()
	if wr.answered {
		return
	}
	wr.answered = true
	wr.answer <- err
}

func (wr *writeReq) cancel() { wr.respond(refused("the write was cancelled; nothing was written")) }

// writeArgs are a write call's arguments.
type writeArgs struct {
	Session string `json:"session"`
	Request string `json:"request"`
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (s *session) writeCall(wr *writeReq) (backend.ToolCallRequest, error) {
	args, err := json.Marshal(writeArgs{Session: s.ID, Request: wr.callID, Path: wr.rel, Content: wr.content})
	if err != nil {
		return backend.ToolCallRequest{}, fmt.Errorf("encode a write call: %w", err)
	}
	return backend.ToolCallRequest{ID: wr.callID, Name: ToolWrite, Arguments: args}, nil
}

// writeTool proxies a write no approval covered.
type writeTool struct{}

func (writeTool) Spec() backend.ToolSpec {
	return spec(ToolWrite, "A file the ACP agent wrote without an approved change, shown as a staged patch.")
}

func decodeWrite(raw json.RawMessage) (writeArgs, error) {
	var a writeArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.Session == "" || a.Path == "" {
		return a, errors.New("not an ACP write")
	}
	return a, nil
}

func (writeTool) Action(_ context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decodeWrite(raw)
	if err != nil {
		return nil, err
	}
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, a.Path); ok {
		return agentpath.SecretAccess{Label: ToolWrite, Tool: ToolWrite, Path: a.Path, Pattern: pat}.Action(), nil
	}
	w, err := agentpath.Open(env)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	pr, err := propose(w, a.Path, []byte(a.Content), false)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", ToolWrite, scrub.Paths(env.WorkspaceRoot, err.Error()))
	}
	return gated(env, ToolWrite, pr)
}

// Execute applies the approved hunks of the write and answers the agent.
func (writeTool) Execute(_ context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decodeWrite(in.Arguments)
	if err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", ToolWrite, err), nil
	}
	s, ok := live.ByID(a.Session)
	if !ok {
		return scrub.Failure(env.WorkspaceRoot, "%s: %s", ToolWrite, errGone.Message), nil
	}
	s.Mu.Lock()
	wr := s.writes[a.Request]
	s.Mu.Unlock()
	if wr == nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: the agent made no such write", ToolWrite), nil
	}
	no := func(format string, args ...any) (backend.ToolResult, error) {
		r := scrub.Failure(env.WorkspaceRoot, format, args...)
		wr.respond(refused("%s", r.Content))
		return r, nil
	}
	w, err := agentpath.Open(env)
	if err != nil {
		return no("%s: %v", ToolWrite, err)
	}
	defer w.Close()
	pr, err := propose(w, a.Path, []byte(a.Content), false)
	if err != nil {
		return no("%s: nothing was written: %v", ToolWrite, err)
	}
	pr, sel, err := patch.Narrow(pr, in.ResumeInput)
	sel.EmitRejected(env, ToolWrite, pr.Path)
	if err != nil {
		return no("%s: nothing was written to %s: %v%s", ToolWrite, pr.Path, err, sel.Describe())
	}
	pl := &plan{tool: ToolWrite, full: []byte(a.Content), approved: pr, sel: sel, opts: tools.JournalOptions(env), env: env}
	wr.respond(s.applyPlan(pl))
	if pl.err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: nothing was written to %s: %v", ToolWrite, pr.Path, pl.err), nil
	}
	emitApplied(env, ToolWrite, pr, sel, pl.applied, true)
	return backend.ToolResult{Content: fmt.Sprintf("%s: %s %s; checkpoint %s holds the previous state%s", ToolWrite,
		pl.applied.Files[0].Action, pr.Path, pl.applied.CheckpointID, sel.Describe())}, nil
}
