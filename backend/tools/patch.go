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
	"strings"
	"sync"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/diffview"
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

// proposal is one whole-file change computed from the workspace as it is now.
type proposal struct {
	path   string
	old    []byte
	exists bool
	mode   string // diffview mode of the file, kept by the change
	next   []byte
	delete bool
}

func (p proposal) preimage() string {
	if !p.exists {
		return workspace.Absent
	}
	return workspace.Hash(p.old)
}

func (p proposal) postimage() string {
	if p.delete {
		return workspace.Absent
	}
	return workspace.Hash(p.next)
}

func (p proposal) operation() string {
	switch {
	case p.delete:
		return "delete"
	case !p.exists:
		return "create"
	}
	return "modify"
}

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
	if ok, pat := secretPath(env.WorkspaceRoot, p); ok {
		return secretAction(name, "written", p, pat), nil
	}
	pr, err := m.prepare(w, a, p)
	if err != nil {
		return nil, nil
	}
	act, err := gatedPatch(env, name, pr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", name, p, err)
	}
	m.s.plans.put(key, plan{pre: pr.preimage(), post: pr.postimage()})
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
	if ok, pat := secretPath(env.WorkspaceRoot, p); ok {
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
	case pl.pre != pr.preimage() || pl.post != pr.postimage():
		return changed(env, name, p), nil
	}
	pr, sel, err := narrow(pr, in.ResumeInput)
	sel.emitRejected(env, name, p)
	switch {
	case errors.Is(err, errNothingApproved):
		return failure(env, "%s: nothing was written to %s%s", name, p, sel.describe()), nil
	case err != nil:
		return failure(env, "%s: nothing was written: %v", name, err), nil
	}
	return m.apply(env, w, pr, pl, sel)
}

func (m *mutator[A]) apply(env backend.ToolEnv, w *workspace.FS, pr proposal, pl plan, sel selection) (backend.ToolResult, error) {
	name := m.op.spec().Name
	store, err := m.s.checkpoints()
	if err != nil {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", name, err)
	}
	res, err := workspace.Apply(w, []workspace.Change{{Path: pr.path, PreimageSHA256: pl.pre, NewContent: pr.next,
		Delete: pr.delete}}, store)
	switch {
	case errors.Is(err, workspace.ErrConflict):
		return changed(env, name, pr.path), nil
	case errors.Is(err, workspace.ErrOutsideRoot), errors.Is(err, workspace.ErrProtected),
		errors.Is(err, workspace.ErrTooLarge), errors.Is(err, fs.ErrInvalid):
		return failure(env, "%s: nothing was written: %s", name, pathMessage(err)), nil
	case err != nil:
		return failure(env, "%s: nothing was written: %v", name, err), nil
	}
	if env.Emit != nil {
		applied := map[string]any{"tool": name, "checkpointId": res.CheckpointID, "files": res.Files}
		if sel.chosen {
			applied["hunks"] = map[string]any{"path": pr.path, "approved": sel.keep, "of": sel.total}
		}
		env.Emit(backend.EvPatchApplied, applied)
	}
	var what string
	switch pr.operation() {
	case "delete":
		what = fmt.Sprintf("deleted %s (was %d bytes)", pr.path, len(pr.old))
	case "create":
		what = fmt.Sprintf("created %s (%d bytes)", pr.path, len(pr.next))
	default:
		what = fmt.Sprintf("updated %s (%d → %d bytes)", pr.path, len(pr.old), len(pr.next))
	}
	return success(env, fmt.Sprintf("%s: %s; checkpoint %s holds the previous state%s", name, what,
		res.CheckpointID, sel.describe())), nil
}

func changed(env backend.ToolEnv, name, p string) backend.ToolResult {
	return failure(env, "%s: nothing was written: %s changed since the change was proposed; "+
		"read it again and redo the change", name, p)
}

// prepare computes the proposal for a resolved path from the workspace as it
// is now. Its error is written for the model.
func (m *mutator[A]) prepare(w *workspace.FS, a A, p string) (proposal, error) {
	switch {
	case p == ".":
		return proposal{}, errors.New("the workspace root is not a file; name a file")
	case strings.ContainsAny(p, "\x00\t\n\r"):
		return proposal{}, fmt.Errorf("%q: control characters are not allowed in file names", p)
	}
	if cl := workspace.Classify(p); cl == workspace.ClassGit || cl == workspace.ClassPolicy {
		return proposal{}, fmt.Errorf("%s is inside a protected %s directory; agents may not change it", p, cl)
	}
	cur, exists, mode, err := readTarget(w, p)
	if err != nil {
		return proposal{}, err
	}
	next, del, err := m.op.propose(a, p, cur, exists)
	if err != nil {
		return proposal{}, err
	}
	if !del && exists && bytes.Equal(next, cur) {
		return proposal{}, fmt.Errorf("nothing to change: %s already has this content", p)
	}
	return proposal{path: p, old: cur, exists: exists, mode: mode, next: next, delete: del}, nil
}

