package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// fixture is a workspace root next to an "outside" directory, with every
// kind of link out that the escape corpus refers to.
type fixture struct {
	base, root, outside string
	fs                  *FS
}

const (
	outsideSecret = "OUTSIDE-SECRET"
	insideText    = "INSIDE"
)

func newFixture(t testing.TB) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{"outside/dir", "root/sub/deeper"} {
		mustMkdir(t, filepath.Join(base, d))
	}
	mustWrite(t, filepath.Join(f.outside, "secret.txt"), outsideSecret)
	mustWrite(t, filepath.Join(f.outside, "f.txt"), outsideSecret)
	mustWrite(t, filepath.Join(f.root, "inside.txt"), insideText)
	mustWrite(t, filepath.Join(f.root, "sub/a.txt"), "a")
	links := map[string]string{
		"link_out":      "../outside",
		"link_out_file": "../outside/secret.txt",
		"abs_link":      filepath.Join(f.outside, "secret.txt"),
		"abs_link_dir":  f.outside,
		"etc_link":      "/etc",
		"sub/up":        "../..",
		"sub/up2":       "../../outside",
		"chain1":        "chain2",
		"chain2":        "link_out",
		"loop1":         "loop2",
		"loop2":         "loop1",
		"inner_link":    "inside.txt",
		"dir_link":      "sub",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(f.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"hard", "sub/hard2"} {
		if err := os.Link(filepath.Join(f.outside, "secret.txt"), filepath.Join(f.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	f.fs, err = Open(f.root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.fs.Close() })
	return f
}

func mustMkdir(t testing.TB, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t testing.TB, p, content string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot maps every entry under dir to its kind and content, so a test can
// assert that nothing changed.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link:" + target
		case d.IsDir():
			out[rel] = "dir"
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, _ := d.Info()
			out[rel] = info.Mode().String() + ":" + string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func hasTemp(t testing.TB, dir string) bool {
	for _, k := range keys(snapshot(t, dir)) {
		if strings.Contains(k, ".agenthub-") {
			return true
		}
	}
	return false
}
