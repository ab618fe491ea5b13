package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Canonical returns the canonical form of a directory the user wants to add
// to the allowlist: absolute, cleaned, with every symlink resolved. It refuses
// (ErrNotAllowed) anything that is not an existing directory, the filesystem
// root and the home directory itself or any of its ancestors, since allowing
// those would hand an agent ~/.ssh and every other project at once.
func Canonical(path string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		home = ""
	}
	return canonical(path, home)
}

func canonical(path, home string) (string, error) {
	if path == "" || strings.IndexByte(path, 0) >= 0 {
		return "", fmt.Errorf("canonical workspace: empty or invalid path: %w", ErrNotAllowed)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("canonical workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("canonical workspace %s: %w", Display(abs, home), err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("canonical workspace %s: %w", Display(real, home), err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("canonical workspace %s: not a directory: %w", Display(real, home), ErrNotAllowed)
	}
	if filepath.Dir(real) == real {
		return "", fmt.Errorf("canonical workspace %s: the filesystem root: %w", real, ErrNotAllowed)
	}
	if home != "" {
		if realHome, err := filepath.EvalSymlinks(home); err == nil && within(real, realHome) {
			return "", fmt.Errorf("canonical workspace %s: the home directory or one of its parents: %w",
				Display(real, home), ErrNotAllowed)
		}
	}
	return real, nil
}

// Contains reports whether path, after its symlinks are resolved, is one of
// the canonical roots or lies beneath one. An empty allowlist contains
// nothing (fail closed); so does a path that does not resolve.
func Contains(roots []string, path string) bool {
	if len(roots) == 0 || path == "" {
		return false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false
	}
	for _, r := range roots {
		if r != "" && filepath.IsAbs(r) && within(filepath.Clean(r), real) {
			return true
		}
	}
	return false
}

// within reports whether child is parent or beneath it (lexically, on
// cleaned absolute paths, with a separator boundary).
func within(parent, child string) bool {
	if parent == child {
		return true
	}
	p := parent
	if !strings.HasSuffix(p, string(filepath.Separator)) {
		p += string(filepath.Separator)
	}
	return strings.HasPrefix(child, p)
}

// Display shows an absolute path with the home directory rewritten to "~".
// Use it for workspace roots in the UI; never persist the absolute form.
func Display(path, home string) string {
	if home == "" || path == "" {
		return path
	}
	home = filepath.Clean(home)
	path = filepath.Clean(path)
	if path == home {
		return "~"
	}
	if within(home, path) {
		return "~" + string(filepath.Separator) + strings.TrimPrefix(path[len(home):], string(filepath.Separator))
	}
	return path
}

// Scrub rewrites every occurrence of the workspace root to "." and of the home
// directory to "~" in tool output, longest first so the root (usually under
// home) wins. An occurrence counts only at a path boundary: "/home/u/proj"
// inside "/home/u/project2" is left alone. Forward-slash spellings of
// Windows paths are rewritten too.
func Scrub(text, root, home string) string {
	type rule struct{ from, to string }
	var rules []rule
	add := func(p, to string) {
		p = strings.TrimRight(p, `/\`)
		if p == "" || len(p) < 2 {
			return
		}
		rules = append(rules, rule{p, to})
		if s := filepath.ToSlash(p); s != p {
			rules = append(rules, rule{s, to})
		}
	}
	add(root, ".")
	add(home, "~")
	sort.SliceStable(rules, func(i, j int) bool { return len(rules[i].from) > len(rules[j].from) })
	for _, r := range rules {
		text = replaceBounded(text, r.from, r.to)
	}
	return text
}

// replaceBounded replaces from with to where the match is not glued to other
// name characters on either side.
func replaceBounded(text, from, to string) string {
	if !strings.Contains(text, from) {
		return text
	}
	var b strings.Builder
	i := 0
	for {
		j := strings.Index(text[i:], from)
		if j < 0 {
			b.WriteString(text[i:])
			return b.String()
		}
		start, end := i+j, i+j+len(from)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		if (start == 0 || !nameRune(before)) && boundaryAfter(text[end:]) {
			b.WriteString(text[i:start])
			b.WriteString(to)
		} else {
			b.WriteString(text[i:end])
		}
		i = end
	}
}

// boundaryAfter reports whether rest starts where a path ends. Trailing dots
// count as punctuation ("see /home/u/proj.") unless a name character follows
// them ("/home/u/proj.git").
func boundaryAfter(rest string) bool {
	rest = strings.TrimLeft(rest, ".")
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !nameRune(r)
}

// nameRune reports whether r would continue a file name, so that a match next
// to it is part of a longer, different path.
func nameRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-' || r == '~' || r == '+' || r == '@'
}