// readTarget reads a write target the way workspace.Apply will: no symlink
// is followed, neither the file nor a parent directory.
func readTarget(w *workspace.FS, p string) (data []byte, exists bool, mode string, err error) {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		fi, err := w.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return nil, false, "", errors.New(pathMessage(err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, false, "", fmt.Errorf("%s: the parent directory %s is a symbolic link; writes never follow symlinks", p, dir)
		}
		if !fi.IsDir() {
			return nil, false, "", fmt.Errorf("%s: %s is a file, not a directory", p, dir)
		}
	}
	fi, err := w.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, diffview.ModeRegular, nil
	case err != nil:
		return nil, false, "", errors.New(pathMessage(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, false, "", fmt.Errorf("%s is a symbolic link; writes never follow symlinks, change its target instead", p)
	case fi.IsDir():
		return nil, false, "", fmt.Errorf("%s is a directory, not a file", p)
	}
	data, err = w.ReadFile(p)
	if err != nil {
		return nil, false, "", errors.New(pathMessage(err))
	}
	mode = diffview.ModeRegular
	if fi.Mode().Perm()&0o111 != 0 {
		mode = diffview.ModeExecutable
	}
	return data, true, mode, nil
}

// patchPreview is what the reviewer sees of a proposed change.
type patchPreview struct {
	Tool      string            `json:"tool"`
	Path      string            `json:"path"`
	Operation string            `json:"operation"` // create | modify | delete
	OldSize   int               `json:"oldSize"`
	NewSize   int               `json:"newSize"`
	Preimage  string            `json:"preimage"`
	Postimage string            `json:"postimage"`
	Unified   string            `json:"unified"`
	Diff      diffview.FileDiff `json:"diff"`
}

// gatedPatch describes a proposal for the gate. The subject binds the path,
// the pre-image the diff was computed on and the content that will be
// written (AP9); the diff itself is not bound, since its shape may depend on
// diffview's time budget, but it is a function of the two.
func gatedPatch(env backend.ToolEnv, tool string, pr proposal) (*backend.GatedAction, error) {
	var oldSide, newSide diffview.Side
	if pr.exists {
		oldSide = diffview.Side{Path: pr.path, Mode: pr.mode, Content: pr.old}
	}
	if !pr.delete {
		newSide = diffview.Side{Path: pr.path, Mode: pr.mode, Content: pr.next}
	}
	fd, err := diffview.Diff(oldSide, newSide, diffview.Options{})
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	pv := patchPreview{Tool: tool, Path: pr.path, Operation: pr.operation(), OldSize: len(pr.old),
		Preimage: pr.preimage(), Postimage: pr.postimage(), Unified: string(diffview.Unified(fd)), Diff: fd}
	if !pr.delete {
		pv.NewSize = len(pr.next)
	}
	preview, err := json.Marshal(pv)
	if err != nil {
		return nil, fmt.Errorf("preview: %w", err)
	}
	// File content may mention the machine's paths; previews never do.
	preview = []byte(newScrubber(env.WorkspaceRoot).text(string(preview)))
	if !json.Valid(preview) {
		return nil, errors.New("preview: scrubbing broke the JSON")
	}
	subject, err := json.Marshal(map[string]any{"kind": string(backend.ActionPatch), "tool": tool,
		"workspace": env.WorkspaceID, "path": pr.path,
		"preimages": []approval.Preimage{{Path: pr.path, SHA256: pr.preimage()}}, "postimage": pr.postimage()})
	if err != nil {
		return nil, fmt.Errorf("subject: %w", err)
	}
	title := map[string]string{"create": "Create ", "modify": "Edit ", "delete": "Delete "}[pr.operation()] + pr.path
	return &backend.GatedAction{Kind: backend.ActionPatch, Title: title, Risk: backend.RiskMedium,
		Preview: preview, Subject: subject}, nil
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
