// Package worktree gives a run its own git worktree: a new branch from the
// checkout's HEAD (or a chosen base) checked out in a directory under the
// data directory, never inside the user's checkout. It lists what a worktree
// holds that exists nowhere else (uncommitted changes, commits on no other
// branch), refuses to remove one that holds such work unless the caller
// confirms that exact listing, computes its change set against its base for
// the merge back, and pushes its branch.
//
// Invariants: the user's repository is changed only through git's own
// commands (`git worktree add/remove/prune`, `git branch`), run through the
// [git.Runner] the process-owning layer passes in; this package starts no
// process and writes nothing under any .git itself. Branches are named
// agenthub/<id>: no hidden refs are created.
//
// It imports only the standard library and workspace packages; it must not
// import backend/** or app.
package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"agenthub/workspace/git"
)

// BranchPrefix starts every run branch.
const BranchPrefix = "agenthub/"

// ErrInsideCheckout: the worktree directory would be inside the checkout.
var ErrInsideCheckout = errors.New("the worktree directory is inside the checkout")

// ErrUnsaved: the worktree holds work that exists nowhere else.
var ErrUnsaved = errors.New("the worktree holds unsaved work")

// ErrBadID: an id that cannot name a directory and a branch.
var ErrBadID = errors.New("not a valid worktree id")

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Manager creates and removes worktrees under Dir.
type Manager struct {
	Dir string     // absolute; the data directory's worktrees folder
	Run git.Runner // runs the git binary
	Env []string   // the environment git runs with (git.CLIEnv of the process's)
}

// Worktree is one run's worktree.
type Worktree struct {
	ID     string `json:"id"`     // the run id: the directory name and the branch suffix
	Path   string `json:"-"`      // absolute; never shown
	Branch string `json:"branch"` // agenthub/<id>
	Base   string `json:"base"`   // the commit the branch started from
}

// Branch returns the branch of id.
func Branch(id string) string { return BranchPrefix + id }

func (m *Manager) git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	if m.Run == nil {
		return nil, errors.New("no git runner configured")
	}
	out, err := m.Run(ctx, dir, m.Env, args)
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}

// Path is where the worktree of id lives.
func (m *Manager) Path(id string) string { return filepath.Join(m.Dir, id) }

// Create adds a worktree for id on a new branch agenthub/<id> from base
// ("" = the checkout's HEAD). It is one `git worktree add`, after one
// rev-parse of the base.
func (m *Manager) Create(ctx context.Context, checkout, id, base string) (Worktree, error) {
	if !idPattern.MatchString(id) {
		return Worktree{}, fmt.Errorf("create worktree %q: %w", id, ErrBadID)
	}
	if inside(checkout, m.Dir) {
		return Worktree{}, fmt.Errorf("create worktree: %w", ErrInsideCheckout)
	}
	if base == "" {
		base = "HEAD"
	}
	if strings.HasPrefix(base, "-") {
		return Worktree{}, fmt.Errorf("create worktree: base %q is not a revision", base)
	}
	out, err := m.git(ctx, checkout, "rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}")
	if err != nil {
		return Worktree{}, fmt.Errorf("create worktree: resolve base %q: %w", base, err)
	}
	hash := strings.TrimSpace(string(out))
	if err := os.MkdirAll(m.Dir, 0o700); err != nil {
		return Worktree{}, fmt.Errorf("create worktree: %w", err)
	}
	wt := Worktree{ID: id, Path: m.Path(id), Branch: Branch(id), Base: hash}
	if _, err := m.git(ctx, checkout, "worktree", "add", "--quiet", "-b", wt.Branch, wt.Path, hash); err != nil {
		return Worktree{}, fmt.Errorf("create worktree: %w", err)
	}
	return wt, nil
}

// inside reports whether dir is checkout or below it, after resolving
// symlinks of both where they exist.
func inside(checkout, dir string) bool {
	c, d := realish(checkout), realish(dir)
	rel, err := filepath.Rel(c, d)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func realish(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	// A directory not yet created: resolve its nearest existing parent.
	if parent := filepath.Dir(p); parent != p {
		return filepath.Join(realish(parent), filepath.Base(p))
	}
	return p
}

// Commit is one commit of a run branch.
type Commit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
}

// State is what a worktree holds that exists nowhere else.
type State struct {
	Missing     bool     `json:"missing,omitempty"`     // the directory is gone
	Uncommitted []string `json:"uncommitted,omitempty"` // paths changed, staged or untracked
	Unmerged    []Commit `json:"unmerged,omitempty"`    // commits on no other branch, remote or tag
	Head        string   `json:"head,omitempty"`        // the branch tip
}

// Clean reports whether removing the worktree and its branch loses nothing.
func (s State) Clean() bool { return len(s.Uncommitted) == 0 && len(s.Unmerged) == 0 }

// Describe lists the unsaved work for a confirmation.
func (s State) Describe() string {
	var parts []string
	if len(s.Uncommitted) > 0 {
		parts = append(parts, fmt.Sprintf("uncommitted: %s", strings.Join(s.Uncommitted, ", ")))
	}
	if len(s.Unmerged) > 0 {
		cs := make([]string, len(s.Unmerged))
		for i, c := range s.Unmerged {
			cs[i] = short(c.Hash) + " " + c.Subject
		}
		parts = append(parts, fmt.Sprintf("commits on no other branch: %s", strings.Join(cs, "; ")))
	}
	return strings.Join(parts, "; ")
}

