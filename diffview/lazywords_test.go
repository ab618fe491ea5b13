package diffview

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestWordSpansPerHunkMatchEager checks the lazy path the UI's API uses
// (Diff with NoWords, then WordSpans for the hunks in view) marks exactly
// what the eager Diff marks, hunk by hunk, and leaves the hunk it was given
// untouched (a stored diff is shared between readers).
func TestWordSpansPerHunkMatchEager(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	small := sourceLike(r, 3_000)
	edited, _ := rewrite(r, small, 0.2)
	for i := range edited { // lines that share words with their old version
		if i%5 == 0 {
			edited[i] = fmt.Sprintf("\tv%d := compute(%d, \"omega\")\n", i, i)
		}
	}
	cases := []struct {
		name     string
		old, new []byte
	}{
		{"word edits", []byte("a b c\nkeep\nx := 1\n"), []byte("a B c\nkeep\nx := 2\ny\n")},
		{"more deleted than added", []byte("one two\nthree four\nfive\n"), []byte("one 2\n")},
		{"source-like, 20 % rewritten", joinLines(small), joinLines(edited)},
	}
	opts := Options{MaxRows: 1 << 22, Timeout: 2 * time.Minute}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eager := mustDiff(t, Side{Path: "f", Content: c.old}, Side{Path: "f", Content: c.new}, opts)
			lazyOpts := opts
			lazyOpts.NoWords = true
			lazy := mustDiff(t, Side{Path: "f", Content: c.old}, Side{Path: "f", Content: c.new}, lazyOpts)
			if len(eager.Hunks) != len(lazy.Hunks) || len(eager.Hunks) == 0 {
				t.Fatalf("hunks: eager %d, lazy %d", len(eager.Hunks), len(lazy.Hunks))
			}
			spans := 0
			for i, h := range lazy.Hunks {
				before := fmt.Sprint(h)
				got, complete := WordSpans(h, time.Minute)
				if !complete {
					t.Fatalf("hunk %d: stopped before its deadline", i)
				}
				if !reflect.DeepEqual(got, eager.Hunks[i]) {
					t.Fatalf("hunk %d:\nlazy  %+v\neager %+v", i, got, eager.Hunks[i])
				}
				if fmt.Sprint(h) != before {
					t.Fatalf("hunk %d: WordSpans changed the hunk it was given", i)
				}
				for _, l := range got.Lines {
					spans += len(l.Spans)
				}
			}
			if spans == 0 {
				t.Fatal("no spans at all: the case does not exercise word highlighting")
			}
		})
	}
}

// TestWordSpansStopsAtDeadline: a hunk whose pairs outlast the budget comes
// back incomplete, never blocking the caller past it.
func TestWordSpansStopsAtDeadline(t *testing.T) {
	old, new, _ := benchPair(benchCase{"t", 20_000, 0.5})
	fd := mustDiff(t, Side{Path: "f", Content: old}, Side{Path: "f", Content: new},
		Options{MaxRows: 1 << 22, Timeout: 2 * time.Minute, NoWords: true, Context: 1 << 20})
	if len(fd.Hunks) != 1 {
		t.Fatalf("want one hunk, got %d", len(fd.Hunks))
	}
	if _, complete := WordSpans(fd.Hunks[0], -time.Second); complete {
		t.Fatal("an expired budget still reported complete")
	}
}
