package git

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Landed is what a repository shows of a commit that was intended: it was
// made, it was not, or HEAD holds something else.
type Landed struct {
	State string // LandedYes, LandedNo or LandedOther
	Head  string // HEAD's hash now ("" without commits)
}

// Landed states.
const (
	LandedYes   = "applied"     // HEAD is one commit on Base recording exactly the files
	LandedNo    = "not_applied" // HEAD is still Base
	LandedOther = "conflict"    // HEAD moved elsewhere: only the user can say what happened
)

// Landed compares HEAD with a commit intended on base that records blobs
// (path → blob hash; an empty hash is a deleted path), for the recovery of
// a commit a crash cut (issue 15): the intent is recorded before the
// commit, so either HEAD is still base, or it is the commit (its parent is
// base and its tree holds exactly those blobs at those paths), or
// something else moved it.
func (r *Repo) Landed(base string, blobs map[string]string) (Landed, error) {
	head, _, err := r.Base()
	if err != nil {
		return Landed{}, err
	}
	out := Landed{Head: head}
	if head == base {
		out.State = LandedNo
		return out, nil
	}
	out.State = LandedOther
	c, err := r.repo.CommitObject(plumbing.NewHash(head))
	if err != nil {
		return out, fmt.Errorf("read HEAD's commit: %w", err)
	}
	parent := ""
	if len(c.ParentHashes) > 0 {
		parent = c.ParentHashes[0].String()
	}
	if parent != base || len(c.ParentHashes) > 1 {
		return out, nil
	}
	tree, err := c.Tree()
	if err != nil {
		return out, fmt.Errorf("read HEAD's tree: %w", err)
	}
	for p, want := range blobs {
		f, err := tree.File(p)
		switch {
		case errors.Is(err, object.ErrFileNotFound):
			if want != "" {
				return out, nil
			}
		case err != nil:
			return out, fmt.Errorf("read %s in HEAD: %w", p, err)
		case f.Hash.String() != want:
			return out, nil
		}
	}
	out.State = LandedYes
	return out, nil
}
