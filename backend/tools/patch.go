package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/backend/patch"
	"agenthub/workspace"
)

// patchOp is what distinguishes write_file, edit_file and delete_file: how
// arguments name the path and how the new content follows from the current.
// Everything else (gating, binding, applying) is [mutator]'s.
type patchOp[A any] interface {
	spec() backend.ToolSpec
	schema() *argSchema
	path(a A) string
	// propose returns the new content, or del for a deletion, from the
	// current content (exists is false for a missing file). Its error is
	// written for the model.
	propose(a A, p string, cur []byte, exists bool) (next []byte, del bool, err error)
}

// mutator is a tool that changes one file, only ever through the gate: its
// Action proposes a patch and records the pre-image shown to the reviewer;
// its Execute applies exactly that proposal or nothing.
type mutator[A any] struct {
	s  *shared
	op patchOp[A]
}

func (m *mutator[A]) Spec() backend.ToolSpec { return m.op.spec() }

// Action proposes the change. A call the model got wrong needs no gate: it
// returns nil and Execute, which finds no proposal, reports the mistake.
func (m *mutator[A]) Action(_ context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	name := m.op.spec().Name
	key := planKey(env, name, raw)
	// Whatever this call proposed before is superseded, whether or not it
	// still makes a valid proposal now.
	m.s.plans.forget(key)
	a, err := decode[A](name, m.op.schema(), raw)
	if err != nil {
		return nil, nil
	}
	w, err := openWorkspace(env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer w.Close()
	p, err := w.Resolve(m.op.path(a))
	if err != nil {
		return nil, nil
	}
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, p); ok {
		return secretAction(name, "written", p, pat), nil
	}
	pr, err := m.prepare(w, a, p)
	if err != nil {
		return nil, nil
	}
	act, err := gated(env, name, pr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", name, p, err)
	}
	m.s.plans.put(key, plan{pre: pr.Preimage(), post: pr.Postimage()})
	return act, nil
}

// Execute applies the proposal its Action recorded, verifying the pre-image.
func (m *mutator[A]) Execute(_ context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	name := m.op.spec().Name
	pl, planned := m.s.plans.take(planKey(env, name, in.Arguments))
	a, err := decode[A](name, m.op.schema(), in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	w, err := openWorkspace(env)
	if err != nil {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", name, err)
	}
	defer w.Close()
	p, err := w.Resolve(m.op.path(a))
	if err != nil {
		return failure(env, "%s: %s", name, pathMessage(err)), nil
	}
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, p); ok {
		return failure(env, "%s: refused: %s is a secret file (%s); agents never write secrets", name, p, pat), nil
	}
	pr, err := m.prepare(w, a, p)
	switch {
	case err != nil && planned:
		return changed(env, name, p), nil
	case err != nil:
		return failure(env, "%s: %v", name, err), nil
	case !planned:
		return failure(env, "%s: nothing was written: this change to %s was not proposed through the approval gate "+
			"(the file may have changed while the call was checked); call %s again", name, p, name), nil
	case pl.pre != pr.Preimage() || pl.post != pr.Postimage():
		return changed(env, name, p), nil
	}
	pr, sel, err := patch.Narrow(pr, in.ResumeInput)
	sel.EmitRejected(env, name, p)
	switch {
	case errors.Is(err, patch.ErrNothingApproved):
		return failure(env, "%s: nothing was written to %s%s", name, p, sel.Describe()), nil
	case err != nil:
		return failure(env, "%s: nothing was written: %v", name, err), nil
	}
	return m.apply(env, w, pr, pl, sel)
}

