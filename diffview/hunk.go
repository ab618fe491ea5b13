package diffview

// groupBlocks splits blocks into hunk groups: blocks closer than 2*ctx equal
// lines share a hunk, as in git.
func groupBlocks(blocks []block, ctx int) [][]block {
	var groups [][]block
	for i, bl := range blocks {
		if i > 0 && bl.a0-blocks[i-1].a1 <= 2*ctx {
			groups[len(groups)-1] = append(groups[len(groups)-1], bl)
			continue
		}
		groups = append(groups, []block{bl})
	}
	return groups
}

// hunkRange is a group's extent with context: old [o0,o1), new [n0,n1).
func hunkRange(g []block, nOld, ctx int) (o0, o1, n0, n1 int) {
	first, last := g[0], g[len(g)-1]
	o0 = max(0, first.a0-ctx)
	o1 = min(nOld, last.a1+ctx)
	n0 = first.b0 - (first.a0 - o0)
	n1 = last.b1 + (o1 - last.a1)
	return o0, o1, n0, n1
}

// countRows is the number of unified lines the hunks would hold (old lines
// in range, context or deleted, plus added lines), computed before building
// them so an oversized diff is never materialised.
func countRows(blocks []block, nOld, ctx int) int {
	rows := 0
	for _, g := range groupBlocks(blocks, ctx) {
		o0, o1, _, _ := hunkRange(g, nOld, ctx)
		rows += o1 - o0
		for _, bl := range g {
			rows += bl.b1 - bl.b0
		}
	}
	return rows
}

// equalLines counts the context lines of a group (old range minus deletes).
func equalLines(g []block, o0, o1 int) int {
	n := o1 - o0
	for _, bl := range g {
		n -= bl.a1 - bl.a0
	}
	return n
}

// buildHunks renders the groups as hunks; within a block, deletions come
// before additions (git's layout), which keeps the patch valid whatever order
// the aligner produced.
func buildHunks(a, b []string, blocks []block, ctx int) []Hunk {
	groups := groupBlocks(blocks, ctx)
	hunks := make([]Hunk, 0, len(groups))
	for _, g := range groups {
		o0, o1, n0, n1 := hunkRange(g, len(a), ctx)
		h := Hunk{OldLines: o1 - o0, NewLines: n1 - n0}
		h.OldStart, h.NewStart = headerStart(o0, h.OldLines), headerStart(n0, h.NewLines)
		h.Lines = make([]Line, 0, (o1-o0)+(n1-n0)-equalLines(g, o0, o1))
		i, j := o0, n0
		for _, bl := range g {
			for ; i < bl.a0; i, j = i+1, j+1 {
				h.Lines = append(h.Lines, makeLine(OpContext, i+1, j+1, a[i]))
			}
			for ; i < bl.a1; i++ {
				h.Lines = append(h.Lines, makeLine(OpDelete, i+1, 0, a[i]))
			}
			for ; j < bl.b1; j++ {
				h.Lines = append(h.Lines, makeLine(OpAdd, 0, j+1, b[j]))
			}
		}
		for ; i < o1; i, j = i+1, j+1 {
			h.Lines = append(h.Lines, makeLine(OpContext, i+1, j+1, a[i]))
		}
		hunks = append(hunks, h)
	}
	return hunks
}

// headerStart converts a 0-based range start to the "@@" convention: the
// first line's number, or the line before the range when it is empty.
func headerStart(pos, count int) int {
	if count == 0 {
		return pos
	}
	return pos + 1
}

// rangeStart is headerStart's inverse: the 0-based start of the range.
func rangeStart(start, count int) int {
	if count == 0 {
		return start
	}
	return start - 1
}
