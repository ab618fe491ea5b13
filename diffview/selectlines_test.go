package diffview

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// everyThird rewrites every third line of twelve: the changes are closer
// than twice the context, so git (and diffview) make them one hunk, which
// per-hunk selection cannot split.
const everyThirdOld = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\n"
const everyThirdNew = "l1\nl2\nL3\nl4\nl5\nL6\nl7\nl8\nL9\nl10\nl11\nL12\n"

// changeIndexes returns the indexes in h.Lines of lines with op, in order,
// matching their text.
func lineIndex(t *testing.T, h Hunk, op Op, text string) int {
	t.Helper()
	for i, l := range h.Lines {
		if l.Op == op && l.Text == text {
			return i
		}
	}
	t.Fatalf("no %s line %q in the hunk", op, text)
	return -1
}

func TestSelectLines(t *testing.T) {
	fd, err := Diff(Side{Path: "f", Content: []byte(everyThirdOld)}, Side{Path: "f", Content: []byte(everyThirdNew)}, Options{})
	if err != nil || len(fd.Hunks) != 1 {
		t.Fatalf("want one hunk: %v %d", err, len(fd.Hunks))
	}
	requireTools(t)
	h := fd.Hunks[0]
	at := func(op Op, text string) int { return lineIndex(t, h, op, text) }
	tests := []struct {
		name  string
		refs  []LineRef
		want  string
		added int
		del   int
	}{
		{"one rewrite", []LineRef{{Hunk: 0, Lines: []int{at(OpDelete, "l6"), at(OpAdd, "L6")}}},
			strings.Replace(everyThirdOld, "l6\n", "L6\n", 1), 1, 1},
		{"two additions, old lines kept", []LineRef{{Hunk: 0, Lines: []int{at(OpAdd, "L3"), at(OpAdd, "L9")}}},
			strings.Replace(strings.Replace(everyThirdOld, "l3\n", "l3\nL3\n", 1), "l9\n", "l9\nL9\n", 1), 2, 0},
		{"a deletion only", []LineRef{{Hunk: 0, Lines: []int{at(OpDelete, "l12")}}},
			strings.Replace(everyThirdOld, "l12\n", "", 1), 0, 1},
		{"whole hunk by nil lines", []LineRef{{Hunk: 0}}, everyThirdNew, 4, 4},
		{"order does not matter", []LineRef{{Hunk: 0, Lines: []int{at(OpAdd, "L6"), at(OpDelete, "l6")}}},
			strings.Replace(everyThirdOld, "l6\n", "L6\n", 1), 1, 1},
		{"nothing", nil, everyThirdOld, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			part, err := SelectLines(fd, tt.refs)
			if err != nil {
				t.Fatal(err)
			}
			checkNumbering(t, part)
			got, err := Apply([]byte(everyThirdOld), part)
			if err != nil || string(got) != tt.want {
				t.Fatalf("apply: %v\n%s", err, cmp.Diff(tt.want, string(got)))
			}
			checkLinesAt(t, part, []byte(everyThirdOld), got)
			if part.Stats.Added != tt.added || part.Stats.Deleted != tt.del {
				t.Fatalf("stats %+v, want +%d -%d", part.Stats, tt.added, tt.del)
			}
			// The narrowed diff is a real patch: git applies it the same way.
			if len(part.Hunks) > 0 {
				viaGit, _ := applyExternal(t, externals[0], pair{old: Side{Path: "f", Content: []byte(everyThirdOld)},
					new: Side{Path: "f"}}, Unified(part))
				if string(viaGit) != tt.want {
					t.Fatalf("git apply:\n%s", cmp.Diff(tt.want, string(viaGit)))
				}
			}
		})
	}
}