func (m *mutator[A]) apply(env backend.ToolEnv, w *workspace.FS, pr patch.Proposal, pl plan, sel patch.Selection) (backend.ToolResult, error) {
	name := m.op.spec().Name
	store, err := m.s.checkpoints()
	if err != nil {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", name, err)
	}
	res, err := workspace.ApplyWith(w, []workspace.Change{{Path: pr.Path, PreimageSHA256: pl.pre, NewContent: pr.Next,
		Delete: pr.Delete}}, store, journalOf(env))
	switch {
	case errors.Is(err, workspace.ErrConflict):
		return changed(env, name, pr.Path), nil
	case errors.Is(err, workspace.ErrOutsideRoot), errors.Is(err, workspace.ErrProtected),
		errors.Is(err, workspace.ErrTooLarge), errors.Is(err, fs.ErrInvalid):
		return failure(env, "%s: nothing was written: %s", name, pathMessage(err)), nil
	case err != nil:
		return failure(env, "%s: nothing was written: %v", name, err), nil
	}
	if env.Emit != nil {
		applied := map[string]any{"tool": name, "checkpointId": res.CheckpointID, "files": res.Files}
		if sel.Chosen {
			applied["hunks"] = map[string]any{"path": pr.Path, "approved": sel.Keep, "of": sel.Total}
		}
		env.Emit(backend.EvPatchApplied, applied)
	}
	var what string
	switch pr.Operation() {
	case "delete":
		what = fmt.Sprintf("deleted %s (was %d bytes)", pr.Path, len(pr.Old))
	case "create":
		what = fmt.Sprintf("created %s (%d bytes)", pr.Path, len(pr.Next)) + publishCreated(env, pr.Path, name)
	default:
		what = fmt.Sprintf("updated %s (%d → %d bytes)", pr.Path, len(pr.Old), len(pr.Next))
	}
	return success(env, fmt.Sprintf("%s: %s; checkpoint %s holds the previous state%s", name, what,
		res.CheckpointID, sel.Describe())), nil
}

func changed(env backend.ToolEnv, name, p string) backend.ToolResult {
	return failure(env, "%s: nothing was written: %s changed since the change was proposed; "+
		"read it again and redo the change", name, p)
}

// prepare computes the proposal for a resolved path from the workspace as it
// is now. Its error is written for the model.
func (m *mutator[A]) prepare(w *workspace.FS, a A, p string) (patch.Proposal, error) {
	pr, err := patch.Prepare(w, p, func(cur []byte, exists bool) ([]byte, bool, error) {
		return m.op.propose(a, p, cur, exists)
	})
	if err != nil {
		return pr, errors.New(pathMessage(err))
	}
	return pr, nil
}

// gated describes a proposal for the gate, its preview scrubbed of machine
// paths.
func gated(env backend.ToolEnv, tool string, pr patch.Proposal) (*backend.GatedAction, error) {
	return patch.Gated(env, patch.Request{Tool: tool, Scrub: newScrubber(env.WorkspaceRoot).text}, pr)
}

// plan is what a mutating Action showed: the pre-image and post-image hashes.
type plan struct{ pre, post string }

// maxPlans bounds the proposals kept for calls that were never executed
// (rejected, or abandoned by a cancelled run).
const maxPlans = 1024

// plans holds, per run, tool and arguments, the last proposal an Action
// made. ToolInput carries neither the call's subject nor its id into
// Action, so the arguments are the key.
type plans struct {
	mu  sync.Mutex
	m   map[string]planEntry
	seq uint64
	max int
}

type planEntry struct {
	plan
	seq uint64
}

func newPlans(max int) *plans { return &plans{m: map[string]planEntry{}, max: max} }

func planKey(env backend.ToolEnv, tool string, args json.RawMessage) string {
	h := sha256.New()
	for _, s := range []string{env.RunID, env.WorkspaceRoot, tool, string(bytes.TrimSpace(args))} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (p *plans) put(key string, pl plan) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.m[key]; !ok && len(p.m) >= p.max {
		oldest, min := "", ^uint64(0)
		for k, e := range p.m {
			if e.seq < min {
				oldest, min = k, e.seq
			}
		}
		delete(p.m, oldest)
	}
	p.seq++
	p.m[key] = planEntry{plan: pl, seq: p.seq}
}

func (p *plans) forget(key string) {
	p.mu.Lock()
	delete(p.m, key)
	p.mu.Unlock()
}

// take returns and removes a plan: one proposal allows one write.
func (p *plans) take(key string) (plan, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.m[key]
	delete(p.m, key)
	return e.plan, ok
}
