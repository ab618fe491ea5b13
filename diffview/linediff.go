package diffview

import (
	"sort"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// block is one maximal change: old lines [a0,a1) are replaced by new lines
// [b0,b1). Either range may be empty, never both.
type block struct{ a0, a1, b0, b1 int }

// maxDepth bounds the patience recursion; deeper regions go to go-diff.
const maxDepth = 64

// differ computes the change blocks between two interned line sequences.
//
// Why anchors first: go-diff's line mode is Myers' O(ND) algorithm; on a
// 100k-line file that is half rewritten it needs tens of seconds, and its
// deadline then falls back to "delete everything, insert everything". Lines
// that occur exactly once on both sides (patience diff) split the problem into
// small regions in O(n log n), and go-diff only sees what is between them.
type differ struct {
	a, b     []int32
	countA   []int32 // per line id, reused across regions and reset after use
	countB   []int32
	posA     []int32
	posB     []int32
	deadline time.Time
	dmp      *diffmatchpatch.DiffMatchPatch
	blocks   []block
	fellBack int // regions shown as whole replacements because time ran out
}

func lineDiff(a, b []int32, ids int, deadline time.Time) ([]block, int) {
	d := &differ{
		a: a, b: b,
		countA: make([]int32, ids), countB: make([]int32, ids),
		posA: make([]int32, ids), posB: make([]int32, ids),
		deadline: deadline,
		dmp:      diffmatchpatch.New(),
	}
	d.diff(0, len(a), 0, len(b), 0)
	return d.blocks, d.fellBack
}

func (d *differ) emit(a0, a1, b0, b1 int) {
	if a0 == a1 && b0 == b1 {
		return
	}
	if n := len(d.blocks); n > 0 {
		last := &d.blocks[n-1]
		if last.a1 == a0 && last.b1 == b0 {
			last.a1, last.b1 = a1, b1
			return
		}
	}
	d.blocks = append(d.blocks, block{a0, a1, b0, b1})
}

func (d *differ) diff(a0, a1, b0, b1, depth int) {
	for a0 < a1 && b0 < b1 && d.a[a0] == d.b[b0] {
		a0++
		b0++
	}
	for a0 < a1 && b0 < b1 && d.a[a1-1] == d.b[b1-1] {
		a1--
		b1--
	}
	if a0 == a1 || b0 == b1 {
		d.emit(a0, a1, b0, b1)
		return
	}
	anchors, common := d.anchors(a0, a1, b0, b1)
	if !common {
		// No line of one side occurs on the other: replacing the whole
		// region is the exact answer, not a fallback.
		d.emit(a0, a1, b0, b1)
		return
	}
	if len(anchors) == 0 || depth >= maxDepth {
		d.myers(a0, a1, b0, b1)
		return
	}
	pa, pb := a0, b0
	for _, an := range anchors {
		d.diff(pa, an[0], pb, an[1], depth+1)
		pa, pb = an[0]+1, an[1]+1
	}
	d.diff(pa, a1, pb, b1, depth+1)
}

// anchors returns the longest increasing sequence (by position in b) of the
// lines unique in both ranges, as (a index, b index) pairs in order, and
// whether the ranges share any line at all.
func (d *differ) anchors(a0, a1, b0, b1 int) ([][2]int, bool) {
	for i := a0; i < a1; i++ {
		id := d.a[i]
		d.countA[id]++
		d.posA[id] = int32(i)
	}
	for j := b0; j < b1; j++ {
		id := d.b[j]
		d.countB[id]++
		d.posB[id] = int32(j)
	}
	var pairs [][2]int
	common := false
	for i := a0; i < a1; i++ {
		id := d.a[i]
		common = common || d.countB[id] > 0
		if d.countA[id] == 1 && d.countB[id] == 1 {
			pairs = append(pairs, [2]int{i, int(d.posB[id])})
		}
	}
	for i := a0; i < a1; i++ {
		d.countA[d.a[i]] = 0
	}
	for j := b0; j < b1; j++ {
		d.countB[d.b[j]] = 0
	}
	return longestIncreasing(pairs), common
}

// longestIncreasing is patience sorting over pairs already ordered by a index:
// it keeps the longest run whose b indexes increase.
func longestIncreasing(pairs [][2]int) [][2]int {
	if len(pairs) == 0 {
		return nil
	}
	var tails []int // tails[k]: index in pairs of the smallest tail of a run of length k+1
	prev := make([]int, len(pairs))
	for i, p := range pairs {
		k := sort.Search(len(tails), func(k int) bool { return pairs[tails[k]][1] >= p[1] })
		if k > 0 {
			prev[i] = tails[k-1]
		} else {
			prev[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	out := make([][2]int, len(tails))
	for i, k := tails[len(tails)-1], len(tails)-1; k >= 0; i, k = prev[i], k-1 {
		out[k] = pairs[i]
	}
	return out
}

// myers runs go-diff's line mode on one region: every line id becomes one
// rune (as DiffLinesToRunes does), DiffMainRunes aligns them under the shared
// deadline, and rune counts map the result back to lines (as
// DiffCharsToLines does).
func (d *differ) myers(a0, a1, b0, b1 int) {
	left := time.Until(d.deadline)
	if left <= 0 {
		d.fellBack++
		d.emit(a0, a1, b0, b1)
		return
	}
	d.dmp.DiffTimeout = left
	diffs := d.dmp.DiffMainRunes(idRunes(d.a[a0:a1]), idRunes(d.b[b0:b1]), false)
	if time.Now().After(d.deadline) {
		// go-diff may have replaced a sub-region wholesale; we cannot tell
		// where, so the whole region counts as degraded.
		d.fellBack++
	}
	if !d.replay(diffs, a0, a1, b0, b1) {
		d.emit(a0, a1, b0, b1)
	}
}

// replay turns go-diff's result into blocks, checking that it really is an
// edit script of the region; on any inconsistency it emits nothing and
// returns false so the caller can fall back safely.
func (d *differ) replay(diffs []diffmatchpatch.Diff, a0, a1, b0, b1 int) bool {
	mark := len(d.blocks)
	var saved block
	if mark > 0 {
		saved = d.blocks[mark-1] // emit may extend it
	}
	i, j := a0, b0
	ok := true
	for _, df := range diffs {
		n := utf8.RuneCountInString(df.Text)
		switch df.Type {
		case diffmatchpatch.DiffEqual:
			if i+n > a1 || j+n > b1 {
				ok = false
				break
			}
			for k := 0; k < n; k++ {
				if d.a[i+k] != d.b[j+k] {
					ok = false
				}
			}
			i, j = i+n, j+n
		case diffmatchpatch.DiffDelete:
			d.emit(i, i+n, j, j)
			i += n
		case diffmatchpatch.DiffInsert:
			d.emit(i, i, j, j+n)
			j += n
		}
	}
	if !ok || i != a1 || j != b1 {
		d.blocks = d.blocks[:mark]
		if mark > 0 {
			d.blocks[mark-1] = saved
		}
		return false
	}
	return true
}

// idRunes encodes line ids as runes, skipping the surrogate range that a
// string conversion would turn into U+FFFD (and so merge distinct lines).
func idRunes(ids []int32) []rune {
	out := make([]rune, len(ids))
	for i, id := range ids {
		r := rune(id)
		if r >= 0xD800 {
			r += 0x800
		}
		out[i] = r
	}
	return out
}
