package worktree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// maxChangeFile bounds one file of a change set, like the file tools' reads.
const maxChangeFile = 64 << 20

// FileChange is one file of a worktree's change set against its base: what
// the base held and what the worktree holds now (commits and uncommitted
// work alike).
type FileChange struct {
	Path         string      `json:"path"`
	Before       []byte      `json:"-"`
	BeforeExists bool        `json:"beforeExists"`
	After        []byte      `json:"-"`
	AfterExists  bool        `json:"afterExists"`
	Mode         fs.FileMode `json:"mode,omitempty"` // permission bits of the worktree file
	// Skipped says why a path is left out of the merge (a symlink, a
	// special file, too big); its contents are then unset.
	Skipped string `json:"skipped,omitempty"`
}

// Changes returns the change set of wt against its base, in path order:
// every tracked path whose content differs from the base, and every
// untracked path git does not ignore.
func (m *Manager) Changes(ctx context.Context, wt Worktree) ([]FileChange, error) {
	diff, err := m.git(ctx, wt.Path, "-c", "core.quotePath=false", "diff", "--name-only", "-z", "--no-renames",
		"--ignore-submodules=all", wt.Base, "--")
	if err != nil {
		return nil, fmt.Errorf("worktree %s changes: %w", wt.ID, err)
	}
	untracked, err := m.git(ctx, wt.Path, "-c", "core.quotePath=false", "ls-files", "--others",
		"--exclude-standard", "-z")
	if err != nil {
		return nil, fmt.Errorf("worktree %s changes: %w", wt.ID, err)
	}
	paths := append(split0(diff), split0(untracked)...)
	slices.Sort(paths)
	paths = slices.Compact(paths)
	if len(paths) == 0 {
		return nil, nil
	}
	blobs, err := m.baseBlobs(ctx, wt, paths)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(wt.Path)
	if err != nil {
		return nil, fmt.Errorf("worktree %s changes: %w", wt.ID, err)
	}
	defer root.Close()
	out := make([]FileChange, 0, len(paths))
	for _, p := range paths {
		fc := FileChange{Path: p}
		if b, ok := blobs[p]; ok {
			if b.mode != "100644" && b.mode != "100755" {
				fc.Skipped = "not a regular file at the base"
			} else if fc.Before, err = m.git(ctx, wt.Path, "cat-file", "blob", b.hash); err != nil {
				return nil, fmt.Errorf("worktree %s changes: %w", wt.ID, err)
			}
			fc.BeforeExists = true
		}
		if fc.Skipped == "" {
			if err := readAfter(root, &fc); err != nil {
				return nil, fmt.Errorf("worktree %s changes: %w", wt.ID, err)
			}
		}
		if fc.Skipped != "" {
			fc.Before, fc.After = nil, nil
		}
		out = append(out, fc)
	}
	return out, nil
}

func readAfter(root *os.Root, fc *FileChange) error {
	fi, err := root.Lstat(fc.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		fc.Skipped = "not a regular file in the worktree"
		return nil
	case fi.Size() > maxChangeFile:
		fc.Skipped = fmt.Sprintf("larger than %d MiB", maxChangeFile>>20)
		return nil
	}
	f, err := root.Open(fc.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	if fc.After, err = io.ReadAll(io.LimitReader(f, maxChangeFile+1)); err != nil {
		return err
	}
	fc.AfterExists, fc.Mode = true, fi.Mode().Perm()
	return nil
}

type blobRef struct{ mode, hash string }

// baseBlobs lists the base's entries for paths with one ls-tree.
func (m *Manager) baseBlobs(ctx context.Context, wt Worktree, paths []string) (map[string]blobRef, error) {
	args := append([]string{"-c", "core.quotePath=false", "ls-tree", "-z", "--full-tree", wt.Base, "--"}, paths...)
	out, err := m.git(ctx, wt.Path, args...)
	if err != nil {
		return nil, fmt.Errorf("worktree %s base: %w", wt.ID, err)
	}
	blobs := map[string]blobRef{}
	for _, rec := range split0(out) {
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if ok && len(f) == 3 && f[1] == "blob" {
			blobs[p] = blobRef{mode: f[0], hash: f[2]}
		}
	}
	return blobs, nil
}

func split0(b []byte) []string {
	var out []string
	for _, s := range strings.Split(string(b), "\x00") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
