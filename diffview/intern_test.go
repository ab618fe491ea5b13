package diffview

import (
	"fmt"
	"testing"
)

// TestInternerGivesEqualLinesEqualIds: ids are dense, in order of first
// sight, equal exactly for equal lines (also "", lines differing only in
// their terminator, and after the table grew past a too small hint).
func TestInternerGivesEqualLinesEqualIds(t *testing.T) {
	for _, hint := range []int{0, 1, 1000} {
		in := newInterner(hint)
		var lines []string
		for i := range 500 {
			lines = append(lines, fmt.Sprintf("line %d\n", i%137), fmt.Sprintf("line %d", i%137), "")
		}
		ids := in.intern(lines)
		seen := map[string]int32{}
		next := int32(0)
		for i, l := range lines {
			want, ok := seen[l]
			if !ok {
				want, seen[l] = next, next
				next++
			}
			if ids[i] != want {
				t.Fatalf("hint %d: line %d %q has id %d, want %d", hint, i, l, ids[i], want)
			}
		}
		if in.count != next {
			t.Fatalf("hint %d: %d ids, want %d", hint, in.count, next)
		}
		if again := in.intern(lines[:10]); again[0] != ids[0] || again[9] != ids[9] {
			t.Fatalf("hint %d: ids changed on a second pass", hint)
		}
	}
}

// mapInterner is the interner before: a Go map from line to id.
func mapIntern(ids map[string]int32, lines []string) []int32 {
	out := make([]int32, len(lines))
	for i, l := range lines {
		id, ok := ids[l]
		if !ok {
			id = int32(len(ids))
			ids[l] = id
		}
		out[i] = id
	}
	return out
}

// BenchmarkIntern: both sides of the 100,000-line, 1 % case, with the
// table and with the map it replaced.
func BenchmarkIntern(b *testing.B) {
	old, new, _ := benchPair(benchCases[1])
	a, c := splitLines(string(old)), splitLines(string(new))
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
			in := newInterner(len(a) + len(c))
			in.intern(a)
			in.intern(c)
		}
	})
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			ids := make(map[string]int32, len(a)+len(c))
			mapIntern(ids, a)
			mapIntern(ids, c)
		}
	})
}
