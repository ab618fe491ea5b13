package git

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// statusCase is one repository state: files committed as the base, changes
// made after, and the report both engines must give.
type statusCase struct {
	name  string
	base  map[string]string // committed in one commit; nil means no commit
	setup func(t testing.TB, dir string)
	want  []File
}

func rm(t testing.TB, dir, rel string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, rel)); err != nil {
		t.Fatal(err)
	}
}

func chmod(t testing.TB, dir, rel string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(dir, rel), mode); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, dir, target, rel string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(dir, rel)); err != nil {
		t.Fatal(err)
	}
}

var oddNames = []string{"sp ace.txt", "new\nline.txt", "tab\tname", "ünïcødé/☃.txt", `quote"d`, `back\slash`,
	"-leading-dash", "#hash", "trailing space ", "日本語/ファイル.md"}

var statusCases = []statusCase{
	{
		name: "untracked in nested directories and odd names",
		base: map[string]string{"README": "r\n"},
		setup: func(t testing.TB, dir string) {
			write(t, dir, "a/b/c/deep.go", "package c\n")
			for _, n := range oddNames {
				write(t, dir, n, "odd\n")
			}
			write(t, dir, "GIT~1", "git refuses to add this name; it is still untracked\n")
		},
		want: append([]File{{Path: "GIT~1", State: Untracked}, {Path: "a/b/c/deep.go", State: Untracked}},
			sortedFiles(oddNames, Untracked)...),
	},
	{
		name: "odd names modified, deleted and staged",
		base: mapOf(oddNames, "v1\n"),
		setup: func(t testing.TB, dir string) {
			write(t, dir, "sp ace.txt", "v2\n")
			rm(t, dir, "new\nline.txt")
			write(t, dir, "ünïcødé/☃.txt", "v2\n")
			gitCmd(t, dir, "add", "ünïcødé/☃.txt")
			chmod(t, dir, `back\slash`, 0o755)
		},
		want: []File{
			{Path: `back\slash`, State: Modified, ModeChanged: true},
			{Path: "new\nline.txt", State: Deleted},
			{Path: "sp ace.txt", State: Modified},
			{Path: "ünïcødé/☃.txt", State: Modified, Staged: true},
		},
	},
	{
		name: "modified, deleted, staged, staged then reverted, only touched",
		base: map[string]string{"mod": "1\n", "del": "1\n", "staged": "1\n", "reverted": "1\n", "touched": "1\n", "d/e/f": "1\n"},
		setup: func(t testing.TB, dir string) {
			write(t, dir, "mod", "2\n")
			rm(t, dir, "del")
			write(t, dir, "staged", "2\n")
			gitCmd(t, dir, "add", "staged")
			write(t, dir, "reverted", "2\n")
			gitCmd(t, dir, "add", "reverted")
			write(t, dir, "reverted", "1\n")
			future := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(dir, "touched"), future, future); err != nil {
				t.Fatal(err)
			}
			rm(t, dir, "d")
		},
		want: []File{
			{Path: "d/e/f", State: Deleted},
			{Path: "del", State: Deleted},
			{Path: "mod", State: Modified},
			{Path: "staged", State: Modified, Staged: true},
		},
	},
	{
		name: "staged deletion, removed from the index but kept, and modified after",
		base: map[string]string{"gone": "1\n", "cached": "1\n", "cached-mod": "1\n"},
		setup: func(t testing.TB, dir string) {
			gitCmd(t, dir, "rm", "-q", "gone")
			gitCmd(t, dir, "rm", "-q", "--cached", "cached", "cached-mod")
			write(t, dir, "cached-mod", "2\n")
		},
		want: []File{
			{Path: "cached-mod", State: Modified, Staged: true},
			{Path: "gone", State: Deleted, Staged: true},
		},
	},
	{
		name: "renames staged, unstaged, and with an edit",
		base: map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n"},
		setup: func(t testing.TB, dir string) {
			write(t, dir, "dir/keep", "k\n")
			gitCmd(t, dir, "mv", "a.txt", "dir/a moved.txt")
			if err := os.Rename(filepath.Join(dir, "b.txt"), filepath.Join(dir, "b2.txt")); err != nil {
				t.Fatal(err)
			}
			gitCmd(t, dir, "mv", "c.txt", "c2.txt")
			write(t, dir, "c2.txt", "gamma\nplus\n")
		},
		want: []File{
			{Path: "a.txt", State: Deleted, Staged: true},
			{Path: "b.txt", State: Deleted},
			{Path: "b2.txt", State: Untracked},
			{Path: "c.txt", State: Deleted, Staged: true},
			{Path: "c2.txt", State: Added, Staged: true},
			{Path: "dir/a moved.txt", State: Added, Staged: true},
			{Path: "dir/keep", State: Untracked},
		},
	},
	{
		name: "ignore rules: .gitignore at two levels, negation, info/exclude, tracked but ignored",
		base: map[string]string{".gitignore": "*.log\nbuild/\n!keep.log\n", "sub/.gitignore": "*.tmp\n",
			"tracked.log": "1\n"},
		setup: func(t testing.TB, dir string) {
			write(t, dir, ".git/info/exclude", "secret.txt\n")
			for _, f := range []string{"x.log", "build/out/bin", "sub/a.tmp", "secret.txt", "sub/deeper/secret.txt"} {
				write(t, dir, f, "noise\n")
			}
			write(t, dir, "keep.log", "kept\n")
			write(t, dir, "a.tmp", "not ignored at the top\n")
			write(t, dir, "tracked.log", "2\n")
		},
		want: []File{
			{Path: "a.tmp", State: Untracked},
			{Path: "keep.log", State: Untracked},
			{Path: "tracked.log", State: Modified},
		},
	},
	{
		name: "modes and symlinks",
		base: map[string]string{"run.sh": "#!/bin/sh\n", "plain": "p\n", "target": "t\n", "other": "o\n"},
		setup: func(t testing.TB, dir string) {
			chmod(t, dir, "run.sh", 0o755)
			write(t, dir, "new.sh", "#!/bin/sh\n")
			chmod(t, dir, "new.sh", 0o755)
			symlink(t, dir, "target", "link")
			symlink(t, dir, "does-not-exist", "dangling")
			rm(t, dir, "plain")
			symlink(t, dir, "other", "plain") // a file became a link
		},
		want: []File{
			{Path: "dangling", State: Untracked},
			{Path: "link", State: Untracked},
			{Path: "new.sh", State: Untracked},
			{Path: "plain", State: Modified, ModeChanged: true},
			{Path: "run.sh", State: Modified, ModeChanged: true},
		},
	},
	{
		name: "core.fileMode=false ignores the executable bit",
		base: map[string]string{"run.sh": "#!/bin/sh\n", "edit.sh": "a\n"},
		setup: func(t testing.TB, dir string) {
			gitCmd(t, dir, "config", "core.fileMode", "false")
			chmod(t, dir, "run.sh", 0o755)
			chmod(t, dir, "edit.sh", 0o755)
			write(t, dir, "edit.sh", "b\n")
		},
		want: []File{{Path: "edit.sh", State: Modified}},
	},
	{
		name: "a file became a directory and a directory became a file",
		base: map[string]string{"was-file": "f\n", "was-dir/inner": "i\n", "was-dir/more/x": "x\n"},
		setup: func(t testing.TB, dir string) {
			rm(t, dir, "was-file")
			write(t, dir, "was-file/child", "c\n")
			rm(t, dir, "was-dir")
			write(t, dir, "was-dir", "now a file\n")
		},
		want: []File{
			{Path: "was-dir", State: Untracked},
			{Path: "was-dir/inner", State: Deleted},
			{Path: "was-dir/more/x", State: Deleted},
			{Path: "was-file", State: Deleted},
			{Path: "was-file/child", State: Untracked},
		},
	},
	{
		name: "intent to add (kept and deleted), added then deleted, added then changed, empty file deleted",
		base: map[string]string{"x": "x\n", "empty": "", "empty-kept": ""},
		setup: func(t testing.TB, dir string) {
			write(t, dir, "ita", "later\n")
			gitCmd(t, dir, "add", "-N", "ita")
			write(t, dir, "ita-gone", "never added\n")
			gitCmd(t, dir, "add", "-N", "ita-gone")
			rm(t, dir, "ita-gone") // git prints its placeholder as if HEAD had an empty file
			rm(t, dir, "empty")    // the same record, but HEAD has it
			write(t, dir, "added-gone", "a\n")
			gitCmd(t, dir, "add", "added-gone")
			rm(t, dir, "added-gone")
			write(t, dir, "added-changed", "a\n")
			gitCmd(t, dir, "add", "added-changed")
			write(t, dir, "added-changed", "b\n")
		},
		want: []File{
			{Path: "added-changed", State: Added, Staged: true},
			{Path: "empty", State: Deleted},
			{Path: "ita", State: Added},
		},
	},
	{
		name: "CRLF and binary content compared byte for byte",
		base: map[string]string{"crlf.txt": "a\r\nb\r\n", "bin": "\x00\x01\x02"},
		setup: func(t testing.TB, dir string) {
			write(t, dir, "crlf.txt", "a\nb\n")
			write(t, dir, "bin", "\x00\x01\x03")
		},
		want: []File{{Path: "bin", State: Modified}, {Path: "crlf.txt", State: Modified}},
	},
	{
		name: "no commit yet",
		setup: func(t testing.TB, dir string) {
			write(t, dir, "a.txt", "a")
			write(t, dir, "d/b.txt", "b")
			gitCmd(t, dir, "add", "d/b.txt")
		},
		want: []File{{Path: "a.txt", State: Untracked}, {Path: "d/b.txt", State: Added, Staged: true}},
	},
	{
		name: "detached HEAD",
		base: map[string]string{"a": "1\n"},
		setup: func(t testing.TB, dir string) {
			gitCmd(t, dir, "checkout", "-q", "--detach")
			write(t, dir, "a", "2\n")
		},
		want: []File{{Path: "a", State: Modified}},
	},
	{
		name: "submodules and nested repositories are other repositories",
		base: map[string]string{"top": "1\n"},
		setup: func(t testing.TB, dir string) {
			sub := newRepo(t)
			commitBase(t, sub, map[string]string{"s.txt": "s\n"})
			gitCmd(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "mod/sub")
			gitCmd(t, dir, "commit", "-q", "-m", "add a submodule")
			write(t, dir, "mod/sub/s.txt", "changed inside\n")
			write(t, dir, "mod/sub/new.txt", "untracked inside\n")
			gitCmd(t, filepath.Join(dir, "mod/sub"), "commit", "-q", "-am", "move the submodule's HEAD")
			gitCmd(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "staged-sub")
			gitCmd(t, dir, "init", "-q", "nested")
			write(t, dir, "nested/n.txt", "n\n")
			write(t, dir, "top", "2\n")
		},
		want: []File{
			// The second submodule adds its entry to .gitmodules; neither
			// submodule, nor anything inside one or in nested/, is listed.
			{Path: ".gitmodules", State: Modified, Staged: true},
			{Path: "top", State: Modified},
		},
	},
	{
		name: "merge conflict",
		base: map[string]string{"f": "base\n", "same": "s\n"},
		setup: func(t testing.TB, dir string) {
			gitCmd(t, dir, "checkout", "-q", "-b", "other")
			write(t, dir, "f", "theirs\n")
			write(t, dir, "both-added", "theirs\n")
			gitCmd(t, dir, "add", "-A")
			gitCmd(t, dir, "commit", "-q", "-m", "other")
			gitCmd(t, dir, "checkout", "-q", "main")
			write(t, dir, "f", "ours\n")
			write(t, dir, "both-added", "ours\n")
			gitCmd(t, dir, "add", "-A")
			gitCmd(t, dir, "commit", "-q", "-m", "ours")
			mergeExpectingConflict(t, dir, "other")
		},
		want: []File{
			{Path: "both-added", State: Modified, Staged: true},
			{Path: "f", State: Modified, Staged: true},
		},
	},
	{
		name:  "clean",
		base:  map[string]string{"a": "1\n", "b/c": "2\n"},
		setup: func(testing.TB, string) {},
		want:  []File{},
	},
}

