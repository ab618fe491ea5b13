package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// State is how a path differs from HEAD.
type State string

// States, always relative to HEAD (never to the index alone).
const (
	Modified  State = "modified"  // in HEAD and on disk, content or mode differs
	Deleted   State = "deleted"   // in HEAD, not on disk (or a directory stands in its place)
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
// (honouring .gitignore, .git/info/exclude and the user's excludes file).
// Submodules and nested repositories are other repositories and are not
// listed. At most maxFiles are listed; the rest are counted.
//
// The candidate paths come from the git CLI when a [Runner] is set (it is
// several times faster on large trees: it trusts the index's stat cache) and
// from go-git otherwise or when the CLI fails; either way each candidate is
// then compared with HEAD directly, so a change staged and then reverted, or
// a file only read, is not reported, and both engines give the same report.
func (r *Repo) Status(maxFiles int) (Report, error) {
	if run := currentRunner(); run != nil {
		ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
		defer cancel()
		rep, err := r.StatusCLI(ctx, run, maxFiles)
		if err == nil {
			return rep, nil
		}
		slog.Debug("git status through the git CLI failed; using go-git", "err", err)
	}
	return r.StatusGoGit(maxFiles)
}

// report classifies the candidates against HEAD and the disk.
func (r *Repo) report(base, branch string, heads *headIndex, cands map[string]candidate, maxFiles int) (Report, error) {
	st := Report{Base: base, Branch: branch, Files: []File{}}
	root, err := os.OpenRoot(r.root)
	if err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	defer root.Close()
	trustMode := r.trustExecutableBit()
	paths := make([]string, 0, len(cands))
	for p := range cands {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		c := cands[p]
		head := c.head
		if !c.headKnown {
			if head, err = heads.entry(p); err != nil {
				return st, fmt.Errorf("status %s: %w", p, err)
			}
		}
		if head != nil && head.Mode == filemode.Submodule {
			continue
		}
		f, changed, err := classify(root, p, head, c, trustMode)
		if err != nil {
			return st, fmt.Errorf("status %s: %w", p, err)
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
	return st, nil
}

// classify compares one candidate path with its HEAD entry (nil when HEAD
// has no file there).
func classify(root *os.Root, p string, head *object.TreeEntry, c candidate, trustMode bool) (File, bool, error) {
	f := File{Path: p, Staged: c.staged}
	fi, err := root.Lstat(p)
	// ENOTDIR: a parent of p is now a file, so p cannot exist.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		fi, err = nil, nil
	}
	if err != nil {
		return f, false, err
	}
	// A directory is never a file: its files are candidates of their own.
	// Nor is a FIFO, socket or device: git does not track them, and opening
	// one could block.
	onDisk := fi != nil && (fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0)
	switch {
	case head == nil && !onDisk:
		return f, false, nil
	case head == nil && c.inIndex:
		f.State = Added
	case head == nil:
		f.State = Untracked
	case !onDisk:
		f.State = Deleted
	default:
		hash, mode, err := diskBlob(root, p, fi)
		if err != nil {
			return f, false, err
		}
		if (runtime.GOOS == "windows" || !trustMode) && isPlain(head.Mode) && isPlain(mode) {
			mode = head.Mode // no executable bit to compare
		}
		f.ModeChanged = head.Mode != mode
		if head.Hash == hash && !f.ModeChanged {
			return f, false, nil
		}
		f.State = Modified
	}
	return f, true, nil
}

// diskBlob returns the git blob hash and mode of a file on disk, without
// following a final symlink (git stores the link target).
func diskBlob(root *os.Root, p string, fi fs.FileInfo) (plumbing.Hash, filemode.FileMode, error) {
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := root.Readlink(p)
		if err != nil {
			return plumbing.ZeroHash, 0, err
		}
		return plumbing.ComputeHash(plumbing.BlobObject, []byte(target)), filemode.Symlink, nil
	}
	mode := filemode.Regular
	if fi.Mode().Perm()&0o111 != 0 {
		mode = filemode.Executable
	}
	// Non-blocking: a FIFO swapped in after the lstat must not block the
	// open; it is refused on the open handle.
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return plumbing.ZeroHash, 0, err
	}
	defer f.Close()
	if ofi, err := f.Stat(); err != nil {
		return plumbing.ZeroHash, 0, err
	} else if !os.SameFile(fi, ofi) {
		return plumbing.ZeroHash, 0, fmt.Errorf("%s changed while it was read", p)
	}
	h := plumbing.NewHasher(plumbing.BlobObject, fi.Size())
	if _, err := io.Copy(h, f); err != nil {
		return plumbing.ZeroHash, 0, err
	}
	return h.Sum(), mode, nil
}

