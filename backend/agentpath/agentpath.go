// Package agentpath checks the paths an agent names against the run's
// workspace: which root contains them, whether they are secret files (which
// agents never access, run-model.md §9.1; the built-in tools and the agent
// CLI adapters both ask [Secret]), and the rooted file access the adapters'
// own reads and writes go through. It decides nothing about
// approval; a secret access becomes a gated action the gate denies.
package agentpath

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/scrub"
	"agenthub/workspace"
)

// Rel makes abs relative to the first root that lexically contains it, in
// slash form; false when abs is not absolute or no root contains it.
func Rel(roots []string, abs string) (string, bool) {
	if !filepath.IsAbs(abs) {
		return "", false
	}
	c := filepath.Clean(abs)
	for _, r := range roots {
		if r == "" {
			continue
		}
		rel, err := filepath.Rel(r, c)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel), true
		}
	}
	return "", false
}

// Secret reports whether rel, a clean workspace-relative path, or the file
// its symlinks lead to, is a secret, and the pattern that matched. A symlink
// inside the workspace may point at a secret and a rooted access would
// follow it, so the target is checked too; with no root only the name is.
func Secret(root, rel string) (bool, string) {
	if ok, pat := SecretName(rel); ok {
		return true, pat
	}
	if root == "" {
		return false, ""
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return false, ""
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	if r, err := filepath.Rel(realRoot, real); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return SecretName(filepath.ToSlash(r))
	}
	// Outside the root the rooted access refuses anyway; still, say "secret"
	// when the target is one, which is the more useful reason.
	return approval.SecretPath(real)
}

// SecretName reports whether a workspace-relative path is a secret by its
// name alone, following no symlinks: the patterns of
// [approval.SecretPath] and the workspace's secret class.
func SecretName(rel string) (bool, string) {
	if ok, pat := approval.SecretPath(rel); ok {
		return true, pat
	}
	if workspace.Classify(rel) == workspace.ClassSecret {
		return true, "secret file"
	}
	return false, ""
}

// SecretAccess is an agent's access to a secret file.
type SecretAccess struct {
	Label   string // starts the title: the tool, or the runtime ("Codex")
	Tool    string
	Path    string // workspace-relative
	Pattern string // what matched
	Runtime string // named in the preview when set
}

// Action describes the access as a gated action, which the gate denies.
func (a SecretAccess) Action() *backend.GatedAction {
	p := map[string]string{"tool": a.Tool, "path": a.Path, "pattern": a.Pattern,
		"reason": "agents never access secret files"}
	if a.Runtime != "" {
		p["runtime"] = a.Runtime
	}
	preview, _ := json.Marshal(p)
	subject, _ := json.Marshal(map[string]string{"kind": string(backend.ActionSecret), "tool": a.Tool, "path": a.Path})
	return &backend.GatedAction{Kind: backend.ActionSecret, Title: a.Label + ": secret file " + a.Path,
		Risk: backend.RiskHigh, Preview: preview, Subject: subject}
}

// Open opens the run's rooted file access; its error never names the root.
func Open(env backend.ToolEnv) (*workspace.FS, error) {
	if env.WorkspaceRoot == "" {
		return nil, errors.New("the run has no workspace root")
	}
	w, err := workspace.Open(env.WorkspaceRoot)
	if err != nil {
		return nil, errors.New(scrub.Paths(env.WorkspaceRoot, err.Error()))
	}
	return w, nil
}
