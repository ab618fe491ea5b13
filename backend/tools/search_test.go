package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// searchFixture is a workspace with ignored, nested-ignored, secret, binary
// and symlinked files next to an outside directory.
func searchFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	for p, c := range map[string]string{
		".gitignore":        "*.log\n/dist/\n",
		".git/info/exclude": "local.txt\n",
		".git/config":       "needle in git\n",
		"main.go":           "package main\n\nfunc main() { needle() }\n",
		"README.md":         "A Needle in the readme\n",
		"debug.log":         "needle ignored by *.log\n",
		"dist/bundle.js":    "needle ignored by /dist/\n",
		"local.txt":         "needle excluded by .git/info/exclude\n",
		"pkg/.gitignore":    "gen/\n",
		"pkg/a.go":          "package pkg\n// needle one\n// needle two\n",
		"pkg/gen/z.go":      "needle in nested-ignored dir\n",
		".env":              "TOKEN=needle\n",
		"secrets/id_rsa":    "needle private key\n",
		"bin.dat":           "needle\x00binary\n",
	} {
		f.write(t, p, c)
	}
	outside := filepath.Join(filepath.Dir(f.root), filepath.Base(f.root)+"-outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	if err := os.WriteFile(filepath.Join(outside, "o.go"), []byte("needle outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.root, "link_out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "o.go"), filepath.Join(f.root, "file_out.go")); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSearch(t *testing.T) {
	f := searchFixture(t)
	tests := []struct {
		name    string
		args    string
		isErr   bool
		want    []string // lines the result must contain
		notWant []string // substrings it must not contain
	}{
		{name: "regex honours ignores, skips binary, secrets, .git and symlinks",
			args: `{"pattern":"needle"}`,
			want: []string{".: 3 matching lines", "main.go:3: func main() { needle() }", "pkg/a.go:2: // needle one",
				"pkg/a.go:3: // needle two", "[skipped: 1 binary, 2 secret]"},
			notWant: []string{"debug.log", "dist/", "local.txt", "gen/z.go", ".env", "id_rsa", ".git/", "outside",
				"file_out", "bin.dat", "truncated"}},
		{name: "ignore case", args: `{"pattern":"needle","ignore_case":true,"glob":"*.md"}`,
			want: []string{"README.md:1: A Needle in the readme"}, notWant: []string{"main.go"}},
		{name: "glob only lists paths", args: `{"glob":"**/*.go"}`,
			want: []string{".: 2 matching files", "main.go", "pkg/a.go"}, notWant: []string{"z.go", "o.go"}},
		{name: "glob without slash matches names", args: `{"glob":"a.go"}`, want: []string{"pkg/a.go"}},
		{name: "under a path", args: `{"pattern":"needle","path":"pkg"}`,
			want: []string{"pkg: 2 matching lines", "pkg/a.go:2: // needle one"}, notWant: []string{"main.go"}},
		{name: "explicitly ignored path is searched", args: `{"pattern":"needle","path":"dist"}`,
			want: []string{"dist/bundle.js:1: needle ignored by /dist/"}},
		{name: "count cap", args: `{"pattern":"needle","max_results":2}`,
			want: []string{".: 2 matching lines", "[truncated: max_results (2) reached"}},
		{name: "no match", args: `{"pattern":"haystack"}`, want: []string{".: no matching lines"}},
		{name: "invalid regex", args: `{"pattern":"needle("}`, isErr: true,
			want: []string{"search: pattern is not a valid RE2 regular expression"}},
		{name: "invalid glob", args: `{"glob":"[a"}`, isErr: true, want: []string{"not a valid glob"}},
		{name: "nothing to search", args: `{}`, isErr: true, want: []string{"give a pattern, a glob or both"}},
		{name: "outside", args: `{"pattern":"x","path":"../"}`, isErr: true, want: []string{"only paths inside the workspace"}},
		{name: "symlink out", args: `{"pattern":"needle","path":"link_out"}`, isErr: true, want: []string{"outside the workspace"}},
		{name: "secret path", args: `{"pattern":"needle","path":"secrets/id_rsa"}`, isErr: true, want: []string{"secret"}},
		{name: "missing", args: `{"pattern":"x","path":"nope"}`, isErr: true, want: []string{"nope does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, res := f.call(t, Search, tt.args)
			if a != nil {
				t.Errorf("Action = %+v, want nil (a read)", a)
			}
			if res.IsError != tt.isErr {
				t.Errorf("IsError = %v, want %v:\n%s", res.IsError, tt.isErr, res.Content)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result lacks %q:\n%s", w, res.Content)
				}
			}
			for _, n := range tt.notWant {
				if strings.Contains(res.Content, n) {
					t.Errorf("result contains %q:\n%s", n, res.Content)
				}
			}
			f.noMachinePaths(t, "result", res.Content)
		})
	}
}

func TestSearchCapsOutputBytes(t *testing.T) {
	f := newFixture(t)
	line := "needle " + strings.Repeat("x", 200) + "\n"
	for i := range 5 {
		f.write(t, fmt.Sprintf("f%d.txt", i), strings.Repeat(line, 100))
	}
	f.write(t, "long.txt", "needle"+strings.Repeat("y", 5000)+"\n")
	res := f.execute(t, Search, `{"pattern":"needle","max_results":1000}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	if len(res.Content) > maxSearchOutput+1024 {
		t.Errorf("result is %d bytes, cap %d", len(res.Content), maxSearchOutput)
	}
	if !strings.Contains(res.Content, "[truncated: output reached 64 KiB") {
		t.Errorf("no truncation note:\n%s", res.Content[len(res.Content)-300:])
	}

	res = f.execute(t, Search, `{"pattern":"needle","glob":"long.txt"}`)
	if !strings.Contains(res.Content, "… [line cut]") || len(res.Content) > 1000 {
		t.Errorf("long line not cut:\n%s", res.Content)
	}
}

func TestSearchSkipsLargeFiles(t *testing.T) {
	f := newFixture(t)
	f.write(t, "big.txt", "needle\n"+strings.Repeat("z", maxSearchFile))
	f.write(t, "small.txt", "needle\n")
	res := f.execute(t, Search, `{"pattern":"needle"}`)
	if !strings.Contains(res.Content, "small.txt:1: needle") || strings.Contains(res.Content, "big.txt:") ||
		!strings.Contains(res.Content, "1 over 1 MiB") {
		t.Errorf("result:\n%s", res.Content)
	}
}