func isPlain(m filemode.FileMode) bool { return m == filemode.Regular || m == filemode.Executable }

// trustExecutableBit reads core.fileMode (default true), as git does: on a
// file system without an executable bit the repository sets it false and a
// mode-only difference is no change.
func (r *Repo) trustExecutableBit() bool {
	cfg, err := r.repo.Config()
	if err != nil {
		return true
	}
	v := cfg.Raw.Section("core").Options.Get("filemode")
	return !strings.EqualFold(v, "false") && v != "0" && !strings.EqualFold(v, "no") && !strings.EqualFold(v, "off")
}

// headIndex looks paths up in HEAD's tree, decoding each directory once per
// status: a status of thousands of candidates under one directory must not
// rescan it per path.
type headIndex struct {
	repo *gogit.Repository
	base string                                 // the commit; "" for none
	dirs map[string]map[string]object.TreeEntry // directory path ("" for the root) → entries by name
}

// heads returns the lookup of the files of base, the HEAD commit the report
// declares (named once, so a HEAD moving meanwhile cannot mix two commits).
// Nothing is read until a path is looked up.
func (r *Repo) heads(base string) *headIndex {
	return &headIndex{repo: r.repo, base: base, dirs: map[string]map[string]object.TreeEntry{}}
}

// entry returns HEAD's entry for the file p, or nil when HEAD has no file
// there (no commit, no such path, or a directory). It walks the tree itself:
// go-git's lookup refuses names like "GIT~1" that an untracked file may have.
func (h *headIndex) entry(p string) (*object.TreeEntry, error) {
	if h.base == "" {
		return nil, nil
	}
	dir, name := "", p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		dir, name = p[:i], p[i+1:]
	}
	entries, err := h.dir(dir)
	if err != nil || entries == nil {
		return nil, err
	}
	e, ok := entries[name]
	if !ok || e.Mode == filemode.Dir {
		return nil, nil
	}
	return &e, nil
}

// dir returns the entries of HEAD's directory d, nil when there is none.
func (h *headIndex) dir(d string) (map[string]object.TreeEntry, error) {
	if entries, ok := h.dirs[d]; ok {
		return entries, nil
	}
	var tree *object.Tree
	var err error
	if d == "" {
		if tree, err = h.rootTree(); err != nil {
			return nil, err
		}
	} else {
		parent, base := "", d
		if i := strings.LastIndexByte(d, '/'); i >= 0 {
			parent, base = d[:i], d[i+1:]
		}
		up, err := h.dir(parent)
		if err != nil {
			return nil, err
		}
		e, ok := up[base]
		if !ok || e.Mode != filemode.Dir {
			h.dirs[d] = nil
			return nil, nil
		}
		if tree, err = h.repo.TreeObject(e.Hash); err != nil {
			return nil, fmt.Errorf("read HEAD tree %s: %w", d, err)
		}
	}
	entries := make(map[string]object.TreeEntry, len(tree.Entries))
	for _, e := range tree.Entries {
		entries[e.Name] = e
	}
	h.dirs[d] = entries
	return entries, nil
}

func (h *headIndex) rootTree() (*object.Tree, error) {
	c, err := h.repo.CommitObject(plumbing.NewHash(h.base))
	if err != nil {
		return nil, fmt.Errorf("read HEAD commit: %w", err)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read HEAD tree: %w", err)
	}
	return t, nil
}
