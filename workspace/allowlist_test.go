package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCanonical(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home", "u")
	proj := filepath.Join(home, "proj")
	mustMkdir(t, proj)
	mustWrite(t, filepath.Join(base, "file.txt"), "x")
	if err := os.Symlink(proj, filepath.Join(base, "proj_link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, filepath.Join(base, "home_link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, want string
		err      error
	}{
		{proj, proj, nil},
		{proj + "/", proj, nil},
		{proj + "/../proj/.", proj, nil},
		{filepath.Join(base, "proj_link"), proj, nil},
		{home, "", ErrNotAllowed},
		{filepath.Join(base, "home_link"), "", ErrNotAllowed},
		{filepath.Join(base, "home"), "", ErrNotAllowed}, // an ancestor of home
		{base, "", ErrNotAllowed},
		{"/", "", ErrNotAllowed},
		{filepath.Join(base, "file.txt"), "", ErrNotAllowed},
		{"", "", ErrNotAllowed},
		{"a\x00b", "", ErrNotAllowed},
		{filepath.Join(base, "missing"), "", os.ErrNotExist},
	}
	for _, tt := range tests {
		got, err := canonical(tt.in, home)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("canonical(%q) = %q, %v; want %v", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("canonical(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestContains(t *testing.T) {
	f := newFixture(t)
	mustMkdir(t, filepath.Join(f.base, "root2"))
	roots := []string{f.root}
	tests := []struct {
		path string
		want bool
	}{
		{f.root, true},
		{filepath.Join(f.root, "sub"), true},
		{filepath.Join(f.root, "sub", "a.txt"), true},
		{filepath.Join(f.root, "dir_link"), true},
		{filepath.Join(f.root, "link_out"), false}, // resolves outside
		{filepath.Join(f.root, "sub", "up"), false},
		{filepath.Join(f.root, "..", "outside"), false},
		{f.outside, false},
		{f.base + "/root2", false}, // a sibling sharing the prefix "root"
		{filepath.Join(f.root, "missing"), false},
		{"", false},
		{"/", false},
	}
	for _, tt := range tests {
		if got := Contains(roots, tt.path); got != tt.want {
			t.Errorf("Contains(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
	if Contains(nil, f.root) {
		t.Errorf("an empty allowlist must contain nothing")
	}
	if Contains([]string{"", "relative"}, f.root) {
		t.Errorf("empty or relative roots must contain nothing")
	}
}

func TestDisplay(t *testing.T) {
	tests := []struct{ path, home, want string }{
		{"/home/u/proj", "/home/u", "~/proj"},
		{"/home/u", "/home/u", "~"},
		{"/home/u/", "/home/u", "~"},
		{"/home/user2/proj", "/home/u", "/home/user2/proj"},
		{"/srv/proj", "/home/u", "/srv/proj"},
		{"/srv/proj", "", "/srv/proj"},
	}
	for _, tt := range tests {
		if got := Display(tt.path, tt.home); got != tt.want {
			t.Errorf("Display(%q, %q) = %q, want %q", tt.path, tt.home, got, tt.want)
		}
	}
}

func TestScrub(t *testing.T) {
	const root, home = "/home/u/proj", "/home/u"
	tests := []struct{ in, want string }{
		{"/home/u/proj/src/a.go:12: undefined", "./src/a.go:12: undefined"},
		{"cd /home/u/proj && make", "cd . && make"},
		{"see /home/u/proj.", "see .."},
		{"/home/u/.cache/go-build", "~/.cache/go-build"},
		{"/home/u", "~"},
		{"HOME=/home/u\nPWD=/home/u/proj\n", "HOME=~\nPWD=.\n"},
		{"/home/u/project2/x", "~/project2/x"},
		{"/home/u/proj.git", "~/proj.git"},
		{"/home/user2/x", "/home/user2/x"},
		{"/x/home/u/proj", "/x/home/u/proj"},
		{`"/home/u/proj/a b.txt"`, `"./a b.txt"`},
		{"file:///home/u/proj/x", "file://./x"},
		{"no paths here", "no paths here"},
		{"/home/u/proj/a /home/u/proj/b", "./a ./b"},
	}
	for _, tt := range tests {
		if got := Scrub(tt.in, root, home); got != tt.want {
			t.Errorf("Scrub(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Scrub("C:/Users/u/proj/x and C:\\Users\\u\\y", `C:\Users\u\proj`, `C:\Users\u`); filepath.Separator == '\\' && got != "./x and ~\\y" {
		t.Errorf("Windows scrub = %q", got)
	}
	if got := Scrub("/home/u/x", "", ""); got != "/home/u/x" {
		t.Errorf("empty root and home must leave text alone, got %q", got)
	}
}
