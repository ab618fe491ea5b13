package diffview

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func goldenCases() []pair {
	code := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"
	long := strings.Repeat("same line\n", 0)
	for i := 0; i < 30; i++ {
		long += "line " + string(rune('a'+i%26)) + strings.Repeat("!", i/26) + "\n"
	}
	return []pair{
		{"modified-two-hunks", Side{Path: "notes.txt", Content: []byte(long)},
			Side{Path: "notes.txt", Content: []byte(strings.Replace(strings.Replace(long, "line c\n", "line C\n", 1), "line x\n", "line x\ninserted\n", 1))}},
		{"crlf-mixed", Side{Path: "win.txt", Content: []byte("a\r\nb\r\nc\nd\r\n")},
			Side{Path: "win.txt", Content: []byte("a\r\nB\r\nc\r\nd\r\n")}},
		{"no-eol-added", Side{Path: "f.txt", Content: []byte("x\ny")}, Side{Path: "f.txt", Content: []byte("x\ny\n")}},
		{"no-eol-removed", Side{Path: "f.txt", Content: []byte("x\ny\n")}, Side{Path: "f.txt", Content: []byte("x\nz")}},
		{"new-file", Side{}, Side{Path: "cmd/main.go", Content: []byte(code)}},
		{"new-empty-file", Side{}, Side{Path: "empty.txt"}},
		{"deleted-file", Side{Path: "cmd/main.go", Content: []byte(code)}, Side{}},
		{"rename-with-edit", Side{Path: "old name.go", Content: []byte(code)},
			Side{Path: "new/name.go", Content: []byte(strings.Replace(code, "hello", "hello, world", 1))}},
		{"mode-change", Side{Path: "run.sh", Content: []byte("#!/bin/sh\necho hi\n")},
			Side{Path: "run.sh", Mode: ModeExecutable, Content: []byte("#!/bin/sh\necho hi\n")}},
		{"unicode-spans", Side{Path: "i18n.txt", Content: []byte("greeting = \"héllo 🎉 wörld\"\n")},
			Side{Path: "i18n.txt", Content: []byte("greeting = \"héllo 🎊 world\"\n")}},
		{"invalid-utf8", Side{Path: "latin1.txt", Content: []byte("caf\xe9\nok\n")},
			Side{Path: "latin1.txt", Content: []byte("caf\xe9!\nok\n")}},
		{"binary", Side{Path: "logo.png", Content: []byte("\x89PNG\r\n\x1a\n\x00\x00")},
			Side{Path: "logo.png", Content: []byte("\x89PNG\r\n\x1a\n\x00\x01\x02")}},
		{"emptied", Side{Path: "f.txt", Content: []byte("only\n")}, Side{Path: "f.txt"}},
	}
}

// TestGolden pins the rendered output (unified text, the JSON model and the
// side-by-side rows) of representative changes. Run with -update to rewrite.
func TestGolden(t *testing.T) {
	for _, p := range goldenCases() {
		t.Run(p.name, func(t *testing.T) {
			fd := mustDiff(t, p.old, p.new, Options{})
			var got bytes.Buffer
			got.WriteString("==== unified\n")
			got.Write(Unified(fd))
			got.WriteString("==== filediff.json\n")
			writeJSON(t, &got, fd)
			got.WriteString("==== sidebyside.json\n")
			writeJSON(t, &got, SideBySide(fd))
			file := filepath.Join("testdata", "golden", p.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("missing golden file (run go test -run TestGolden -update): %v", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Fatalf("golden mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func writeJSON(t *testing.T, buf *bytes.Buffer, v any) {
	t.Helper()
	enc := json.NewEncoder(buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
}

// TestGoldenCasesApply runs the golden cases through the real tools too, so
// the pinned text is also known to be a valid patch.
func TestGoldenCasesApply(t *testing.T) {
	requireTools(t)
	for _, p := range goldenCases() {
		t.Run(p.name, func(t *testing.T) {
			fd := mustDiff(t, p.old, p.new, Options{})
			if !fd.IsText() {
				return // binary: covered by TestBinary
			}
			checkOwnApply(t, p, fd)
			for _, tool := range externals {
				got, _ := applyExternal(t, tool, p, Unified(fd))
				if p.new.Path != "" && !bytes.Equal(got, p.new.Content) {
					t.Fatalf("%s: got %q, want %q", tool.name, got, p.new.Content)
				}
			}
		})
	}
}

// TestMultiFilePatch applies one patch holding an added, a deleted, a renamed
// and edited, a mode-changed and a modified file with both real tools.
func TestMultiFilePatch(t *testing.T) {
	requireTools(t)
	var pairs []pair
	for _, p := range goldenCases() {
		if p.name != "binary" && p.name != "rename-with-edit" {
			pairs = append(pairs, p)
		}
	}
	pairs = append(pairs, pair{"rename", Side{Path: "old name.go", Content: []byte("x\n")},
		Side{Path: "renamed/name.go", Content: []byte("x\ny\n")}})
	seen := map[string]bool{}
	var files []FileDiff
	var olds, news []Side
	for _, p := range pairs {
		if seen[p.old.Path] || seen[p.new.Path] {
			continue // one change per path in a single patch
		}
		seen[p.old.Path], seen[p.new.Path] = p.old.Path != "", p.new.Path != ""
		files = append(files, mustDiff(t, p.old, p.new, Options{}))
		olds, news = append(olds, p.old), append(news, p.new)
	}
	patch := Unified(files...)
	for _, tool := range externals {
		dir := t.TempDir()
		for _, s := range olds {
			if s.Path != "" {
				writeSide(t, dir, s)
			}
		}
		patchFile := filepath.Join(t.TempDir(), "all.patch")
		if err := os.WriteFile(patchFile, patch, 0o644); err != nil {
			t.Fatal(err)
		}
		argv := tool.argv(patchFile)
		run(t, dir, argv...)
		run(t, dir, slicesWithout(argv, "--check", "--dry-run")...)
		for i, s := range news {
			if s.Path == "" {
				if _, err := os.Stat(filepath.Join(dir, olds[i].Path)); !os.IsNotExist(err) {
					t.Errorf("%s: %s not deleted", tool.name, olds[i].Path)
				}
				continue
			}
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s.Path)))
			if err != nil || !bytes.Equal(got, s.Content) {
				t.Errorf("%s: %s = %q (%v), want %q", tool.name, s.Path, got, err, s.Content)
			}
		}
	}
	if len(files) < 8 {
		t.Fatalf("only %d files in the patch", len(files))
	}
}

func slicesWithout(argv []string, drop ...string) []string {
	var out []string
	for _, a := range argv {
		if !slices.Contains(drop, a) {
			out = append(out, a)
		}
	}
	return out
}
