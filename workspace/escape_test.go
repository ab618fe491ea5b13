package workspace

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type escapeCase struct {
	line  int
	path  string
	win   bool // check with the Windows name rules only
	label string
}

func loadEscapes(t testing.TB, f *fixture) []escapeCase {
	t.Helper()
	file, err := os.Open("testdata/escapes.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	repl := strings.NewReplacer(
		"{ROOT}", f.root, "{OUTSIDE}", f.outside,
		"{LONG256}", strings.Repeat("a", 256),
		"{LONGPATH}", strings.Repeat("abcdefgh/", 120),
		"{MANYPARTS}", strings.Repeat("a/", 70)+"x",
		"{LONG256MB}", strings.Repeat("é", 128),
	)
	var out []escapeCase
	sc := bufio.NewScanner(file)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		end := strings.LastIndexByte(line, '"')
		p, err := strconv.Unquote(line[:end+1])
		if err != nil {
			t.Fatalf("testdata/escapes.txt:%d: %v", n, err)
		}
		tags := line[end+1:]
		out = append(out, escapeCase{
			line: n, path: repl.Replace(p), win: strings.Contains(tags, "[win]"),
			label: line[:end+1],
		})
	}
	return out
}

// TestEscapeCorpus runs every entry of testdata/escapes.txt through every
// rooted operation; each must fail with ErrOutsideRoot and leave the outside
// directory byte-for-byte unchanged.
func TestEscapeCorpus(t *testing.T) {
	f := newFixture(t)
	cases := loadEscapes(t, f)
	if len(cases) < 150 {
		t.Fatalf("corpus has %d entries, want at least 150", len(cases))
	}
	store := newStore(t)
	before := snapshot(t, f.outside)
	rootBefore := snapshot(t, f.root)
	for _, c := range cases {
		t.Run(strconv.Itoa(c.line), func(t *testing.T) {
			if c.win {
				if _, err := clean("write", c.path, true); !errors.Is(err, ErrOutsideRoot) {
					t.Errorf("%s: clean(windows) = %v, want ErrOutsideRoot", c.label, err)
				}
				return
			}
			data, err := f.fs.ReadFile(c.path)
			if !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("%s: ReadFile = %q, %v; want ErrOutsideRoot", c.label, data, err)
			}
			if _, err := f.fs.Stat(c.path); !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("%s: Stat error = %v, want ErrOutsideRoot", c.label, err)
			}
			_, err = Apply(f.fs, []Change{{Path: c.path, PreimageSHA256: Absent, NewContent: []byte("pwned")}}, store)
			if !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("%s: Apply error = %v, want ErrOutsideRoot", c.label, err)
			}
			if err != nil && strings.Contains(err.Error(), f.base) {
				t.Errorf("%s: error leaks an absolute path: %v", c.label, err)
			}
		})
	}
	if diff := cmp.Diff(before, snapshot(t, f.outside)); diff != "" {
		t.Errorf("outside directory changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(rootBefore, snapshot(t, f.root)); diff != "" {
		t.Errorf("workspace changed (-before +after):\n%s", diff)
	}
}

// TestLegitimatePaths: the same FS still serves everything inside.
func TestLegitimatePaths(t *testing.T) {
	f := newFixture(t)
	mustWrite(t, filepath.Join(f.root, "sub/~tilde.txt"), "tilde")
	mustWrite(t, filepath.Join(f.root, "café.txt"), "nfc")
	mustWrite(t, filepath.Join(f.root, "cafe\u0301.txt"), "nfd")
	mustWrite(t, filepath.Join(f.root, "日本語.txt"), "ja")
	mustWrite(t, filepath.Join(f.root, "a..b.txt"), "dots")
	mustWrite(t, filepath.Join(f.root, "..hidden"), "hidden")
	mustWrite(t, filepath.Join(f.root, ".env"), "SECRET=1")
	tests := []struct{ path, want string }{
		{"inside.txt", insideText},
		{"./inside.txt", insideText},
		{"sub/a.txt", "a"},
		{"sub//a.txt", "a"},
		{"sub/./a.txt", "a"},
		{"inner_link", insideText},
		{"dir_link/a.txt", "a"},
		{"sub/~tilde.txt", "tilde"},
		{"café.txt", "nfc"},
		{"cafe\u0301.txt", "nfd"},
		{"日本語.txt", "ja"},
		{"a..b.txt", "dots"},
		{"..hidden", "hidden"},
		{".env", "SECRET=1"}, // reading secrets is the policy's call, not the FS's
		{f.root + "/inside.txt", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p := tt.path
			want := tt.want
			if filepath.IsAbs(p) {
				var err error
				if p, err = f.fs.Relative(p); err != nil {
					t.Fatalf("Relative: %v", err)
				}
				want = insideText
			}
			got, err := f.fs.ReadFile(p)
			if err != nil {
				t.Fatalf("ReadFile(%q): %v", p, err)
			}
			if string(got) != want {
				t.Errorf("ReadFile(%q) = %q, want %q", p, got, want)
			}
			if _, err := f.fs.Stat(p); err != nil {
				t.Errorf("Stat(%q): %v", p, err)
			}
		})
	}
	for _, dir := range []string{"", ".", "sub", "sub/", "dir_link"} {
		if _, _, err := f.fs.ReadDir(dir); err != nil {
			t.Errorf("ReadDir(%q): %v", dir, err)
		}
	}
}

// TestLstatOfLinkOut: Lstat describes a symlink that points out without
// following it; reading through it still fails.
func TestLstatOfLinkOut(t *testing.T) {
	f := newFixture(t)
	fi, err := f.fs.Lstat("link_out")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(link_out) mode = %v, want a symlink", fi.Mode())
	}
	if _, err := f.fs.Lstat("link_out/secret.txt"); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("Lstat(link_out/secret.txt) = %v, want ErrOutsideRoot", err)
	}
	entries, _, err := f.fs.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name == "link_out" && !e.Symlink {
			t.Errorf("ReadDir shows link_out as %v, want a symlink", e.Mode)
		}
	}
}

func TestRelative(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		in, want string
		outside  bool
	}{
		{f.root, ".", false},
		{f.root + "/sub/a.txt", "sub/a.txt", false},
		{f.root + "/sub/../inside.txt", "inside.txt", false},
		{f.root + "/../outside/secret.txt", "", true},
		{f.outside, "", true},
		{f.root + "x/y", "", true},
		{"/etc/passwd", "", true},
		{"sub/a.txt", "sub/a.txt", false},
		{"../x", "", true},
	}
	for _, tt := range tests {
		got, err := f.fs.Relative(tt.in)
		if tt.outside != errors.Is(err, ErrOutsideRoot) || (!tt.outside && err != nil) {
			t.Errorf("Relative(%q) error = %v, outside want %v", tt.in, err, tt.outside)
		}
		if got != tt.want {
			t.Errorf("Relative(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), f.base) {
			t.Errorf("Relative error leaks the absolute path: %v", err)
		}
	}
}
