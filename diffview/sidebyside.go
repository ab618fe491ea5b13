package diffview

// Row is one row of the side-by-side model: old on the left, new on the
// right. A context row has both cells with the same text; in a change block
// the i-th deleted line sits beside the i-th added line (the pair whose word
// spans were computed) and the longer side's extra lines face an empty cell.
type Row struct {
	Hunk  int   `json:"hunk"` // index into FileDiff.Hunks
	Left  *Cell `json:"left,omitempty"`
	Right *Cell `json:"right,omitempty"`
}

// Cell is one side of a [Row]; the fields mean what they mean in [Line].
type Cell struct {
	Op    Op     `json:"op"`
	Line  int    `json:"line"`
	Text  string `json:"text"`
	Raw   []byte `json:"raw,omitempty"`
	EOL   EOL    `json:"eol"`
	Spans []Span `json:"spans,omitempty"`
}

// SideBySide returns the split model of fd's hunks.
func SideBySide(fd FileDiff) []Row {
	rows := []Row{}
	for h, hk := range fd.Hunks {
		lines := hk.Lines
		for i := 0; i < len(lines); {
			if lines[i].Op == OpContext {
				rows = append(rows, Row{Hunk: h, Left: cell(lines[i], lines[i].Old), Right: cell(lines[i], lines[i].New)})
				i++
				continue
			}
			d0 := i
			var a0 int
			a0, i = changeBlock(lines, i)
			dels, adds := lines[d0:a0], lines[a0:i]
			for k := 0; k < max(len(dels), len(adds)); k++ {
				r := Row{Hunk: h}
				if k < len(dels) {
					r.Left = cell(dels[k], dels[k].Old)
				}
				if k < len(adds) {
					r.Right = cell(adds[k], adds[k].New)
				}
				rows = append(rows, r)
			}
		}
	}
	return rows
}

func cell(l Line, no int) *Cell {
	return &Cell{Op: l.Op, Line: no, Text: l.Text, Raw: l.Raw, EOL: l.EOL, Spans: l.Spans}
}
