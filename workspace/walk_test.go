package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWalk(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "ws")
	files := map[string]string{
		".gitignore":        "*.log\n/build/\n# comment\n!keep.log\n",
		".git/info/exclude": "excluded.txt\n",
		".git/HEAD":         "ref: refs/heads/main\n",
		"a.go":              "package a\n",
		"debug.log":         "x",
		"keep.log":          "kept",
		"excluded.txt":      "x",
		"build/out.bin":     "x",
		"sub/build/x.go":    "not the root build dir",
		"sub/.gitignore":    "gen/\n*.tmp\n",
		"sub/gen/g.go":      "x",
		"sub/s.tmp":         "x",
		"sub/s.go":          "x",
		"other/s.tmp":       "not ignored here",
	}
	for p, c := range files {
		mustMkdir(t, filepath.Dir(filepath.Join(root, p)))
		mustWrite(t, filepath.Join(root, p), c)
	}
	mustMkdir(t, filepath.Join(base, "outside"))
	mustWrite(t, filepath.Join(base, "outside/o.go"), "outside")
	if err := os.Symlink("../outside", filepath.Join(root, "link_out")); err != nil {
		t.Fatal(err)
	}
	w, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	visit := func(start string, skip string) []string {
		var got []string
		err := w.Walk(start, func(e Entry) error {
			kind := ""
			switch {
			case e.Symlink:
				kind = "@"
			case e.Mode.IsDir():
				kind = "/"
			}
			got = append(got, e.Path+kind)
			if e.Path == skip {
				return fs.SkipDir
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Walk(%s): %v", start, err)
		}
		return got
	}
	tests := []struct {
		start, skip string
		want        []string
	}{
		{".", "", []string{"./", ".gitignore", "a.go", "keep.log", "link_out@", "other/", "other/s.tmp",
			"sub/", "sub/.gitignore", "sub/build/", "sub/build/x.go", "sub/s.go"}},
		{"sub", "", []string{"sub/", "sub/.gitignore", "sub/build/", "sub/build/x.go", "sub/s.go"}},
		{"sub/build", "", []string{"sub/build/", "sub/build/x.go"}},
		{"build", "", []string{"build/", "build/out.bin"}}, // explicit start: visited although ignored
		{".", "sub", []string{"./", ".gitignore", "a.go", "keep.log", "link_out@", "other/", "other/s.tmp", "sub/"}},
		{".git", "", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, visit(tt.start, tt.skip)); diff != "" {
			t.Errorf("Walk(%q) skip %q (-want +got):\n%s", tt.start, tt.skip, diff)
		}
	}
	if err := w.Walk("../outside", func(Entry) error { return nil }); err == nil {
		t.Error("Walk(../outside) succeeded")
	}
	if err := w.Walk("link_out/o.go", func(Entry) error { return nil }); err == nil {
		t.Error("Walk through a symlink out succeeded")
	}
}
