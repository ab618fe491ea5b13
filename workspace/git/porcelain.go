package git

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// candidate is what a status engine learned about one path besides HEAD and
// the disk, which [Repo.report] reads itself.
type candidate struct {
	inIndex bool // the index has the path: a normal entry, an intent-to-add or a conflict
	staged  bool // the index differs from HEAD here; an intent-to-add does not count, a conflict does
	// headKnown says head is HEAD's entry as git printed it (nil: HEAD has
	// no file there), sparing a walk of HEAD's tree; otherwise the report
	// looks the path up itself.
	headKnown bool
	head      *object.TreeEntry
}

// porcelain is the parsed output of `git status --porcelain=v2 -z --branch`.
type porcelain struct {
	oid   string // HEAD's commit; "" for a branch without commits
	files map[string]candidate
}

// parsePorcelainV2 reads git's machine format. With -z every record ends in
// NUL and paths are verbatim (spaces, newlines, any bytes), so nothing is
// unquoted; a rename record carries its original path as the next NUL-ended
// field. Anything not understood is an error, so a caller falls back to
// go-git rather than silently missing a path.
func parsePorcelainV2(out []byte) (porcelain, error) {
	pc := porcelain{files: map[string]candidate{}}
	if len(out) > 0 && out[len(out)-1] != 0 {
		return pc, fmt.Errorf("porcelain: output does not end in NUL (cut short?)")
	}
	recs := bytes.Split(out, []byte{0})
	recs = recs[:len(recs)-1] // the empty field after the final NUL
	for i := 0; i < len(recs); i++ {
		rec := string(recs[i])
		var err error
		switch {
		case strings.HasPrefix(rec, "# "):
			pc.header(rec)
		case strings.HasPrefix(rec, "1 "):
			err = pc.tracked(rec, 9)
		case strings.HasPrefix(rec, "2 "):
			if i+1 >= len(recs) {
				return pc, fmt.Errorf("porcelain: rename record without its original path")
			}
			i++
			err = pc.renamed(rec, string(recs[i]))
		case strings.HasPrefix(rec, "u "):
			err = pc.tracked(rec, 11)
		case strings.HasPrefix(rec, "? "):
			err = pc.untracked(rec[2:])
		case strings.HasPrefix(rec, "! "):
			// Ignored files are not asked for; if a config ever adds them, they stay out.
		default:
			err = fmt.Errorf("porcelain: unknown record %q", clip(rec))
		}
		if err != nil {
			return pc, err
		}
	}
	return pc, nil
}

func (pc *porcelain) header(rec string) {
	if oid, ok := strings.CutPrefix(rec, "# branch.oid "); ok && oid != "(initial)" {
		pc.oid = oid
	}
}

// tracked reads an ordinary ("1", n = 9 fields) or unmerged ("u", n = 11)
// record: "<type> <XY> <sub> … <path>", the path last so it may hold spaces.
func (pc *porcelain) tracked(rec string, n int) error {
	f := strings.SplitN(rec, " ", n)
	if len(f) != n || len(f[1]) != 2 || len(f[2]) != 4 {
		return fmt.Errorf("porcelain: malformed record %q", clip(rec))
	}
	if f[2][0] == 'S' {
		return nil // a submodule: another repository's files (see Status)
	}
	if f[0] == "u" {
		// A conflict: the index holds stages, and the record names no HEAD entry.
		return pc.add(f[n-1], candidate{inIndex: true, staged: true})
	}
	c := candidate{inIndex: f[1][0] != 'D', staged: f[1][0] != '.'}
	// Without a staged change git prints the index entry as HEAD's, which is
	// wrong for one kind of entry: an intent-to-add (git add -N), whose
	// placeholder is the empty blob; deleted from disk it reads as a HEAD
	// file. An empty file really in HEAD prints the same, so both are looked
	// up in the tree.
	if f[1][0] != '.' || f[6] != emptyBlob {
		c.head, c.headKnown = headOf(f[3], f[6])
	}
	return pc.add(f[n-1], c)
}

// emptyBlob is the object id of the empty file.
const emptyBlob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

// headOf reads an ordinary record's HEAD mode and object: mode 000000 means
// HEAD has no such path. Anything unexpected leaves the lookup to the tree.
func headOf(mode, hash string) (*object.TreeEntry, bool) {
	m, err := strconv.ParseUint(mode, 8, 32)
	if err != nil || len(mode) != 6 {
		return nil, false
	}
	if m == 0 {
		return nil, true
	}
	if len(hash) != 40 || strings.Trim(hash, "0123456789abcdef") != "" {
		return nil, false
	}
	return &object.TreeEntry{Mode: filemode.FileMode(m), Hash: plumbing.NewHash(hash)}, true
}

// renamed reads "2 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <Xscore> <path>" and
// its original path. --no-renames keeps these away, but a path is never
// lost if one comes: the new path is in the index, the old one left it.
func (pc *porcelain) renamed(rec, orig string) error {
	f := strings.SplitN(rec, " ", 10)
	if len(f) != 10 || len(f[1]) != 2 || len(f[2]) != 4 {
		return fmt.Errorf("porcelain: malformed record %q", clip(rec))
	}
	if f[2][0] == 'S' {
		return nil
	}
	if err := pc.add(f[9], candidate{inIndex: true, staged: true}); err != nil {
		return err
	}
	return pc.add(orig, candidate{staged: true})
}

// untracked reads "? <path>". A path ending in "/" is a directory git did not
// descend into, which with --untracked-files=all means a nested repository:
// like a submodule, its files are not this repository's.
func (pc *porcelain) untracked(p string) error {
	if strings.HasSuffix(p, "/") {
		return nil
	}
	if !repoPath(p) {
		return fmt.Errorf("porcelain: path %q: %w", clip(p), ErrBadPath)
	}
	if _, ok := pc.files[p]; !ok {
		// Not in the index, and so not in HEAD either: a path of HEAD missing
		// from the index has a "1 D." record, which then says more.
		pc.files[p] = candidate{headKnown: true}
	}
	return nil
}

func (pc *porcelain) add(p string, c candidate) error {
	if !repoPath(p) {
		return fmt.Errorf("porcelain: path %q: %w", clip(p), ErrBadPath)
	}
	c.staged = c.staged || pc.files[p].staged
	pc.files[p] = c
	return nil
}

// repoPath accepts what git may print as a path of this work tree: clean,
// relative, inside. Unlike [cleanPath] it allows a backslash, which is an
// ordinary name byte on Unix.
func repoPath(p string) bool {
	return p != "" && p != "." && p != ".." && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "../") &&
		path.Clean(p) == p && strings.IndexByte(p, 0) < 0
}

// clip bounds what an error quotes of git's output.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
