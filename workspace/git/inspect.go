package git

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Inspect returns the git blob hash a commit of the work-tree file p would
// record, or why AgentHub does not commit it: a file with more than one hard
// link (it may alias a file outside the workspace, whose content would then
// sit in the repository), a symbolic link leading outside the workspace, or
// anything that is not a regular file or a symlink. These are the files the
// workspace's file tools refuse. A missing file is an error wrapping
// fs.ErrNotExist.
func (r *Repo) Inspect(p string) (blob, refusal string, err error) {
	if !cleanPath(p) {
		return "", "", fmt.Errorf("inspect %q: %w", p, ErrBadPath)
	}
	root, err := os.OpenRoot(r.root)
	if err != nil {
		return "", "", fmt.Errorf("inspect %s: %w", p, err)
	}
	defer root.Close()
	fi, err := root.Lstat(p)
	if err != nil {
		return "", "", fmt.Errorf("inspect %s: %w", p, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if _, err := root.Stat(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", "a symbolic link leading outside the workspace", nil
		}
	case !fi.Mode().IsRegular():
		return "", "not a regular file", nil
	default:
		if n := linkCount(fi); n > 1 {
			return "", fmt.Sprintf("a file with %d hard links, which may alias a file outside the workspace", n), nil
		}
	}
	h, _, err := diskBlob(root, p, fi)
	if err != nil {
		return "", "", fmt.Errorf("inspect %s: %w", p, err)
	}
	return h.String(), "", nil
}
