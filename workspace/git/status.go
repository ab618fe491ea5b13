package git

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sort"

	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// State is how a path differs from HEAD.
type State string

// States, always relative to HEAD (never to the index alone).
const (
	Modified  State = "modified"  // in HEAD and on disk, content or mode differs
	Deleted   State = "deleted"   // in HEAD, not on disk
	Added     State = "added"     // not in HEAD, on disk and in the index
	Untracked State = "untracked" // not in HEAD, on disk, not in the index, not ignored
)

// File is one changed path.
type File struct {
	Path        string `json:"path"`
	State       State  `json:"state"`
	ModeChanged bool   `json:"mode_changed,omitempty"` // e.g. the executable bit
	Staged      bool   `json:"staged,omitempty"`       // the index differs from HEAD here
}

// DefaultMaxFiles bounds [Status].Files.
const DefaultMaxFiles = 20000

// Report is an honest account of the work tree against its base commit.
type Report struct {
	Base    string `json:"base"`             // HEAD commit hash; "" when the repository has no commit
	Branch  string `json:"branch,omitempty"` // "" when HEAD is detached
	Files   []File `json:"files"`            // sorted by path
	Omitted int    `json:"omitted,omitempty"`
	// OmittedReason says why Omitted files are not listed.
	OmittedReason string `json:"omitted_reason,omitempty"`
}

// Status opens the repository at root and reports its status (at most
// DefaultMaxFiles files listed).
func Status(root string) (Report, error) {
	r, err := Open(root)
	if err != nil {
		return Report{}, err
	}
	return r.Status(DefaultMaxFiles)
}

// Status lists every path whose content on disk differs from HEAD: tracked
// files modified or deleted, files added to the index, and untracked files
// (honouring .gitignore, .git/info/exclude and the global excludes file).
// go-git's status is only the candidate set: each candidate is compared with
// HEAD directly, so a change staged and then reverted, or a file only read,
// is not reported. At most maxFiles are listed; the rest are counted.
func (r *Repo) Status(maxFiles int) (Report, error) {
	var st Report
	var err error
	if st.Base, st.Branch, err = r.Base(); err != nil {
		return st, err
	}
	wt, err := r.repo.Worktree()
	if err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	if global, err := gitignore.LoadGlobalPatterns(osfs.New("/")); err == nil {
		wt.Excludes = append(wt.Excludes, global...)
	}
	raw, err := wt.StatusWithOptions(gogit.StatusOptions{Strategy: gogit.Empty})
	if err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	tree, err := r.headTree()
	if err != nil {
		return st, err
	}
	root, err := os.OpenRoot(r.root)
	if err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	defer root.Close()
	paths := make([]string, 0, len(raw))
	for p := range raw {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		f, changed, err := classify(root, tree, p, raw[p])
		if err != nil {
			return st, err
		}
		if !changed {
			continue
		}
		if len(st.Files) >= maxFiles {
			st.Omitted++
			continue
		}
		st.Files = append(st.Files, f)
	}
	if st.Omitted > 0 {
		st.OmittedReason = fmt.Sprintf("more than %d changed files", maxFiles)
	}
	if st.Files == nil {
		st.Files = []File{}
	}
	return st, nil
}

// classify compares one candidate path with HEAD.
func classify(root *os.Root, tree *object.Tree, p string, raw *gogit.FileStatus) (File, bool, error) {
	f := File{Path: p}
	inIndex := raw.Staging != gogit.Untracked
	f.Staged = raw.Staging != gogit.Unmodified && raw.Staging != gogit.Untracked
	var head *object.File
	if tree != nil {
		hf, err := tree.File(p)
		switch {
		case err == nil:
			head = hf
		case !errors.Is(err, object.ErrFileNotFound) && !errors.Is(err, object.ErrDirectoryNotFound) && !errors.Is(err, object.ErrEntryNotFound):
			return f, false, fmt.Errorf("status %s: %w", p, err)
		}
	}
	hash, mode, exists, err := diskBlob(root, p)
	if err != nil {
		return f, false, fmt.Errorf("status %s: %w", p, err)
	}
	switch {
	case head == nil && !exists:
		return f, false, nil
	case head == nil && inIndex:
		f.State = Added
	case head == nil:
		f.State = Untracked
	case !exists:
		f.State = Deleted
	default:
		if runtime.GOOS == "windows" && isPlain(head.Mode) && isPlain(mode) {
			mode = head.Mode // no executable bit to compare on Windows
		}
		f.ModeChanged = head.Mode != mode
		if head.Hash == hash && !f.ModeChanged {
			return f, false, nil
		}
		f.State = Modified
	}
	return f, true, nil
}

// diskBlob returns the git blob hash and mode of a path on disk, without
// following a final symlink (git stores the link target).
func diskBlob(root *os.Root, p string) (plumbing.Hash, filemode.FileMode, bool, error) {
	fi, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return plumbing.ZeroHash, 0, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, 0, false, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(p)
		if err != nil {
			return plumbing.ZeroHash, 0, false, err
		}
		return plumbing.ComputeHash(plumbing.BlobObject, []byte(target)), filemode.Symlink, true, nil
	case fi.IsDir():
		// A submodule or a directory replacing a file: report it as a change.
		return plumbing.ZeroHash, filemode.Dir, true, nil
	}
	mode := filemode.Regular
	if fi.Mode().Perm()&0o111 != 0 {
		mode = filemode.Executable
	}
	f, err := root.Open(p)
	if err != nil {
		return plumbing.ZeroHash, 0, false, err
	}
	defer f.Close()
	h := plumbing.NewHasher(plumbing.BlobObject, fi.Size())
	if _, err := io.Copy(h, f); err != nil {
		return plumbing.ZeroHash, 0, false, err
	}
	return h.Sum(), mode, true, nil
}

func isPlain(m filemode.FileMode) bool { return m == filemode.Regular || m == filemode.Executable }