// mergeExpectingConflict merges branch into HEAD, which must stop on a
// conflict.
func mergeExpectingConflict(t testing.TB, dir, branch string) {
	t.Helper()
	cmd := exec.Command("git", "merge", "-q", branch)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("merge %s did not conflict:\n%s", branch, out)
	}
}

func sortedFiles(paths []string, s State) []File {
	out := make([]File, 0, len(paths))
	for _, p := range paths {
		out = append(out, File{Path: p, State: s})
	}
	sortByPath(out)
	return out
}

func sortByPath(fs []File) {
	for i := range fs {
		for j := i + 1; j < len(fs); j++ {
			if fs[j].Path < fs[i].Path {
				fs[i], fs[j] = fs[j], fs[i]
			}
		}
	}
}

func mapOf(paths []string, content string) map[string]string {
	m := map[string]string{}
	for _, p := range paths {
		m[p] = content
	}
	return m
}

// commitBase writes and commits files (in a fresh repository) and returns
// the commit hash, "" for none.
func commitBase(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	if files == nil {
		return ""
	}
	for p, c := range files {
		write(t, dir, p, c)
	}
	gitCmd(t, dir, "add", "-A", "-f") // every base file, even one .gitignore matches
	gitCmd(t, dir, "commit", "-q", "-m", "base")
	return gitCmd(t, dir, "rev-parse", "HEAD")
}

// TestStatusEngines runs every case with both engines: the reports must be
// identical and equal to the expected one.
func TestStatusEngines(t *testing.T) {
	for _, tc := range statusCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := newRepo(t)
			base := commitBase(t, dir, tc.base)
			tc.setup(t, dir)
			if base != "" {
				base = gitCmd(t, dir, "rev-parse", "HEAD") // some cases commit more
			}
			got := statusBoth(t, dir, DefaultMaxFiles)
			if got.Base != base {
				t.Errorf("base = %q, want %q", got.Base, base)
			}
			want := tc.want
			sortByPath(want)
			if diff := cmp.Diff(want, got.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}
