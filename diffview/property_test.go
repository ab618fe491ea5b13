package diffview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// randomText builds a text from a small vocabulary (so lines repeat, which
// is what defeats naive anchoring), with LF, CRLF and, rarely, no final
// newline, plus unicode and invalid UTF-8 lines.
func randomText(r *rand.Rand, lines int) []byte {
	vocab := []string{"", "}", "\treturn nil", "if err != nil {", "x := 1", "héllo wörld",
		"日本語のテキスト", "emoji 🎉 line", "a b c", "\xff\xfe broken utf8", "trailing space ", "\r lone cr"}
	var b bytes.Buffer
	for i := 0; i < lines; i++ {
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, "line %d %d", i, r.IntN(1000))
		} else {
			b.WriteString(vocab[r.IntN(len(vocab))])
		}
		b.WriteString(pickEOL(r))
	}
	out := b.Bytes()
	if len(out) > 0 && r.IntN(4) == 0 {
		out = bytes.TrimRight(out, "\r\n")
	}
	return out
}

func pickEOL(r *rand.Rand) string {
	if r.IntN(5) == 0 {
		return "\r\n"
	}
	return "\n"
}

// mutate applies random line edits: delete, insert, replace, move, flip EOL.
func mutate(r *rand.Rand, text []byte) []byte {
	lines := splitLines(string(text))
	edits := 1 + r.IntN(6)
	for e := 0; e < edits; e++ {
		n := len(lines)
		at := 0
		if n > 0 {
			at = r.IntN(n)
		}
		switch op := r.IntN(5); {
		case op == 0 && n > 0:
			lines = append(lines[:at:at], lines[at+1:]...)
		case op == 1:
			ins := string(randomText(r, 1+r.IntN(4)))
			if ins != "" && !strings.HasSuffix(ins, "\n") {
				ins += "\n"
			}
			lines = append(lines[:at:at], append([]string{ins}, lines[at:]...)...)
		case op == 2 && n > 0:
			lines[at] = strings.Replace(lines[at], "line", "LINE changed", 1) + "x\n"
		case op == 3 && n > 2:
			moved := lines[at]
			lines = append(lines[:at:at], lines[at+1:]...)
			to := r.IntN(len(lines))
			lines = append(lines[:to:to], append([]string{moved}, lines[to:]...)...)
		case n > 0:
			if body, eol := cutEOL(lines[at]); eol == EOLLF {
				lines[at] = body + "\r\n"
			} else if eol == EOLCRLF {
				lines[at] = body + "\n"
			}
		}
	}
	// A line without newline may only be last; give moved ones a newline.
	for i := 0; i < len(lines)-1; i++ {
		if !strings.HasSuffix(lines[i], "\n") {
			lines[i] += "\n"
		}
	}
	return []byte(strings.Join(lines, ""))
}

func randomPairs(n int) []pair {
	r := rand.New(rand.NewPCG(5, 1))
	var out []pair
	for i := 0; i < n; i++ {
		old := randomText(r, r.IntN(40))
		p := pair{name: fmt.Sprintf("random-%d", i),
			old: Side{Path: "dir/file.txt", Content: old},
			new: Side{Path: "dir/file.txt", Content: mutate(r, old)}}
		switch i % 10 {
		case 7:
			p.new.Path = "dir/renamed.txt"
		case 8:
			p.new.Mode = ModeExecutable
		}
		out = append(out, p)
	}
	return out
}

// realPairs edits real Go source the way agents do: delete a function, move
// a block, rename an identifier, convert to CRLF, drop the final newline.
func realPairs(t *testing.T) []pair {
	t.Helper()
	var out []pair
	for _, rel := range []string{"src/strings/strings.go", "src/bufio/scan.go", "src/sort/sort.go"} {
		src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), rel))
		if err != nil {
			t.Fatalf("read GOROOT source: %v", err)
		}
		s := string(src)
		base := filepath.Base(rel)
		funcs := strings.Split(s, "\nfunc ")
		moved := funcs[0] + "\nfunc " + strings.Join(append(append([]string{}, funcs[2:]...), funcs[1]), "\nfunc ")
		out = append(out,
			pair{name: base + "-delete-func", new: Side{Path: rel, Content: []byte(strings.Replace(s, "\nfunc "+funcs[3], "", 1))}},
			pair{name: base + "-move-func", new: Side{Path: rel, Content: []byte(moved)}},
			pair{name: base + "-rename-ident", new: Side{Path: rel, Content: []byte(strings.ReplaceAll(s, " int", " int64"))}},
			pair{name: base + "-crlf", new: Side{Path: rel, Content: []byte(strings.ReplaceAll(s, "\n", "\r\n"))}},
			pair{name: base + "-no-eol", new: Side{Path: rel, Content: []byte(strings.TrimRight(s, "\n"))}},
			pair{name: base + "-new-file", new: Side{Path: "copy/" + base, Content: src}},
			pair{name: base + "-deleted", old: Side{Path: rel, Content: src}},
		)
		for i := range out[len(out)-7 : len(out)-2] {
			out[len(out)-7+i].old = Side{Path: rel, Content: src}
		}
	}
	return out
}