// TestSelectLinesRefused: every malformed choice is refused as invalid,
// never narrowed to something else.
func TestSelectLinesRefused(t *testing.T) {
	fd, err := Diff(Side{Path: "f", Content: []byte(everyThirdOld)}, Side{Path: "f", Content: []byte(everyThirdNew)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := lineIndex(t, fd.Hunks[0], OpContext, "l1")
	add := lineIndex(t, fd.Hunks[0], OpAdd, "L3")
	noEOL, err := Diff(Side{Path: "g", Content: []byte("a\nb")}, Side{Path: "g", Content: []byte("a\nb\nc\n")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		fd   FileDiff
		refs []LineRef
		want string
	}{
		{"hunk out of range", fd, []LineRef{{Hunk: 1}}, "hunk index 1"},
		{"negative hunk", fd, []LineRef{{Hunk: -1}}, "hunk index -1"},
		{"hunk twice", fd, []LineRef{{Hunk: 0}, {Hunk: 0, Lines: []int{add}}}, "hunk index 0"},
		{"line past the hunk", fd, []LineRef{{Hunk: 0, Lines: []int{len(fd.Hunks[0].Lines)}}}, "not 16"},
		{"negative line", fd, []LineRef{{Hunk: 0, Lines: []int{-1}}}, "not -1"},
		{"line twice", fd, []LineRef{{Hunk: 0, Lines: []int{add, add}}}, "named twice"},
		{"context line", fd, []LineRef{{Hunk: 0, Lines: []int{ctx}}}, "unchanged context"},
		// "b" has no newline; keeping it and adding "c" after it would write "bc".
		{"joined to a line without newline", noEOL, []LineRef{{Hunk: 0, Lines: []int{lineIndex(t, noEOL.Hunks[0], OpAdd, "c")}}}, "no newline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := SelectLines(tt.fd, tt.refs)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalid with %q", err, tt.want)
			}
		})
	}
	bin, _ := Diff(Side{Path: "b", Content: []byte("a\x00")}, Side{Path: "b", Content: []byte("b\x00")}, Options{})
	if _, err := SelectLines(bin, []LineRef{{Hunk: 0}}); !errors.Is(err, ErrNotText) {
		t.Fatalf("binary: %v", err)
	}
}

