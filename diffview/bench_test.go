package diffview

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// sourceLike generates n lines that look like code: mostly distinct
// statements, with the repeated lines ("}", blank, "return nil") real files
// have, so anchoring is exercised honestly.
func sourceLike(r *rand.Rand, n int) []string {
	lines := make([]string, n)
	for i := range lines {
		switch {
		case i%10 == 9:
			lines[i] = "}\n"
		case i%7 == 6:
			lines[i] = "\n"
		case i%13 == 12:
			lines[i] = "\treturn nil\n"
		default:
			lines[i] = fmt.Sprintf("\tv%d := compute(%d, \"%s\")\n", i, r.IntN(1_000_000), words[r.IntN(len(words))])
		}
	}
	return lines
}

var words = []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}

// rewrite replaces fraction of the lines, chosen at random, with new
// distinct lines and returns the new text and the number replaced.
func rewrite(r *rand.Rand, lines []string, fraction float64) ([]string, int) {
	out := append([]string(nil), lines...)
	want := int(float64(len(lines)) * fraction)
	changed := 0
	for _, i := range r.Perm(len(out)) {
		if changed == want {
			break
		}
		out[i] = fmt.Sprintf("\trewritten%d(%d)\n", i, r.IntN(1_000_000))
		changed++
	}
	return out, changed
}

type benchCase struct {
	name     string
	lines    int
	fraction float64
}

var benchCases = []benchCase{
	{"10k-lines-1pct", 10_000, 0.01},
	{"100k-lines-1pct", 100_000, 0.01},
	{"100k-lines-50pct", 100_000, 0.50},
}

func benchPair(c benchCase) (old, new []byte, changed int) {
	r := rand.New(rand.NewPCG(uint64(c.lines), 42))
	a := sourceLike(r, c.lines)
	b, changed := rewrite(r, a, c.fraction)
	return joinLines(a), joinLines(b), changed
}

func joinLines(ls []string) []byte {
	var buf bytes.Buffer
	for _, l := range ls {
		buf.WriteString(l)
	}
	return buf.Bytes()
}

// benchOpts lifts the row limit so large diffs are rendered, not omitted.
var benchOpts = Options{MaxRows: 1 << 22}

// BenchmarkDiff compares, in the same run, diffview (diff + unified text) with
// `git diff --no-index` run as a whole process and with go-diff's plain line
// mode (the reference without anchoring; skipped on the 50% case, where it
// takes tens of seconds).
func BenchmarkDiff(b *testing.B) {
	for _, c := range benchCases {
		old, new, _ := benchPair(c)
		b.Run(c.name+"/diffview", func(b *testing.B) {
			b.SetBytes(int64(len(old) + len(new)))
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				fd, err := Diff(Side{Path: "f.go", Content: old}, Side{Path: "f.go", Content: new}, benchOpts)
				if err != nil || fd.Omitted != nil {
					b.Fatalf("err %v degraded %v omitted %v", err, fd.Degraded, fd.Omitted)
				}
				if len(Unified(fd)) == 0 {
					b.Fatal("empty patch")
				}
			}
		})
		// The lazy path: the diff without words, then the word spans of the
		// hunks a first screen shows (visibleRows), as the UI asks for them.
		b.Run(c.name+"/diffview-lazy", func(b *testing.B) {
			b.SetBytes(int64(len(old) + len(new)))
			opts := benchOpts
			opts.NoWords = true
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				fd, err := Diff(Side{Path: "f.go", Content: old}, Side{Path: "f.go", Content: new}, opts)
				if err != nil || fd.Omitted != nil {
					b.Fatalf("err %v degraded %v omitted %v", err, fd.Degraded, fd.Omitted)
				}
				if len(Unified(fd)) == 0 {
					b.Fatal("empty patch")
				}
				for i, rows := 0, 0; i < len(fd.Hunks) && rows < visibleRows; i++ {
					if _, ok := WordSpans(fd.Hunks[i], time.Second); !ok {
						b.Fatal("word spans of a visible hunk stopped at their budget")
					}
					rows += len(fd.Hunks[i].Lines)
				}
			}
		})
		b.Run(c.name+"/git-diff-no-index", func(b *testing.B) {
			dir := b.TempDir()
			pa, pb := filepath.Join(dir, "a.go"), filepath.Join(dir, "b.go")
			if os.WriteFile(pa, old, 0o644) != nil || os.WriteFile(pb, new, 0o644) != nil {
				b.Fatal("write inputs")
			}
			b.SetBytes(int64(len(old) + len(new)))
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				cmd := exec.Command("git", "diff", "--no-index", "--no-color", "--no-ext-diff", pa, pb)
				cmd.Dir = dir
				out, err := cmd.Output()
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 1 || len(out) == 0 {
					b.Fatalf("git diff: %v", err)
				}
			}
		})
		// GNU diff, the fastest whole-process reference on these inputs.
		b.Run(c.name+"/gnu-diff", func(b *testing.B) {
			dir := b.TempDir()
			pa, pb := filepath.Join(dir, "a.go"), filepath.Join(dir, "b.go")
			if os.WriteFile(pa, old, 0o644) != nil || os.WriteFile(pb, new, 0o644) != nil {
				b.Fatal("write inputs")
			}
			b.SetBytes(int64(len(old) + len(new)))
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				cmd := exec.Command("diff", "-u", pa, pb)
				cmd.Dir = dir
				out, err := cmd.Output()
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 1 || len(out) == 0 {
					b.Fatalf("diff: %v", err)
				}
			}
		})
		if c.fraction > 0.1 {
			continue
		}
		b.Run(c.name+"/go-diff-linemode", func(b *testing.B) {
			dmp := diffmatchpatch.New()
			dmp.DiffTimeout = 0
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				ra, rb, lines := dmp.DiffLinesToRunes(string(old), string(new))
				_ = dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines)
			}
		})
	}
}

// visibleRows is how many diff rows a first screen of the diff viewer
// renders at most (it virtualises diffs of more rows than this).
const visibleRows = 400

// reportCPU adds the CPU time per op (this process and its children) since
// start: on a machine shared with other work it is steadier than wall time.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
}

// TestLargeDiffIsReal checks the benchmark inputs give a real, near-minimal
// diff: no fallback, the number of changed lines within 5% of the true edit,
// and a patch that applies. It runs with a generous time budget: under -race
// on a loaded 2-core machine the 1 s default is a coin toss, and whether the
// default budget suffices is what BenchmarkDiff measures, not a test.
func TestLargeDiffIsReal(t *testing.T) {
	opts := benchOpts
	opts.Timeout = 2 * time.Minute
	for _, c := range benchCases {
		t.Run(c.name, func(t *testing.T) {
			old, new, changed := benchPair(c)
			fd := mustDiff(t, Side{Path: "f", Content: old}, Side{Path: "f", Content: new}, opts)
			if fd.Degraded != nil || fd.Omitted != nil {
				t.Fatalf("degraded %+v omitted %+v", fd.Degraded, fd.Omitted)
			}
			limit := changed + changed/20
			if fd.Stats.Deleted > limit || fd.Stats.Added > limit || fd.Stats.Deleted < changed*9/10 {
				t.Fatalf("stats %+v for %d replaced lines (limit %d): not a near-minimal diff", fd.Stats, changed, limit)
			}
			got, err := Apply(old, fd)
			if err != nil || !bytes.Equal(got, new) {
				t.Fatalf("apply: %v", err)
			}
		})
	}
}
