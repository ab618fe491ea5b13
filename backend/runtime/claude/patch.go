package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/diffview"
	"agenthub/workspace"
)

// This file turns Claude Code's Write, Edit and MultiEdit into the same
// staged patch the built-in write_file and edit_file show: a diffview
// preview with per-hunk selection, bound to the pre-image and the
// post-image. It mirrors backend/tools' patch.go and hunks.go, whose helpers
// are not exported; the preview and subject have the same shape, so the UI,
// the policy and grants treat both alike.

// fileInput is the input of Write, Edit and MultiEdit, paths
// workspace-relative.
type fileInput struct {
	FilePath   string  `json:"file_path"`
	Content    *string `json:"content,omitempty"`
	OldString  *string `json:"old_string,omitempty"`
	NewString  *string `json:"new_string,omitempty"`
	ReplaceAll bool    `json:"replace_all,omitempty"`
	Edits      []edit  `json:"edits,omitempty"`
}

type edit struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// change is one whole-file change computed from the workspace as it is now.
type change struct {
	path   string
	old    []byte
	exists bool
	mode   string
	next   []byte
}

func (c change) preimage() string {
	if !c.exists {
		return workspace.Absent
	}
	return workspace.Hash(c.old)
}

func (c change) postimage() string { return workspace.Hash(c.next) }

func (c change) operation() string {
	if !c.exists {
		return "create"
	}
	return "modify"
}

// propose computes the change a file tool asks for. Its error is written
// for the agent.
func propose(w *workspace.FS, tool string, in fileInput) (change, error) {
	p, err := w.Resolve(in.FilePath)
	switch {
	case err != nil:
		return change{}, err
	case p == ".":
		return change{}, errors.New("the workspace root is not a file")
	case strings.ContainsAny(p, "\x00\t\n\r"):
		return change{}, fmt.Errorf("%q: control characters are not allowed in file names", p)
	}
	if cl := workspace.Classify(p); cl == workspace.ClassGit || cl == workspace.ClassPolicy {
		return change{}, fmt.Errorf("%s is inside a protected %s directory; agents may not change it", p, cl)
	}
	cur, exists, mode, err := readTarget(w, p)
	if err != nil {
		return change{}, err
	}
	next, err := nextContent(tool, in, string(cur), exists, p)
	if err != nil {
		return change{}, err
	}
	if exists && next == string(cur) {
		return change{}, fmt.Errorf("nothing to change: %s already has this content", p)
	}
	return change{path: p, old: cur, exists: exists, mode: mode, next: []byte(next)}, nil
}

// nextContent applies the tool's input to the current content, with Claude
// Code's semantics: Write replaces, Edit replaces one occurrence (or all
// with replace_all; an empty old_string creates the file), MultiEdit applies
// its edits in order.
func nextContent(tool string, in fileInput, cur string, exists bool, p string) (string, error) {
	switch tool {
	case "Write":
		if in.Content == nil {
			return "", errors.New("Write without content")
		}
		return *in.Content, nil
	case "Edit":
		if in.OldString == nil || in.NewString == nil {
			return "", errors.New("Edit without old_string or new_string")
		}
		return applyEdit(cur, exists, edit{OldString: *in.OldString, NewString: *in.NewString, ReplaceAll: in.ReplaceAll}, p)
	case "MultiEdit":
		if len(in.Edits) == 0 {
			return "", errors.New("MultiEdit without edits")
		}
		for i, e := range in.Edits {
			next, err := applyEdit(cur, exists, e, p)
			if err != nil {
				return "", fmt.Errorf("edit %d: %w", i+1, err)
			}
			cur, exists = next, true
		}
		return cur, nil
	}
	return "", fmt.Errorf("%s is not a file tool", tool)
}

func applyEdit(cur string, exists bool, e edit, p string) (string, error) {
	switch {
	case e.OldString == "" && (!exists || cur == ""):
		return e.NewString, nil
	case e.OldString == "":
		return "", fmt.Errorf("old_string is empty, but %s is not", p)
	case !exists:
		return "", fmt.Errorf("%s does not exist", p)
	case e.OldString == e.NewString:
		return "", errors.New("old_string and new_string are identical")
	}
	switch n := strings.Count(cur, e.OldString); {
	case n == 0:
		return "", fmt.Errorf("old_string was not found in %s", p)
	case n > 1 && !e.ReplaceAll:
		return "", fmt.Errorf("old_string matches %d times in %s; it must match once, or set replace_all", n, p)
	}
	if e.ReplaceAll {
		return strings.ReplaceAll(cur, e.OldString, e.NewString), nil
	}
	return strings.Replace(cur, e.OldString, e.NewString, 1), nil
}

// readTarget reads a write target the way a careful writer must: no
// symlink is followed, neither the file nor a parent directory.
func readTarget(w *workspace.FS, p string) (data []byte, exists bool, mode string, err error) {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		fi, err := w.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		switch {
		case err != nil:
			return nil, false, "", err
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, false, "", fmt.Errorf("%s: the parent directory %s is a symbolic link; writes never follow symlinks", p, dir)
		case !fi.IsDir():
			return nil, false, "", fmt.Errorf("%s: %s is a file, not a directory", p, dir)
		}
	}
	fi, err := w.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, diffview.ModeRegular, nil
	case err != nil:
		return nil, false, "", err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, false, "", fmt.Errorf("%s is a symbolic link; writes never follow symlinks", p)
	case fi.IsDir():
		return nil, false, "", fmt.Errorf("%s is a directory, not a file", p)
	}
	if data, err = w.ReadFile(p); err != nil {
		return nil, false, "", err
	}
	mode = diffview.ModeRegular
	if fi.Mode().Perm()&0o111 != 0 {
		mode = diffview.ModeExecutable
	}
	return data, true, mode, nil
}

