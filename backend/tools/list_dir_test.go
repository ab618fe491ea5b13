package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListDir(t *testing.T) {
	f := newFixture(t)
	f.write(t, "b.txt", "12345")
	f.write(t, "a/inner.txt", "x")
	f.write(t, "C.md", "")
	f.write(t, "empty/.keep", "")
	if err := os.Remove(filepath.Join(f.root, "empty/.keep")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b.txt", filepath.Join(f.root, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args, want string
		isErr      bool
	}{
		{args: `{}`, want: ". : 5 entries\n"},
		{args: `{"path":"."}`, want: ". : 5 entries\n"},
		{args: `{"path":"a"}`, want: "a: 1 entries\nfile\tinner.txt\t1\n"},
		{args: `{"path":"a/"}`, want: "a: 1 entries\nfile\tinner.txt\t1\n"},
		{args: `{"path":"empty"}`, want: "empty: empty directory\n"},
		{args: `{"path":"b.txt"}`, want: "list_dir: b.txt is a file, not a directory; use read_file", isErr: true},
		{args: `{"path":"nope"}`, want: "nope", isErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.args, func(t *testing.T) {
			if a := f.action(t, ListDir, tc.args); a != nil {
				t.Errorf("list_dir was gated: %+v", a)
			}
			res := f.execute(t, ListDir, tc.args)
			if res.IsError != tc.isErr {
				t.Fatalf("IsError = %v: %s", res.IsError, res.Content)
			}
			want := strings.Replace(tc.want, ". : 5 entries\n",
				".: 5 entries\nfile\tC.md\t0\ndir\ta\t-\nfile\tb.txt\t5\ndir\tempty\t-\nsymlink\tlink\t-\n", 1)
			if tc.isErr && !strings.Contains(res.Content, want) || !tc.isErr && res.Content != want {
				t.Errorf("got:\n%s\nwant:\n%s", res.Content, want)
			}
			f.noMachinePaths(t, "result", res.Content)
		})
	}
}

func TestListDirIsBounded(t *testing.T) {
	f := newFixture(t)
	for i := range maxListEntries + 5 {
		f.write(t, filepath.Join("many", strings.Repeat("f", 1)+itoa(i)), "")
	}
	res := f.execute(t, ListDir, `{"path":"many"}`)
	lines := strings.Split(strings.TrimSuffix(res.Content, "\n"), "\n")
	if res.IsError || len(lines) != maxListEntries+1 || !strings.Contains(lines[0], "listing truncated") {
		t.Errorf("%d lines, header %q", len(lines), lines[0])
	}
}
