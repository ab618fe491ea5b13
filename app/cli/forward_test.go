package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAbsArgs: a forwarded command runs in the engine, whose working
// directory is not the user's; the words that are the user's paths become
// absolute and nothing else changes.
func TestAbsArgs(t *testing.T) {
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "plan.toml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(cwd, "proj"), 0o700); err != nil {
		t.Fatal(err)
	}
	in := func(p string) string { return filepath.Join(cwd, p) }
	tests := []struct {
		args, want []string
	}{
		{[]string{"workspace", "add", "."}, []string{"workspace", "add", cwd}},
		{[]string{"workspace", "add", "proj"}, []string{"workspace", "add", in("proj")}},
		{[]string{"run", "--workspace", "../x", "fix README.md"}, []string{"run", "--workspace", filepath.Join(cwd, "../x"), "fix README.md"}},
		{[]string{"run", "--playbook=plan.toml", "--workspace", "/abs", "task"}, []string{"run", "--playbook=" + in("plan.toml"), "--workspace", "/abs", "task"}},
		{[]string{"runs", "export", "run_1", "-o", "out.zip"}, []string{"runs", "export", "run_1", "-o", in("out.zip")}},
		{[]string{"search", "q", "--to", "2026-01-01T00:00:00.000Z", "--status", "Completed"}, []string{"search", "q", "--to", "2026-01-01T00:00:00.000Z", "--status", "Completed"}},
		{[]string{"reject", "apr_1", "--reason", "no. not this."}, []string{"reject", "apr_1", "--reason", "no. not this."}},
		{[]string{"runs", "list", "--home", "h"}, []string{"runs", "list", "--home", "/data"}},
		{[]string{"proj"}, []string{"proj"}}, // the command word stays
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, absArgs(tc.args, cwd, "/data")); d != "" {
			t.Errorf("absArgs(%q) (-want +got):\n%s", tc.args, d)
		}
	}
}

// TestReadOnlyTable: read-only commands never start the engine; anything
// else (including commands added later) needs it.
func TestReadOnlyTable(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ro   bool
	}{
		{[]string{"runs", "list"}, true}, {[]string{"runs", "follow", "r"}, true}, {[]string{"approvals", "list"}, true},
		{[]string{"workspace", "list"}, true}, {[]string{"profiles"}, true}, {[]string{"audit", "verify"}, true},
		{[]string{"search", "q"}, true}, {[]string{"runs", "export", "r"}, true},
		{[]string{"run", "--workspace", "."}, false}, {[]string{"approve", "a"}, false}, {[]string{"runs", "cancel", "r"}, false},
		{[]string{"runs", "resume", "r"}, false}, {[]string{"workspace", "add", "."}, false}, {[]string{"undo"}, false},
		{[]string{"resolve", "x"}, false},
	} {
		if got := readOnly(tc.args[0], tc.args[1:]); got != tc.ro {
			t.Errorf("readOnly(%q) = %v, want %v", tc.args, got, tc.ro)
		}
	}
}
