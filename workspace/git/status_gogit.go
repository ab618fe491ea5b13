package git

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
)

// StatusGoGit is [Repo.Status] without the git CLI: go-git's status gives
// the candidate paths. It is the fallback, and the reference the CLI engine
// is tested against.
func (r *Repo) StatusGoGit(maxFiles int) (Report, error) {
	base, branch, err := r.Base()
	if err != nil {
		return Report{}, err
	}
	heads := r.heads(base)
	cands, err := r.goGitCandidates(heads)
	if err != nil {
		return Report{}, err
	}
	return r.report(base, branch, heads, cands, maxFiles)
}

// goGitCandidates takes the paths from go-git's status but the index facts
// from the index itself: go-git's status codes lose some (a path removed
// from the index but still on disk reads as plain untracked, an
// intent-to-add as staged), and both engines must agree with git.
func (r *Repo) goGitCandidates(heads *headIndex) (map[string]candidate, error) {
	// One index read and one listing per directory for the whole status:
	// go-git's status reads the index twice (HEAD against it, it against
	// the disk) and lists every directory twice (the comparison, then the
	// .gitignore files), and the staged flags below read the index again.
	repo := *r.repo
	st := &onceIndex{Storer: r.repo.Storer}
	repo.Storer = st
	wt, err := repo.Worktree()
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	wt.Filesystem = &dirCache{Filesystem: wt.Filesystem, dirs: map[string][]os.FileInfo{}}
	wt.Excludes = append(wt.Excludes, userExcludes()...)
	wt.Excludes = append(wt.Excludes, r.infoExcludes()...)
	raw, err := wt.StatusWithOptions(gogit.StatusOptions{Strategy: gogit.Empty})
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	idx, err := st.Index()
	if err != nil {
		return nil, fmt.Errorf("read the index: %w", err)
	}
	facts := indexFacts(idx)
	nested := nestedRepos{root: r.root, known: map[string]bool{}}
	out := make(map[string]candidate, len(raw))
	for p := range raw {
		e, inIndex := facts[p]
		if inIndex && e.mode == filemode.Submodule {
			continue // a submodule being added: another repository (see Status)
		}
		if !inIndex && nested.contains(p) {
			continue
		}
		head, err := heads.entry(p)
		if err != nil {
			return nil, fmt.Errorf("status %s: %w", p, err)
		}
		out[p] = candidate{inIndex: inIndex, staged: e.conflict || differs(head, e, inIndex && !e.ita)}
	}
	return out, nil
}

// indexFact is one path of the index.
type indexFact struct {
	hash     plumbing.Hash
	mode     filemode.FileMode
	ita      bool // git add -N: a placeholder, not staged content
	conflict bool // unmerged: stages 1–3 instead of an entry
}

func indexFacts(idx *index.Index) map[string]indexFact {
	out := make(map[string]indexFact, len(idx.Entries))
	for _, e := range idx.Entries {
		// Stage 0 is a normal entry; go-git's index.Merged constant says 1,
		// but its decoder yields 0, as the file format does.
		if e.Stage != 0 {
			out[e.Name] = indexFact{mode: e.Mode, conflict: true}
			continue
		}
		out[e.Name] = indexFact{hash: e.Hash, mode: e.Mode, ita: e.IntentToAdd}
	}
	return out
}

// differs says whether the index entry differs from HEAD's, as git's "X"
// status column does.
// has is whether the index holds content for the path.
func differs(head *object.TreeEntry, e indexFact, has bool) bool {
	switch {
	case (head != nil) != has:
		return true
	case head == nil:
		return false
	}
	return head.Hash != e.hash || head.Mode != e.mode
}

// nestedRepos answers whether an untracked path lies in a nested
// repository: go-git walks into one, git (and so this package) does not.
type nestedRepos struct {
	root  string
	known map[string]bool // directory → has a .git of its own
}

func (n nestedRepos) contains(p string) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		has, ok := n.known[d]
		if !ok {
			_, err := os.Lstat(filepath.Join(n.root, filepath.FromSlash(d), ".git"))
			has = err == nil
			n.known[d] = has
		}
		if has {
			return true
		}
	}
	return false
}

// userExcludes is the user's excludes file as git finds it: core.excludesFile
// in ~/.gitconfig, else in the system config, else
// $XDG_CONFIG_HOME/git/ignore (~/.config/git/ignore). go-git reads only the
// first; the git CLI reads all three, and both engines must ignore the same
// files.
func userExcludes() []gitignore.Pattern {
	root := osfs.New("/")
	if ps, err := gitignore.LoadGlobalPatterns(root); err == nil && ps != nil {
		return ps
	}
	if ps, err := gitignore.LoadSystemPatterns(root); err == nil && ps != nil {
		return ps
	}
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(home, ".config")
	}
	ps, err := readPatterns(filepath.Join(dir, "git", "ignore"))
	if err != nil {
		return nil
	}
	return ps
}

// infoExcludes reads .git/info/exclude (of the common directory, for a
// linked work tree). go-git means to, but reads it through the work tree's
// file system, which no longer lets it into .git.
func (r *Repo) infoExcludes() []gitignore.Pattern {
	s, ok := r.repo.Storer.(interface{ Filesystem() billy.Filesystem })
	if !ok {
		return nil
	}
	f, err := s.Filesystem().Open("info/exclude")
	if err != nil {
		return nil
	}
	defer f.Close()
	ps, _ := scanPatterns(f)
	return ps
}

func readPatterns(file string) ([]gitignore.Pattern, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return scanPatterns(f)
}

// scanPatterns parses an excludes file: one pattern a line, "#" comments.
func scanPatterns(f io.Reader) ([]gitignore.Pattern, error) {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "#") && strings.TrimSpace(line) != "" {
			ps = append(ps, gitignore.ParsePattern(line, nil))
		}
	}
	return ps, sc.Err()
}

// onceIndex is a repository's storage whose index is read once, for one
// status (about 18 ms per read of a 20,000-entry index).
type onceIndex struct {
	storage.Storer
	once sync.Once
	idx  *index.Index
	err  error
}

func (s *onceIndex) Index() (*index.Index, error) {
	s.once.Do(func() { s.idx, s.err = s.Storer.Index() })
	return s.idx, s.err
}

// dirCache lists each directory of the work tree once, for one status.
type dirCache struct {
	billy.Filesystem
	mu   sync.Mutex
	dirs map[string][]os.FileInfo
}

func (f *dirCache) ReadDir(p string) ([]os.FileInfo, error) {
	f.mu.Lock()
	d, ok := f.dirs[p]
	f.mu.Unlock()
	if ok {
		return slices.Clone(d), nil
	}
	d, err := f.Filesystem.ReadDir(p)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.dirs[p] = d
	f.mu.Unlock()
	return slices.Clone(d), nil
}