func short(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}

// State reads what wt holds that exists nowhere else.
func (m *Manager) State(ctx context.Context, checkout string, wt Worktree) (State, error) {
	var st State
	if fi, err := os.Stat(wt.Path); err != nil || !fi.IsDir() {
		st.Missing = true
	} else {
		out, err := m.git(ctx, wt.Path, "-c", "core.quotePath=false", "status", "--porcelain=v1", "-z",
			"--untracked-files=all", "--ignore-submodules=all")
		if err != nil {
			return st, fmt.Errorf("worktree %s state: %w", wt.ID, err)
		}
		st.Uncommitted = porcelainPaths(out)
	}
	ref := "refs/heads/" + wt.Branch
	head, err := m.git(ctx, checkout, "rev-parse", "--verify", "--quiet", ref)
	if err != nil {
		return st, nil // no branch: no commits only it holds
	}
	st.Head = strings.TrimSpace(string(head))
	// --exclude patterns for --branches are written without refs/heads/.
	out, err := m.git(ctx, checkout, "log", "--format=%H%x09%s", ref, "--not", "--exclude="+wt.Branch, "--branches",
		"--remotes", "--tags", "--")
	if err != nil {
		return st, fmt.Errorf("worktree %s state: %w", wt.ID, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if h, s, ok := strings.Cut(line, "\t"); ok {
			st.Unmerged = append(st.Unmerged, Commit{Hash: h, Subject: s})
		}
	}
	return st, nil
}

// porcelainPaths parses `git status --porcelain=v1 -z`: "XY path\0", with
// a rename's source as an extra entry.
func porcelainPaths(out []byte) []string {
	var paths []string
	recs := bytes.Split(out, []byte{0})
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		if len(r) < 4 {
			continue
		}
		paths = append(paths, string(r[3:]))
		if r[0] == 'R' || r[0] == 'C' {
			i++ // the source path follows
		}
	}
	slices.Sort(paths)
	return paths
}

// UnsavedError lists the work a removal would lose.
type UnsavedError struct{ State State }

func (e *UnsavedError) Error() string {
	return "the worktree holds work that exists nowhere else (" + e.State.Describe() + ")"
}

func (e *UnsavedError) Unwrap() error { return ErrUnsaved }

// covers reports whether a confirmed listing names everything in now: a
// confirmation given for an older listing does not cover work added since.
func covers(confirmed, now State) bool {
	for _, p := range now.Uncommitted {
		if !slices.Contains(confirmed.Uncommitted, p) {
			return false
		}
	}
	for _, c := range now.Unmerged {
		if !slices.ContainsFunc(confirmed.Unmerged, func(x Commit) bool { return x.Hash == c.Hash }) {
			return false
		}
	}
	return true
}

// Remove deletes the worktree directory and, unless keepBranch, its branch.
// When the worktree holds work that exists nowhere else (uncommitted changes;
// and, when the branch goes too, commits on no other branch), it refuses with
// an [*UnsavedError] listing that work unless confirmed names all of it.
func (m *Manager) Remove(ctx context.Context, checkout string, wt Worktree, keepBranch bool, confirmed State) error {
	st, err := m.State(ctx, checkout, wt)
	if err != nil {
		return err
	}
	at := st
	if keepBranch {
		at.Unmerged = nil // the branch keeps its commits
	}
	if !at.Clean() && !covers(confirmed, at) {
		return &UnsavedError{State: at}
	}
	if !st.Missing {
		if _, err := m.git(ctx, checkout, "worktree", "remove", "--force", wt.Path); err != nil {
			return fmt.Errorf("remove worktree %s: %w", wt.ID, err)
		}
	} else if _, err := m.git(ctx, checkout, "worktree", "prune"); err != nil {
		return fmt.Errorf("remove worktree %s: %w", wt.ID, err)
	}
	if keepBranch || st.Head == "" {
		return nil
	}
	if _, err := m.git(ctx, checkout, "branch", "-D", "--", wt.Branch); err != nil {
		return fmt.Errorf("remove branch of worktree %s: %w", wt.ID, err)
	}
	return nil
}

// Entry is one worktree git knows of in a checkout.
type Entry struct {
	Path     string `json:"-"`
	Branch   string `json:"branch,omitempty"`
	Head     string `json:"head,omitempty"`
	Prunable bool   `json:"prunable,omitempty"` // its directory is gone
}

// List returns the worktrees git records for checkout whose branch is a
// run branch.
func (m *Manager) List(ctx context.Context, checkout string) ([]Entry, error) {
	out, err := m.git(ctx, checkout, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	var all []Entry
	var cur *Entry
	for _, f := range strings.Split(string(out), "\x00") {
		k, v, _ := strings.Cut(f, " ")
		switch k {
		case "worktree":
			all = append(all, Entry{Path: v})
			cur = &all[len(all)-1]
		case "HEAD":
			if cur != nil {
				cur.Head = v
			}
		case "branch":
			if cur != nil {
				cur.Branch = strings.TrimPrefix(v, "refs/heads/")
			}
		case "prunable":
			if cur != nil {
				cur.Prunable = true
			}
		}
	}
	var runs []Entry
	for _, e := range all {
		if strings.HasPrefix(e.Branch, BranchPrefix) {
			runs = append(runs, e)
		}
	}
	return runs, nil
}
