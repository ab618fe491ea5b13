package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/workspace"
)

const (
	defaultSearchResults = 200
	maxSearchResults     = 1000
	// maxSearchOutput caps the bytes of one result.
	maxSearchOutput = 64 << 10
	// maxSearchLine cuts a long matching line (minified code) in the output.
	maxSearchLine = 300
	// maxSearchFile skips bigger files; they are counted and reported.
	maxSearchFile = 1 << 20
	// maxSearchFiles bounds the files one search reads or matches, and
	// maxSearchRead the bytes it reads.
	maxSearchFiles = 50000
	maxSearchRead  = 256 << 20
)

type searchArgs struct {
	Pattern    string `json:"pattern,omitempty" jsonschema:"regular expression (RE2 syntax, as Go's regexp) searched in file contents line by line; omit to list the paths matching glob"`
	Glob       string `json:"glob,omitempty" jsonschema:"only files whose path matches this glob (** for any depth, e.g. **/*.go or src/**/*_test.go); a glob without / matches the file name"`
	Path       string `json:"path,omitempty" jsonschema:"workspace-relative directory (or file) to search under; default \".\", the whole workspace"`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"match pattern case-insensitively"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"most matching lines (or paths) to return; default 200, at most 1000"`
}

var searchSchema = lazySchema[searchArgs](func(s *jsonschema.Schema) {
	prop(s, "max_results").Minimum = jsonschema.Ptr(1.0)
	prop(s, "max_results").Maximum = jsonschema.Ptr(float64(maxSearchResults))
})

const searchDescription = `Search the workspace. With pattern: a regular expression (RE2) matched ` +
	`against each line of each text file; one result line per match as "path:line: text". With glob ` +
	`only: the paths of the matching files, one per line. Both: lines matching pattern in files matching ` +
	`glob. Paths are workspace-relative. Files ignored by .gitignore (and .git/info/exclude), the .git ` +
	`directory, symlinks, binary files, files over 1 MiB and secret files are skipped. At most ` +
	`max_results results (default 200) and 64 KiB are returned; the last line says when the output was ` +
	`truncated; narrow path, glob or pattern then.`

// search greps or globs the workspace. It is a read: it needs no gate, and
// secret files are skipped, never searched.
type search struct{}

func (search) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: Search, Description: searchDescription, Schema: searchSchema.Raw()}
}

func (search) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}

// searchQuery is a validated search.
type searchQuery struct {
	re     *regexp.Regexp // nil: list paths
	glob   string
	byName bool // glob has no '/': match the base name
	max    int
}

func newSearchQuery(a searchArgs) (searchQuery, error) {
	q := searchQuery{glob: a.Glob, byName: !strings.Contains(a.Glob, "/"), max: a.MaxResults}
	if q.max == 0 {
		q.max = defaultSearchResults
	}
	if a.Pattern == "" && a.Glob == "" {
		return q, errors.New("give a pattern, a glob or both")
	}
	if a.Glob != "" && !doublestar.ValidatePattern(a.Glob) {
		return q, fmt.Errorf("glob %q is not a valid glob pattern", a.Glob)
	}
	if a.Pattern != "" {
		expr := a.Pattern
		if a.IgnoreCase {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return q, fmt.Errorf("pattern is not a valid RE2 regular expression: %v", err)
		}
		q.re = re
	}
	return q, nil
}

func (q searchQuery) matchPath(p string) bool {
	if q.glob == "" {
		return true
	}
	if q.byName {
		ok, _ := doublestar.Match(q.glob, path.Base(p))
		return ok
	}
	ok, _ := doublestar.Match(q.glob, p)
	return ok
}

func (search) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[searchArgs](Search, searchSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	q, err := newSearchQuery(a)
	if err != nil {
		return failure(env, "%s: %v", Search, err), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	w, err := openWorkspace(env)
	if err != nil {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", Search, err)
	}
	defer w.Close()
	w.MaxRead = maxSearchFile
	p, err := w.Resolve(a.Path)
	if err != nil {
		return failure(env, "%s: %s", Search, pathMessage(err)), nil
	}
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, p); ok {
		return failure(env, "%s: refused: %s is a secret location (%s); agents never search secrets", Search, p, pat), nil
	}
	if _, err := w.Stat(p); err != nil {
		return failure(env, "%s: %s", Search, pathMessage(err)), nil
	}
	s := &searcher{ctx: ctx, w: w, q: q}
	if err := w.Walk(p, s.visit); err != nil {
		if ctx.Err() != nil {
			return failure(env, "%s: stopped: %v", Search, ctx.Err()), nil
		}
		return failure(env, "%s: %s", Search, pathMessage(err)), nil
	}
	return success(env, s.render(p)), nil
}

// searcher collects the results of one walk.
type searcher struct {
	ctx context.Context
	w   *workspace.FS
	q   searchQuery

	out                               strings.Builder
	results, files                    int
	read                              int64 // bytes of files read
	binary, large, secret, unreadable int
	truncated                         string // why the output stopped, "" when complete
}

func (s *searcher) visit(e workspace.Entry) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if ok, _ := agentpath.SecretName(e.Path); ok && e.Path != "." {
		s.secret++
		if e.Mode.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	if e.Symlink || !e.Mode.IsRegular() || !s.q.matchPath(e.Path) {
		return nil
	}
	if s.files++; s.files > maxSearchFiles {
		s.truncated = fmt.Sprintf("stopped after %d files", maxSearchFiles)
		return fs.SkipAll
	}
	if s.q.re == nil {
		s.add(e.Path + "\n")
	} else {
		s.grep(e)
	}
	if s.truncated != "" {
		return fs.SkipAll
	}
	return nil
}

// grep adds the matching lines of one file.
func (s *searcher) grep(e workspace.Entry) {
	if e.Size > maxSearchFile {
		s.large++
		return
	}
	data, err := s.w.ReadFile(e.Path)
	switch {
	case errors.Is(err, workspace.ErrTooLarge):
		s.large++
		return
	case err != nil:
		s.unreadable++ // hard-linked, vanished or unreadable: skipped
		return
	}
	if s.read += int64(len(data)); s.read > maxSearchRead {
		s.truncated = fmt.Sprintf("stopped after reading %d MiB", maxSearchRead>>20)
		return
	}
	if bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 {
		s.binary++
		return
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for n, line := range lines {
		if !s.q.re.Match(line) {
			continue
		}
		text := strings.TrimRight(string(line), "\r")
		if len(text) > maxSearchLine {
			cut := maxSearchLine
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + " … [line cut]"
		}
		text = strings.ToValidUTF8(text, "\uFFFD")
		if !s.add(fmt.Sprintf("%s:%d: %s\n", e.Path, n+1, text)) {
			return
		}
	}
}

// add appends one result line; false when the caps are reached.
func (s *searcher) add(line string) bool {
	if s.results >= s.q.max {
		s.truncated = fmt.Sprintf("max_results (%d) reached", s.q.max)
		return false
	}
	if s.out.Len()+len(line) > maxSearchOutput {
		s.truncated = fmt.Sprintf("output reached %d KiB", maxSearchOutput>>10)
		return false
	}
	s.out.WriteString(line)
	s.results++
	return true
}

func (s *searcher) render(p string) string {
	var b strings.Builder
	what := "matching lines"
	if s.q.re == nil {
		what = "matching files"
	}
	if s.results == 0 {
		fmt.Fprintf(&b, "%s: no %s\n", p, what)
	} else {
		fmt.Fprintf(&b, "%s: %d %s\n", p, s.results, what)
		b.WriteString(s.out.String())
	}
	var skipped []string
	for _, c := range []struct {
		n    int
		what string
	}{{s.binary, "binary"}, {s.large, "over 1 MiB"}, {s.secret, "secret"}, {s.unreadable, "unreadable"}} {
		if c.n > 0 {
			skipped = append(skipped, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "[skipped: %s]\n", strings.Join(skipped, ", "))
	}
	if s.truncated != "" {
		fmt.Fprintf(&b, "[truncated: %s; more results may exist, narrow path, glob or pattern]\n", s.truncated)
	}
	return b.String()
}
