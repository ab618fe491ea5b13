package patch

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"agenthub/diffview"
	"agenthub/workspace"
)

// Proposal is one whole-file change computed from the workspace as it is now.
type Proposal struct {
	Path   string // workspace-relative
	Old    []byte
	Exists bool
	Mode   string // diffview mode of the file, kept by the change
	Next   []byte
	Delete bool
}

// Preimage is the hash of the content the change was computed on.
func (p Proposal) Preimage() string {
	if !p.Exists {
		return workspace.Absent
	}
	return workspace.Hash(p.Old)
}

// Postimage is the hash of the content the change writes.
func (p Proposal) Postimage() string {
	if p.Delete {
		return workspace.Absent
	}
	return workspace.Hash(p.Next)
}

// Operation is create, modify or delete.
func (p Proposal) Operation() string {
	switch {
	case p.Delete:
		return "delete"
	case !p.Exists:
		return "create"
	}
	return "modify"
}

// Diff is the diff the reviewer is shown; computing it the same way at
// apply time keeps hunk indexes in agreement.
func (p Proposal) Diff() (diffview.FileDiff, error) {
	var oldSide, newSide diffview.Side
	if p.Exists {
		oldSide = diffview.Side{Path: p.Path, Mode: p.Mode, Content: p.Old}
	}
	if !p.Delete {
		newSide = diffview.Side{Path: p.Path, Mode: p.Mode, Content: p.Next}
	}
	return diffview.Diff(oldSide, newSide, diffview.Options{})
}

// Next computes a file's new content from its current content (exists is
// false for a missing file); del asks for a deletion. Its error is written
// for the agent.
type Next func(cur []byte, exists bool) (next []byte, del bool, err error)

// Prepare computes the proposal for a resolved, workspace-relative path. Its
// errors are written for the agent; workspace errors are returned as they
// are, for the caller to phrase.
func Prepare(w *workspace.FS, p string, next Next) (Proposal, error) {
	switch {
	case p == ".":
		return Proposal{}, errors.New("the workspace root is not a file; name a file")
	case strings.ContainsAny(p, "\x00\t\n\r"):
		return Proposal{}, fmt.Errorf("%q: control characters are not allowed in file names", p)
	}
	if cl := workspace.Classify(p); cl == workspace.ClassGit || cl == workspace.ClassPolicy {
		return Proposal{}, fmt.Errorf("%s is inside a protected %s directory; agents may not change it", p, cl)
	}
	cur, exists, mode, err := ReadTarget(w, p)
	if err != nil {
		return Proposal{}, err
	}
	n, del, err := next(cur, exists)
	if err != nil {
		return Proposal{}, err
	}
	if !del && exists && bytes.Equal(n, cur) {
		return Proposal{}, fmt.Errorf("nothing to change: %s already has this content", p)
	}
	return Proposal{Path: p, Old: cur, Exists: exists, Mode: mode, Next: n, Delete: del}, nil
}

// ReadTarget reads a write target the way workspace.Apply will: no symlink
// is followed, neither the file nor a parent directory. A missing file is
// not an error (exists is false).
func ReadTarget(w *workspace.FS, p string) (data []byte, exists bool, mode string, err error) {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		fi, err := w.Lstat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, false, diffview.ModeRegular, nil
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
		return nil, false, "", fmt.Errorf("%s is a symbolic link; writes never follow symlinks, change its target instead", p)
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
