package diffview

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	f.Add([]byte(""), []byte("a\n"), uint16(3))
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc"), uint16(0))
	f.Add([]byte("a\r\nb\r\n"), []byte("a\nb\r\n"), uint16(1))
	f.Add([]byte("x\xff\n\xfe"), []byte("x\xff\ny\n"), uint16(2))
	f.Add([]byte("🎉 a b\nc\n"), []byte("🎊 a c\nc\n"), uint16(5))
	f.Add([]byte("a\nb\na\nb\na\n"), []byte("b\na\nb\n"), uint16(7))
	f.Add([]byte("\n\n\n"), []byte("\r\n\r"), uint16(1))
}

// FuzzDiffApply: for any two texts, the diff applies back exactly with the
// own applier (directly and after a JSON round trip), every line is numbered
// consistently, and every subset of hunks applies too.
func FuzzDiffApply(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, old, new []byte, sel uint16) {
		fd, err := Diff(Side{Path: "f", Content: old}, Side{Path: "f", Content: new},
			Options{Context: int(sel%5) - 1})
		if err != nil {
			t.Fatal(err)
		}
		if fd.Binary != nil {
			if _, err := Apply(old, fd); !errors.Is(err, ErrNotText) && !bytes.Equal(old, new) {
				t.Fatalf("binary apply: %v", err)
			}
			return
		}
		got, err := Apply(old, fd)
		if err != nil || !bytes.Equal(got, new) {
			t.Fatalf("apply: %v\n got %q\nwant %q", err, got, new)
		}
		checkNumbering(t, fd)
		raw, err := json.Marshal(fd)
		if err != nil {
			t.Fatal(err)
		}
		var back FileDiff
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if got, err := Apply(old, back); err != nil || !bytes.Equal(got, new) {
			t.Fatalf("apply after JSON: %v", err)
		}
		var keep []int
		for i := range fd.Hunks {
			if sel&(1<<(i%16)) != 0 {
				keep = append(keep, i)
			}
		}
		part, err := Select(fd, keep)
		if err != nil {
			t.Fatal(err)
		}
		checkNumbering(t, part)
		got, err = Apply(old, part)
		if want := applyHunksByHand(old, fd.Hunks, keep); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("apply selection %v: %v\n got %q\nwant %q", keep, err, got, want)
		}
		_ = SideBySide(fd)
	})
}

// checkNumbering verifies headers and per-line numbers agree.
func checkNumbering(t *testing.T, fd FileDiff) {
	t.Helper()
	for hi, h := range fd.Hunks {
		o, n := rangeStart(h.OldStart, h.OldLines), rangeStart(h.NewStart, h.NewLines)
		oc, nc := 0, 0
		for _, l := range h.Lines {
			if l.Op != OpAdd {
				o++
				oc++
				if l.Old != o {
					t.Fatalf("hunk %d: old number %d, want %d", hi, l.Old, o)
				}
			}
			if l.Op != OpDelete {
				n++
				nc++
				if l.New != n {
					t.Fatalf("hunk %d: new number %d, want %d", hi, l.New, n)
				}
			}
		}
		if oc != h.OldLines || nc != h.NewLines {
			t.Fatalf("hunk %d: counts %d/%d, header %d/%d", hi, oc, nc, h.OldLines, h.NewLines)
		}
	}
}

// FuzzWordSpans: spans stay inside their line (in UTF-16 units), are
// ordered and never empty.
func FuzzWordSpans(f *testing.F) {
	f.Add("call(a, b)", "call(a, c)")
	f.Add("🎉 x", "🎊 x")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		fd, err := Diff(Side{Path: "f", Content: []byte(a + "\n")}, Side{Path: "f", Content: []byte(b + "\n")}, Options{})
		if err != nil || fd.Binary != nil {
			return
		}
		for _, h := range fd.Hunks {
			for _, l := range h.Lines {
				end := 0
				for _, s := range l.Spans {
					if s.Start < end || s.End <= s.Start || s.End > utf16Len(l.Text) {
						t.Fatalf("bad span %+v in %q (spans %v)", s, l.Text, l.Spans)
					}
					end = s.End
				}
			}
		}
	})
}