// fileDiff is the diff the reviewer is shown; computing it the same way at
// apply time keeps hunk indexes in agreement.
func fileDiff(c change) (diffview.FileDiff, error) {
	var oldSide diffview.Side
	if c.exists {
		oldSide = diffview.Side{Path: c.path, Mode: c.mode, Content: c.old}
	}
	return diffview.Diff(oldSide, diffview.Side{Path: c.path, Mode: c.mode, Content: c.next}, diffview.Options{})
}

// patchPreview has the shape of backend/tools' preview.
type patchPreview struct {
	Tool      string            `json:"tool"`
	Path      string            `json:"path"`
	Operation string            `json:"operation"`
	OldSize   int               `json:"oldSize"`
	NewSize   int               `json:"newSize"`
	Preimage  string            `json:"preimage"`
	Postimage string            `json:"postimage"`
	Unified   string            `json:"unified"`
	Diff      diffview.FileDiff `json:"diff"`
	Runtime   string            `json:"runtime"`
}

// gatedPatch describes a change for the gate. The subject binds the path,
// the pre-image and the post-image (AP9).
func gatedPatch(env backend.ToolEnv, tool string, c change) (*backend.GatedAction, error) {
	fd, err := fileDiff(c)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	pv := patchPreview{Tool: tool, Path: c.path, Operation: c.operation(), OldSize: len(c.old), NewSize: len(c.next),
		Preimage: c.preimage(), Postimage: c.postimage(), Unified: string(diffview.Unified(fd)), Diff: fd,
		Runtime: "claude"}
	preview, err := json.Marshal(pv)
	if err != nil {
		return nil, fmt.Errorf("preview: %w", err)
	}
	preview = []byte(scrubText(env.WorkspaceRoot, string(preview)))
	if !json.Valid(preview) {
		return nil, errors.New("preview: scrubbing broke the JSON")
	}
	subject, err := json.Marshal(map[string]any{"kind": string(backend.ActionPatch), "tool": tool,
		"workspace": env.WorkspaceID, "path": c.path,
		"preimages": []approval.Preimage{{Path: c.path, SHA256: c.preimage()}}, "postimage": c.postimage()})
	if err != nil {
		return nil, fmt.Errorf("subject: %w", err)
	}
	title := map[string]string{"create": "Create ", "modify": "Edit "}[c.operation()] + c.path
	return &backend.GatedAction{Kind: backend.ActionPatch, Title: title, Risk: backend.RiskMedium,
		Preview: preview, Subject: subject}, nil
}

// selection is the reviewer's per-hunk choice, from the resume input.
type selection struct {
	chosen   bool
	keep     []int
	total    int
	rejected []diffview.Hunk
	reason   string
}

// partial reports whether only some hunks were approved.
func (s selection) partial() bool { return s.chosen && len(s.rejected) > 0 }

var errNothingApproved = errors.New("the reviewer approved none of the hunks")

// narrow applies a per-hunk selection to a change: the result holds only
// the approved hunks, computed from the same pre-image.
func narrow(c change, resume json.RawMessage) (change, selection, error) {
	var d struct {
		Hunks  *[]backend.HunkRef `json:"hunks"`
		Reason string             `json:"reason"`
	}
	if len(resume) > 0 {
		_ = json.Unmarshal(resume, &d) // without hunks, the whole change is approved
	}
	sel := selection{reason: d.Reason}
	if d.Hunks == nil {
		return c, sel, nil
	}
	fd, err := fileDiff(c)
	if err != nil {
		return c, sel, fmt.Errorf("diff %s: %w", c.path, err)
	}
	sel.chosen, sel.total = true, len(fd.Hunks)
	kept := map[int]bool{}
	for _, h := range *d.Hunks {
		if h.Path == c.path && !kept[h.Index] {
			sel.keep = append(sel.keep, h.Index)
			kept[h.Index] = true
		}
	}
	for i, h := range fd.Hunks {
		if !kept[i] {
			sel.rejected = append(sel.rejected, h)
		}
	}
	if len(sel.rejected) == 0 {
		return c, sel, nil
	}
	part, err := diffview.Select(fd, sel.keep)
	if err != nil {
		return c, sel, fmt.Errorf("select the approved hunks of %s: %w", c.path, err)
	}
	if part.Status == diffview.StatusUnchanged || len(sel.keep) == 0 {
		return c, sel, errNothingApproved
	}
	next, err := diffview.Apply(c.old, part)
	if err != nil {
		return c, sel, fmt.Errorf("apply the approved hunks of %s: %w", c.path, err)
	}
	c.next = next
	return c, sel, nil
}

// describe names the rejected hunks, for the agent.
func (s selection) describe() string {
	if !s.partial() {
		return ""
	}
	heads := make([]string, len(s.rejected))
	for i, h := range s.rejected {
		heads[i] = fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
	}
	msg := fmt.Sprintf("; the reviewer approved %d of %d hunks and rejected %s", len(s.keep), s.total,
		strings.Join(heads, ", "))
	if s.reason != "" {
		msg += " (reason: " + s.reason + ")"
	}
	return msg
}

// emitRejected records the hunks the reviewer turned down.
func (s selection) emitRejected(env backend.ToolEnv, tool, path string) {
	if env.Emit == nil || !s.partial() {
		return
	}
	env.Emit(backend.EvPatchRejected, map[string]any{"tool": tool, "path": path, "reason": "reviewer",
		"comment": s.reason, "hunks": s.rejected})
}
