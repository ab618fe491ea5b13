package workspace

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. The app maps them to failure codes; messages wrapped around
// them are workspace-relative and never carry an absolute path.
var (
	// ErrOutsideRoot: the path names, or resolves to, something outside the
	// workspace root (maps to workspace_outside_allowlist).
	ErrOutsideRoot = errors.New("path is outside the workspace")
	// ErrProtected: a write into .git/, .agenthub/ or a secret file
	// (maps to permission_denied).
	ErrProtected = errors.New("path is protected")
	// ErrConflict: a file's current content no longer matches the pre-image
	// the change was computed against; nothing was written.
	ErrConflict = errors.New("file changed since the change was proposed")
	// ErrChanged: Undo found a file that changed after the apply; nothing was
	// restored.
	ErrChanged = errors.New("file changed since it was applied")
	// ErrTooLarge: a read exceeded the size cap.
	ErrTooLarge = errors.New("file exceeds the size limit")
	// ErrNotAllowed: a directory cannot be a workspace (the filesystem root,
	// the home directory or one of its ancestors, not a directory).
	ErrNotAllowed = errors.New("directory cannot be a workspace")
	// ErrCheckpoint: a checkpoint is unknown, belongs to another workspace,
	// was already undone or was garbage collected.
	ErrCheckpoint = errors.New("checkpoint unavailable")
)

// PathError reports which workspace-relative path failed and why. It wraps one
// of the sentinels above, so callers branch with errors.Is.
type PathError struct {
	Op     string // read, stat, write, undo, ...
	Path   string // workspace-relative, as given (already validated or quoted)
	Reason string // a short human explanation, never an absolute path
	Err    error  // a sentinel
}

func (e *PathError) Error() string {
	return fmt.Sprintf("%s %q: %s: %v", e.Op, e.Path, e.Reason, e.Err)
}

func (e *PathError) Unwrap() error { return e.Err }

// FilesError names every file that failed a pre-image (ErrConflict) or
// post-image (ErrChanged) check.
type FilesError struct {
	Paths []string
	Err   error
}

func (e *FilesError) Error() string {
	return fmt.Sprintf("%v: %s", e.Err, strings.Join(e.Paths, ", "))
}

func (e *FilesError) Unwrap() error { return e.Err }

func outside(op, path, reason string) error {
	return &PathError{Op: op, Path: path, Reason: reason, Err: ErrOutsideRoot}
}

func protected(op, path, reason string) error {
	return &PathError{Op: op, Path: path, Reason: reason, Err: ErrProtected}
}