// TestPatchAppliesEverywhere is the central property: for random and
// real-world pairs, our unified patch applied to the old file yields exactly
// the new file with git apply, GNU patch and our own applier (also after a
// JSON round trip of the FileDiff).
func TestPatchAppliesEverywhere(t *testing.T) {
	requireTools(t)
	pairs := append(randomPairs(60), realPairs(t)...)
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			fd, err := Diff(p.old, p.new, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !fd.IsText() || fd.Degraded != nil {
				t.Fatalf("unexpected marker: binary %v omitted %v degraded %v", fd.Binary, fd.Omitted, fd.Degraded)
			}
			checkOwnApply(t, p, fd)
			patch := Unified(fd)
			for _, tool := range externals {
				got, perm := applyExternal(t, tool, p, patch)
				if diff := cmp.Diff(string(p.new.Content), string(got)); p.new.Path != "" && diff != "" {
					t.Fatalf("%s result differs (-want +got):\n%s\npatch:\n%s", tool.name, diff, patch)
				}
				if p.new.Mode == ModeExecutable && perm&0o100 == 0 {
					t.Errorf("%s: mode change not applied: %v", tool.name, perm)
				}
			}
		})
	}
}

func checkOwnApply(t *testing.T, p pair, fd FileDiff) {
	t.Helper()
	raw, err := json.Marshal(fd)
	if err != nil {
		t.Fatal(err)
	}
	var back FileDiff
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]FileDiff{"direct": fd, "json": back} {
		got, err := Apply(p.old.Content, d)
		if err != nil {
			t.Fatalf("own apply (%s): %v", name, err)
		}
		if !bytes.Equal(got, p.new.Content) {
			t.Fatalf("own apply (%s) differs:\n%s", name, cmp.Diff(string(p.new.Content), string(got)))
		}
	}
	checkNumbering(t, fd)
	checkLinesAt(t, fd, p.old.Content, p.new.Content)
	if !bytes.Equal(Unified(back), Unified(fd)) {
		t.Fatal("unified text changed after a JSON round trip")
	}
}

// TestSelectProperty: applying the patch of a hunk subset equals replacing
// exactly those hunks' old lines with their new lines, computed here
// independently of Select, and git apply agrees with our applier.
func TestSelectProperty(t *testing.T) {
	requireTools(t)
	r := rand.New(rand.NewPCG(9, 9))
	checked := 0
	for _, p := range append(randomPairs(60), realPairs(t)...) {
		fd, err := Diff(p.old, p.new, Options{Context: 1 + r.IntN(3)})
		if err != nil {
			t.Fatal(err)
		}
		if len(fd.Hunks) < 2 {
			continue
		}
		var keep []int
		for i := range fd.Hunks {
			if r.IntN(2) == 0 {
				keep = append(keep, i)
			}
		}
		sel, err := Select(fd, keep)
		if err != nil {
			t.Fatal(err)
		}
		want := applyHunksByHand(p.old.Content, fd.Hunks, keep)
		got, err := Apply(p.old.Content, sel)
		if err != nil {
			t.Fatalf("%s keep %v: %v", p.name, keep, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s keep %v:\n%s", p.name, keep, cmp.Diff(string(want), string(got)))
		}
		checkNumbering(t, sel)
		checkLinesAt(t, sel, p.old.Content, got)
		if p.old.Path == p.new.Path && p.old.Mode == p.new.Mode && len(keep) > 0 {
			viaGit, _ := applyExternal(t, externals[0], pair{old: p.old, new: Side{Path: p.old.Path}}, Unified(sel))
			if !bytes.Equal(viaGit, want) {
				t.Fatalf("%s keep %v: git apply differs:\n%s", p.name, keep, cmp.Diff(string(want), string(viaGit)))
			}
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d multi-hunk cases; the generator no longer exercises Select", checked)
	}
}

// applyHunksByHand walks the old lines and, for each original hunk, emits its
// new side when selected and its old side otherwise.
func applyHunksByHand(old []byte, hunks []Hunk, keep []int) []byte {
	selected := map[int]bool{}
	for _, k := range keep {
		selected[k] = true
	}
	lines := splitLines(string(old))
	var out []byte
	cur := 0
	for i, h := range hunks {
		for ; cur < rangeStart(h.OldStart, h.OldLines); cur++ {
			out = append(out, lines[cur]...)
		}
		for _, l := range h.Lines {
			keepLine := l.Op == OpContext || (selected[i] && l.Op == OpAdd) || (!selected[i] && l.Op == OpDelete)
			if keepLine {
				out = l.appendExact(out)
			}
		}
		cur += h.OldLines
	}
	for ; cur < len(lines); cur++ {
		out = append(out, lines[cur]...)
	}
	return out
}

// checkLinesAt verifies every line number against the real files: old
// numbers index the old content, new numbers the result.
func checkLinesAt(t *testing.T, fd FileDiff, old, new []byte) {
	t.Helper()
	ol, nl := splitLines(string(old)), splitLines(string(new))
	for hi, h := range fd.Hunks {
		for _, l := range h.Lines {
			if l.Old > 0 && (l.Old > len(ol) || ol[l.Old-1] != l.exact()) {
				t.Fatalf("hunk %d: old line %d is not %q", hi, l.Old, l.exact())
			}
			if l.New > 0 && (l.New > len(nl) || nl[l.New-1] != l.exact()) {
				t.Fatalf("hunk %d: new line %d is not %q", hi, l.New, l.exact())
			}
		}
	}
}