// TestSelectLinesDeletedFile: keeping some lines of a deleted file keeps
// the file, modified.
func TestSelectLinesDeletedFile(t *testing.T) {
	fd, err := Diff(Side{Path: "d", Content: []byte("a\nb\nc\n")}, Side{}, Options{})
	if err != nil || fd.Status != StatusDeleted {
		t.Fatal(err, fd.Status)
	}
	part, err := SelectLines(fd, []LineRef{{Hunk: 0, Lines: []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Apply([]byte("a\nb\nc\n"), part)
	if err != nil || string(got) != "a\nc\n" || part.Status != StatusModified || !part.New.Exists {
		t.Fatalf("%v %q %+v", err, got, part)
	}
}

// byModel is the reference the property test compares with, computed from
// the original hunks' line numbers alone: the old lines, without the chosen
// deletions, with each chosen addition inserted after the old lines that
// precede it in its hunk. ok is false when a line without newline would end
// up in the middle of the result (SelectLines must refuse that choice).
func byModel(old []byte, hunks []Hunk, chosen map[[2]int]bool) (out []byte, ok bool) {
	lines := splitLines(string(old))
	deleted := map[int]bool{}
	inserts := map[int][]string{}
	for hi, h := range hunks {
		pos := rangeStart(h.OldStart, h.OldLines)
		for li, l := range h.Lines {
			switch {
			case l.Op != OpAdd:
				if l.Op == OpDelete && chosen[[2]int{hi, li}] {
					deleted[l.Old] = true
				}
				pos++
			case chosen[[2]int{hi, li}]:
				inserts[pos] = append(inserts[pos], l.exact())
			}
		}
	}
	var res []string
	for p := 0; p <= len(lines); p++ {
		res = append(res, inserts[p]...)
		if p < len(lines) && !deleted[p+1] {
			res = append(res, lines[p])
		}
	}
	for i := 0; i < len(res)-1; i++ {
		if !strings.HasSuffix(res[i], "\n") {
			return nil, false
		}
	}
	return []byte(strings.Join(res, "")), true
}

// randomLineChoice picks, per hunk, nothing, the whole hunk, or a random
// non-empty subset of its changed lines in random order.
func randomLineChoice(r *rand.Rand, fd FileDiff) ([]LineRef, map[[2]int]bool) {
	var refs []LineRef
	chosen := map[[2]int]bool{}
	for hi, h := range fd.Hunks {
		var changes []int
		for li, l := range h.Lines {
			if l.Op != OpContext {
				changes = append(changes, li)
			}
		}
		switch r.IntN(3) {
		case 0:
			continue
		case 1:
			refs = append(refs, LineRef{Hunk: hi})
			for _, li := range changes {
				chosen[[2]int{hi, li}] = true
			}
		default:
			r.Shuffle(len(changes), func(i, j int) { changes[i], changes[j] = changes[j], changes[i] })
			pick := changes[:1+r.IntN(len(changes))]
			refs = append(refs, LineRef{Hunk: hi, Lines: slices.Clone(pick)})
			for _, li := range pick {
				chosen[[2]int{hi, li}] = true
			}
		}
	}
	r.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
	return refs, chosen
}

// checkLineChoice is the property: a choice the model can write is
// accepted, applies to the old file (also after a JSON round trip) and
// yields exactly the model's result; one it cannot is refused as invalid.
func checkLineChoice(t *testing.T, name string, old []byte, fd FileDiff, refs []LineRef, chosen map[[2]int]bool) bool {
	t.Helper()
	want, ok := byModel(old, fd.Hunks, chosen)
	part, err := SelectLines(fd, refs)
	if !ok {
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("%s %v: a choice that joins lines was not refused: %v", name, refs, err)
		}
		return false
	}
	if err != nil {
		t.Fatalf("%s %v: %v", name, refs, err)
	}
	checkNumbering(t, part)
	got, err := Apply(old, part)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s %v: %v\n%s", name, refs, err, cmp.Diff(string(want), string(got)))
	}
	checkLinesAt(t, part, old, got)
	raw, _ := json.Marshal(part)
	var back FileDiff
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if again, err := Apply(old, back); err != nil || !bytes.Equal(again, want) {
		t.Fatalf("%s: after JSON: %v", name, err)
	}
	return true
}

func TestSelectLinesProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 21))
	accepted := 0
	pairs := append(randomPairs(200), realPairs(t)...)
	for _, p := range pairs {
		for round := 0; round < 4; round++ {
			fd, err := Diff(p.old, p.new, Options{Context: 1 + r.IntN(3)})
			if err != nil {
				t.Fatal(err)
			}
			if !fd.IsText() || len(fd.Hunks) == 0 {
				break
			}
			refs, chosen := randomLineChoice(r, fd)
			if checkLineChoice(t, p.name, p.old.Content, fd, refs, chosen) {
				accepted++
			}
			// Every changed line chosen is the whole change.
			all := make([]LineRef, len(fd.Hunks))
			for i := range all {
				all[i] = LineRef{Hunk: i}
			}
			if part, err := SelectLines(fd, all); err != nil {
				t.Fatal(err)
			} else if got, err := Apply(p.old.Content, part); err != nil || !bytes.Equal(got, p.new.Content) {
				t.Fatalf("%s: all hunks: %v", p.name, err)
			}
		}
	}
	if accepted < 300 {
		t.Fatalf("only %d line choices accepted; the generator no longer exercises SelectLines", accepted)
	}
}

// FuzzSelectLines: for any two texts and any choice of lines, SelectLines
// either refuses a choice the model cannot write or yields the model's
// result exactly.
func FuzzSelectLines(f *testing.F) {
	fuzzSeeds(f)
	f.Add([]byte(everyThirdOld), []byte(everyThirdNew), uint16(11))
	f.Add([]byte("a\nb"), []byte("a\nb\nc\n"), uint16(2))
	f.Fuzz(func(t *testing.T, old, new []byte, seed uint16) {
		fd, err := Diff(Side{Path: "f", Content: old}, Side{Path: "f", Content: new}, Options{Context: int(seed%4) - 1})
		if err != nil || !fd.IsText() || len(fd.Hunks) == 0 {
			return
		}
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		refs, chosen := randomLineChoice(r, fd)
		checkLineChoice(t, "fuzz", old, fd, refs, chosen)
	})
}
