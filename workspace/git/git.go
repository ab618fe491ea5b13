// Package git reads a workspace's git repository: an honest status against
// HEAD ([Status]) and the HEAD content of a path ([HeadBlob]), the "before"
// of every diff.
//
// Invariants: everything but [Commit] only reads: it never moves HEAD, never
// writes the index, refs, stash or config. [Commit] is the one writer, and
// it runs only for an approved git_commit call. The package never starts a
// process: the git CLI, which [Repo.Status] prefers for speed, runs through a
// [Runner] the process-owning layer installs with [SetRunner], and go-git
// answers when there is none or it fails. It imports only the standard
// library and go-git; it must not import backend/** or app.
package git

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrNotRepository: the workspace root is not the top of a git work tree.
var ErrNotRepository = errors.New("not a git repository")

// ErrBadPath: a path is not a clean workspace-relative path.
var ErrBadPath = errors.New("not a clean workspace-relative path")

// MaxBlob caps [HeadBlob].
const MaxBlob = 64 << 20

// Repo is an open repository whose work tree is a workspace root.
type Repo struct {
	root string
	repo *gogit.Repository
}

// Open opens the repository at root. root must be the top of the work tree
// (its .git is not searched for in parent directories: a workspace inside
// someone else's repository is not that repository).
func Open(root string) (*Repo, error) {
	r, err := gogit.PlainOpenWithOptions(root, &gogit.PlainOpenOptions{DetectDotGit: false, EnableDotGitCommonDir: true})
	if errors.Is(err, gogit.ErrRepositoryNotExists) {
		return nil, ErrNotRepository
	}
	if err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	}
	if r, err = gogit.Open(r.Storer, nonBlockingFS{wt.Filesystem}); err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	}
	return &Repo{root: root, repo: r}, nil
}

// Base returns the HEAD commit hash and the short branch name ("" when HEAD
// is detached). A repository without commits has base "".
func (r *Repo) Base() (hash, branch string, err error) {
	ref, err := r.repo.Head()
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		// Unborn branch: report its name from the symbolic HEAD.
		if head, herr := r.repo.Reference(plumbing.HEAD, false); herr == nil && head.Type() == plumbing.SymbolicReference {
			return "", head.Target().Short(), nil
		}
		return "", "", nil
	case err != nil:
		return "", "", fmt.Errorf("read HEAD: %w", err)
	}
	if ref.Name().IsBranch() {
		branch = ref.Name().Short()
	}
	return ref.Hash().String(), branch, nil
}

// headTree returns HEAD's tree, or nil for a repository without commits.
func (r *Repo) headTree() (*object.Tree, error) {
	ref, err := r.repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read HEAD: %w", err)
	}
	c, err := r.repo.CommitObject(ref.Hash())
	if err != nil {
		return nil, fmt.Errorf("read HEAD commit: %w", err)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read HEAD tree: %w", err)
	}
	return t, nil
}

// HeadBlob returns the content of path in HEAD. ok is false when HEAD does not
// have the path (or there is no commit yet). A symlink's content is its
// target, as git stores it.
func (r *Repo) HeadBlob(p string) (data []byte, ok bool, err error) {
	if !cleanPath(p) {
		return nil, false, fmt.Errorf("head blob %q: %w", p, ErrBadPath)
	}
	t, err := r.headTree()
	if err != nil || t == nil {
		return nil, false, err
	}
	f, err := t.File(p)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("head blob %s: %w", p, err)
	}
	if f.Size > MaxBlob {
		return nil, false, fmt.Errorf("head blob %s: %d bytes, limit %d", p, f.Size, MaxBlob)
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, false, fmt.Errorf("head blob %s: %w", p, err)
	}
	defer rd.Close()
	data, err = io.ReadAll(io.LimitReader(rd, MaxBlob))
	if err != nil {
		return nil, false, fmt.Errorf("head blob %s: %w", p, err)
	}
	return data, true, nil
}

// HeadBlob opens the repository at root and returns path's HEAD content.
func HeadBlob(root, p string) ([]byte, bool, error) {
	r, err := Open(root)
	if err != nil {
		return nil, false, err
	}
	return r.HeadBlob(p)
}

func cleanPath(p string) bool {
	return p != "" && p != "." && !strings.HasPrefix(p, "/") && !strings.Contains(p, `\`) &&
		path.Clean(p) == p && p != ".." && !strings.HasPrefix(p, "../") && strings.IndexByte(p, 0) < 0
}
