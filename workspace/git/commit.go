package git

import (
	"errors"
	"fmt"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrNothingToCommit: none of the named paths differs from HEAD.
var ErrNothingToCommit = errors.New("nothing to commit")

// ErrOtherStaged: the index holds staged changes the commit does not name.
var ErrOtherStaged = errors.New("other changes are staged")

// ErrStale: HEAD moved since the commit was proposed.
var ErrStale = errors.New("HEAD moved since the commit was proposed")

// ErrChanged: a file's content differs from the content the commit was
// approved with; nothing was committed and the index is as it was.
var ErrChanged = errors.New("a file changed since the commit was proposed")

// CommitRequest is one approved commit.
type CommitRequest struct {
	Message string
	Paths   []string // workspace-relative; each must be changed against HEAD
	Base    string   // the HEAD the reviewer saw ("" for a repository without commits)
	// Blobs, when set, are the blob hashes the reviewer approved, by path
	// (deleted paths have none): a staged file whose content differs fails
	// the commit with ErrChanged, so it records exactly what was shown.
	Blobs map[string]string
	When  time.Time
}

// fallbackAuthor signs commits when the repository and the user's global
// git configuration name nobody.
var fallbackAuthor = object.Signature{Name: "AgentHub", Email: "agenthub@localhost"}

// Commit stages exactly req.Paths (a deleted path is removed from the index)
// and records them as a commit on the current branch. A commit records the
// whole index, so when the user has other changes staged it refuses
// (ErrOtherStaged) rather than commit work nobody reviewed.
func (r *Repo) Commit(req CommitRequest) (string, error) {
	base, _, err := r.Base()
	if err != nil {
		return "", err
	}
	if base != req.Base {
		return "", ErrStale
	}
	if len(req.Paths) == 0 {
		return "", ErrNothingToCommit
	}
	wt, err := r.repo.Worktree()
	if err != nil {
		return "", fmt.Errorf("open work tree: %w", err)
	}
	before, err := r.repo.Storer.Index()
	if err != nil {
		return "", fmt.Errorf("read the index: %w", err)
	}
	err = r.stage(wt, req.Paths)
	if err == nil {
		err = r.verifyStaged(req.Blobs)
	}
	if err != nil {
		if rerr := r.repo.Storer.SetIndex(before); rerr != nil {
			return "", fmt.Errorf("%w; restoring the index failed: %w", err, rerr)
		}
		return "", err
	}
	sig := r.author()
	sig.When = req.When
	hash, err := wt.Commit(req.Message, &gogit.CommitOptions{Author: &sig, Committer: &sig,
		AllowEmptyCommits: false})
	if errors.Is(err, gogit.ErrEmptyCommit) {
		return "", ErrNothingToCommit
	}
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	return hash.String(), nil
}

// verifyStaged compares the staged blobs with the approved ones.
func (r *Repo) verifyStaged(blobs map[string]string) error {
	if len(blobs) == 0 {
		return nil
	}
	idx, err := r.repo.Storer.Index()
	if err != nil {
		return fmt.Errorf("read the index: %w", err)
	}
	for p, want := range blobs {
		e, err := idx.Entry(p)
		if err != nil || e.Hash.String() != want {
			return fmt.Errorf("%s: %w", p, ErrChanged)
		}
	}
	return nil
}

func (r *Repo) stage(wt *gogit.Worktree, paths []string) error {
	st, err := r.Status(DefaultMaxFiles)
	if err != nil {
		return err
	}
	state := map[string]State{}
	named := map[string]bool{}
	for _, p := range paths {
		named[p] = true
	}
	for _, f := range st.Files {
		state[f.Path] = f.State
		if f.Staged && !named[f.Path] {
			return fmt.Errorf("%s is staged but not part of this commit: %w", f.Path, ErrOtherStaged)
		}
	}
	for _, p := range paths {
		if !cleanPath(p) {
			return fmt.Errorf("stage %q: %w", p, ErrBadPath)
		}
		switch state[p] {
		case "":
			return fmt.Errorf("stage %s: %w: it does not differ from HEAD", p, ErrNothingToCommit)
		case Deleted:
			if _, err := wt.Remove(p); err != nil {
				return fmt.Errorf("stage the removal of %s: %w", p, err)
			}
		default:
			if _, err := wt.Add(p); err != nil {
				return fmt.Errorf("stage %s: %w", p, err)
			}
		}
	}
	return nil
}

// author is the user's git identity: the repository's config, then the
// global one, then AgentHub's fallback.
func (r *Repo) author() object.Signature {
	for _, scope := range []config.Scope{config.LocalScope, config.GlobalScope} {
		cfg, err := r.repo.ConfigScoped(scope)
		if err == nil && cfg.User.Name != "" && cfg.User.Email != "" {
			return object.Signature{Name: cfg.User.Name, Email: cfg.User.Email}
		}
	}
	return fallbackAuthor
}
