package workspace

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// WalkFunc is called for every entry [FS.Walk] visits. Returning
// [fs.SkipDir] for a directory skips its contents; [fs.SkipAll] ends the
// walk without error; any other error ends it with that error.
type WalkFunc func(e Entry) error

// Walk visits the tree under start (workspace-relative, "." for the root)
// depth first in lexical order, the way git sees it: the .git directory and
// every path ignored by .git/info/exclude or a .gitignore (the root's, the
// ones on the way to start and the nested ones below it) are left out.
// start itself is visited even when ignored (an explicit path, as ripgrep
// takes it); then the ignore files above it do not apply inside it. Symlinks are passed to fn as entries (Symlink set) and never
// followed, so the walk never leaves the root. Ignore files are read
// through the root too; one that cannot be read is treated as empty.
// Each directory lists at most MaxEntries entries; a directory below start
// that cannot be listed is skipped.
func (w *FS) Walk(start string, fn WalkFunc) error {
	p, err := clean("walk", start, w.windows)
	if err != nil {
		return err
	}
	fi, err := w.Lstat(p)
	if err != nil {
		return err
	}
	if p == ".git" || strings.HasPrefix(p, ".git/") {
		return nil
	}
	ps := w.ignoreFile(".git/info/exclude", nil)
	// The ignore files of start's ancestors, root first.
	if p != "." {
		parts := strings.Split(p, "/")
		for i := range parts {
			dir := "."
			if i > 0 {
				dir = strings.Join(parts[:i], "/")
			}
			ps = append(ps, w.ignoreFile(join(dir, ".gitignore"), parts[:i])...)
		}
		if gitignore.NewMatcher(ps).Match(parts, fi.IsDir()) {
			// Asked for explicitly although ignored: the rules above it
			// would hide all of it, so only its own ignore files count.
			ps = nil
		}
	}
	e := Entry{Path: p, Name: p[strings.LastIndexByte(p, '/')+1:], Mode: fi.Mode(), Size: fi.Size(),
		Symlink: fi.Mode()&fs.ModeSymlink != 0}
	err = w.walk(e, ps, fn, true)
	if errors.Is(err, fs.SkipAll) || errors.Is(err, fs.SkipDir) {
		return nil
	}
	return err
}

func (w *FS) walk(e Entry, ps []gitignore.Pattern, fn WalkFunc, top bool) error {
	if err := fn(e); err != nil || !e.Mode.IsDir() || e.Symlink {
		return err
	}
	var domain []string
	if e.Path != "." {
		domain = strings.Split(e.Path, "/")
	}
	if own := w.ignoreFile(join(e.Path, ".gitignore"), domain); len(own) > 0 {
		// A fresh slice: siblings must not see this directory's patterns.
		ps = append(append([]gitignore.Pattern(nil), ps...), own...)
	}
	m := gitignore.NewMatcher(ps)
	entries, _, err := w.ReadDir(e.Path)
	if err != nil {
		if top {
			return err
		}
		return nil // a directory below start that cannot be listed is skipped
	}
	for _, c := range entries {
		if c.Name == ".git" {
			continue
		}
		isDir := c.Mode.IsDir() && !c.Symlink
		if m.Match(append(domain[:len(domain):len(domain)], c.Name), isDir) {
			continue
		}
		err := w.walk(c, ps, fn, false)
		switch {
		case errors.Is(err, fs.SkipDir):
			// fn skipped c's contents (or, for a file, the rest of e).
			if !isDir {
				return nil
			}
		case err != nil:
			return err
		}
	}
	return nil
}

// ignoreFile parses one gitignore-format file whose patterns apply under
// domain; a missing or unreadable file has no patterns.
func (w *FS) ignoreFile(rel string, domain []string) []gitignore.Pattern {
	data, err := w.ReadFile(rel)
	if err != nil || len(data) > 1<<20 {
		return nil
	}
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}
