package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStatusCLIWritesNothing: files whose stat data no longer matches the
// index would make a plain `git status` rewrite .git/index; the CLI engine
// must leave .git byte for byte as it was.
func TestStatusCLIWritesNothing(t *testing.T) {
	dir := newRepo(t)
	commitBase(t, dir, map[string]string{"a": "1\n", "b": "2\n", "c/d": "3\n"})
	future := time.Now().Add(2 * time.Hour)
	for _, f := range []string{"a", "b", "c/d"} {
		if err := os.Chtimes(filepath.Join(dir, f), future, future); err != nil {
			t.Fatal(err)
		}
	}
	write(t, dir, "b", "changed\n")
	before := dotGit(t, dir)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.StatusCLI(t.Context(), execRunner, DefaultMaxFiles)
	if err != nil {
		t.Fatal(err)
	}
	if want := []File{{Path: "b", State: Modified}}; !cmp.Equal(want, got.Files) {
		t.Errorf("files = %+v, want %+v", got.Files, want)
	}
	if diff := cmp.Diff(before, dotGit(t, dir)); diff != "" {
		t.Errorf("the CLI status wrote into .git (-before +after):\n%s", diff)
	}
}

// TestCLIEnv: variables that would point git elsewhere or change its
// output are dropped, the safety settings are added, the rest is kept.
func TestCLIEnv(t *testing.T) {
	in := []string{"PATH=/usr/bin", "HOME=/home/u", "GIT_DIR=/elsewhere/.git", "GIT_INDEX_FILE=/tmp/idx",
		"git_work_tree=/x", "GIT_CONFIG_PARAMETERS='core.fsmonitor'='hook'", "GIT_OPTIONAL_LOCKS=1", "LC_ALL=de_DE",
		"LANG=en_US.UTF-8", "GITHUB_TOKEN_NOT_GIT=kept"}
	got := CLIEnv(in)
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=en_US.UTF-8", "GITHUB_TOKEN_NOT_GIT=kept",
		"GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GIT_NO_REPLACE_OBJECTS=1", "LC_ALL=C"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CLIEnv (-want +got):\n%s", diff)
	}
}

// TestStatusUsesRunnerAndFallsBack: with a runner set, Status asks the CLI;
// when the runner fails or prints nonsense, go-git answers and the report is
// the same.
func TestStatusUsesRunnerAndFallsBack(t *testing.T) {
	dir := newRepo(t)
	commitBase(t, dir, map[string]string{"a": "1\n"})
	write(t, dir, "a", "2\n")
	write(t, dir, "u", "u\n")
	want := []File{{Path: "a", State: Modified}, {Path: "u", State: Untracked}}
	var calls atomic.Int32
	counting := func(ctx context.Context, d string, env, args []string) ([]byte, error) {
		calls.Add(1)
		return execRunner(ctx, d, env, args)
	}
	tests := []struct {
		name  string
		run   Runner
		calls int32
	}{
		{"no runner: go-git", nil, 0},
		{"the CLI", counting, 1},
		{"git missing", func(context.Context, string, []string, []string) ([]byte, error) {
			calls.Add(1)
			return nil, errors.New("executable not found")
		}, 1},
		{"output not understood", func(context.Context, string, []string, []string) ([]byte, error) {
			calls.Add(1)
			return []byte("On branch main\nnothing to commit\n"), nil
		}, 1},
	}
	t.Cleanup(func() { SetRunner(nil) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls.Store(0)
			SetRunner(tt.run)
			got, err := Status(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if calls.Load() != tt.calls {
				t.Errorf("runner called %d times, want %d", calls.Load(), tt.calls)
			}
		})
	}
}

// TestStatusCLIRefusesAMovedHead: the report declares its base, so a CLI
// answer about another commit is an error, not a mixed report.
func TestStatusCLIRefusesAMovedHead(t *testing.T) {
	dir := newRepo(t)
	commitBase(t, dir, map[string]string{"a": "1\n"})
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	moving := func(ctx context.Context, d string, env, args []string) ([]byte, error) {
		write(t, d, "a", "2\n")
		gitCmd(t, d, "commit", "-q", "-am", "moved")
		return execRunner(ctx, d, env, args)
	}
	if _, err := r.StatusCLI(t.Context(), moving, DefaultMaxFiles); err == nil || !strings.Contains(err.Error(), "HEAD moved") {
		t.Fatalf("err = %v, want HEAD moved", err)
	}
}

// TestStatusUserExcludes: the user's excludes file is found as git finds
// it (core.excludesFile in ~/.gitconfig, else $XDG_CONFIG_HOME/git/ignore,
// else ~/.config/git/ignore), by both engines.
func TestStatusUserExcludes(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // under the fake home
		xdg   string            // XDG_CONFIG_HOME relative to home; "" unset
	}{
		{"gitconfig excludesfile", map[string]string{".gitconfig": "[core]\n\texcludesfile = ~/my-ignore\n", "my-ignore": "*.swp\n"}, ""},
		{"default XDG location", map[string]string{".config/git/ignore": "*.swp\n"}, ""},
		{"XDG_CONFIG_HOME", map[string]string{"xdg/git/ignore": "*.swp\n", ".config/git/ignore": "nothing\n"}, "xdg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			for p, c := range tt.files {
				write(t, home, p, c)
			}
			t.Setenv("HOME", home)
			if tt.xdg != "" {
				t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, tt.xdg))
			}
			dir := newRepo(t)
			commitBase(t, dir, map[string]string{"a": "1\n"})
			write(t, dir, "notes.swp", "swap\n")
			write(t, dir, "d/x.swp", "swap\n")
			write(t, dir, "kept.txt", "k\n")
			got := statusBoth(t, dir, DefaultMaxFiles)
			if want := []File{{Path: "kept.txt", State: Untracked}}; !cmp.Equal(want, got.Files) {
				t.Errorf("files = %+v, want %+v", got.Files, want)
			}
		})
	}
}

// TestStatusOmitsWithBothEngines: the cap counts the same files either way.
func TestStatusOmitsWithBothEngines(t *testing.T) {
	dir := newRepo(t)
	for _, f := range []string{"a", "b", "c", "d"} {
		write(t, dir, f, f)
	}
	got := statusBoth(t, dir, 2)
	paths := []string{}
	for _, f := range got.Files {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{"a", "b"}) || got.Omitted != 2 || got.OmittedReason == "" {
		t.Errorf("status = %+v, want a and b listed and 2 omitted with a reason", got)
	}
}
