package api

import (
	"context"
	"errors"
	"path/filepath"

	"agenthub/backend"
	"agenthub/workspace"
)

// WorkspacesAPI manages the allowlist.
type WorkspacesAPI struct{ core *Core }

// NewWorkspacesAPI returns the facade.
func NewWorkspacesAPI(c *Core) *WorkspacesAPI { return &WorkspacesAPI{core: c} }

// List returns the allowlisted workspaces, oldest first.
func (w *WorkspacesAPI) List() ([]backend.Workspace, error) {
	db, err := w.core.db()
	if err != nil {
		return nil, err
	}
	list, err := db.Workspaces(context.Background())
	if err != nil {
		return nil, err
	}
	for i := range list {
		list[i].DisplayPath = DisplayPath(list[i].Path)
		list[i].Missing = dirMissing(list[i].Path)
	}
	if list == nil {
		list = []backend.Workspace{}
	}
	return list, nil
}

// Add allowlists a directory. The path is canonicalised (absolute, symlinks
// resolved); the filesystem root and the home directory itself are refused.
func (w *WorkspacesAPI) Add(path string) (backend.Workspace, error) {
	if path == "" {
		return backend.Workspace{}, backend.Errorf(backend.CodeInvalidInput, "choose a folder to add")
	}
	root, err := workspace.Canonical(path)
	if err != nil {
		return backend.Workspace{}, &backend.Error{Code: backend.CodeInvalidInput, Err: err,
			Message: "this folder cannot be a workspace: " + safeReason(err)}
	}
	ws := backend.Workspace{
		ID: backend.NewID(backend.PrefixWorkspace), Name: filepath.Base(root),
		Path: root, DisplayPath: DisplayPath(root), AddedAt: backend.Stamp(nowUTC()),
	}
	db, err := w.core.db()
	if err != nil {
		return backend.Workspace{}, err
	}
	if err := db.AddWorkspace(context.Background(), ws, w.core.By()); err != nil {
		return backend.Workspace{}, err
	}
	w.core.changed("workspaces")
	return ws, nil
}

// Remove takes a workspace off the allowlist. Files are never touched.
func (w *WorkspacesAPI) Remove(id string) error {
	db, err := w.core.db()
	if err != nil {
		return err
	}
	if err := db.RemoveWorkspace(context.Background(), id, w.core.By()); err != nil {
		return err
	}
	w.core.changed("workspaces")
	return nil
}

// PickDirectory opens the native directory dialog (window only).
func (w *WorkspacesAPI) PickDirectory() (string, error) {
	if w.core.PickDirectory == nil {
		return "", backend.Errorf(backend.CodeInvalidInput, "the folder dialog exists only in the desktop window; type the path instead")
	}
	return w.core.PickDirectory()
}

// safeReason keeps the sentinel's text and drops the wrapped path detail.
func safeReason(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
