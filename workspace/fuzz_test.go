package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzResolve: whatever the path, resolution never yields a name that leaves
// the root, and the rooted FS never serves the outside files.
func FuzzResolve(f *testing.F) {
	fx := newFixture(f)
	for _, c := range loadEscapes(f, fx) {
		f.Add(c.path)
	}
	for _, s := range []string{"inside.txt", "sub/a.txt", "dir_link/a.txt", "inner_link", ".", "", "a/./b//c"} {
		f.Add(s)
	}
	secret, err := os.Stat(filepath.Join(fx.outside, "secret.txt"))
	if err != nil {
		f.Fatal(err)
	}
	outsideDir, err := os.Stat(fx.outside)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := clean("read", s, false)
		if err == nil {
			checkClean(t, s, p)
			if again, err := clean("read", p, false); err != nil || again != p {
				t.Fatalf("clean is not idempotent: %q → %q → %q, %v", s, p, again, err)
			}
		} else if !errors.Is(err, ErrOutsideRoot) {
			t.Fatalf("clean(%q) error %v is not ErrOutsideRoot", s, err)
		}
		if wp, werr := clean("read", s, true); werr == nil && (err != nil || wp != p) {
			t.Fatalf("the Windows rules accepted %q (%q) but the Unix rules gave %q, %v", s, wp, p, err)
		}
		data, err := fx.fs.ReadFile(s)
		if err == nil && strings.Contains(string(data), outsideSecret) {
			t.Fatalf("ReadFile(%q) served the outside file", s)
		}
		if fi, err := fx.fs.Stat(s); err == nil && (os.SameFile(fi, secret) || os.SameFile(fi, outsideDir)) {
			t.Fatalf("Stat(%q) reached outside the workspace", s)
		}
	})
}

func checkClean(t *testing.T, in, p string) {
	t.Helper()
	switch {
	case p == "":
		t.Fatalf("clean(%q) = empty", in)
	case strings.HasPrefix(p, "/"), strings.Contains(p, `\`), strings.IndexByte(p, 0) >= 0, !utf8.ValidString(p):
		t.Fatalf("clean(%q) = %q: absolute, backslash, NUL or invalid UTF-8", in, p)
	case len(p) > maxPathBytes:
		t.Fatalf("clean(%q) = %q: too long", in, p)
	}
	if p == "." {
		return
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.Trim(c, ". ") == "" || len(c) > maxComponentBytes {
			t.Fatalf("clean(%q) = %q: bad component %q", in, p, c)
		}
	}
	if strings.HasPrefix(p, "~") {
		t.Fatalf("clean(%q) = %q: home reference", in, p)
	}
}
