package git

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

var (
	bigRepoOnce sync.Once
	bigRepoDir  string
)

// bigRepo builds, once per test binary, a committed 20,000-file repository
// (200 directories of 100 files) with 1% of the files modified and 20
// untracked files, the case the performance note compares.
func bigRepo(b *testing.B) string {
	bigRepoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agenthub-bigrepo-")
		if err != nil {
			b.Fatal(err)
		}
		gitCmd(b, dir, "init", "-q", "-b", "main")
		for d := range 200 {
			sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", d))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := range 100 {
				content := fmt.Sprintf("package pkg%03d\n\n// file %d\nfunc F%d() int { return %d }\n", d, f, f, d*f)
				if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.go", f)), []byte(content), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		gitCmd(b, dir, "add", "-A")
		gitCmd(b, dir, "commit", "-q", "-m", "base")
		for i := range 200 {
			write(b, dir, fmt.Sprintf("pkg%03d/f%03d.go", i, i%100), "changed\n")
		}
		for i := range 20 {
			write(b, dir, fmt.Sprintf("new/u%02d.go", i), "untracked\n")
		}
		// Refresh git's index stat cache, as an interactive user's git
		// would have; both sides then start from the same index.
		gitCmd(b, dir, "status", "--porcelain")
		bigRepoDir = dir
	})
	return bigRepoDir
}

// statusPaths are the ways of getting the big repository's status that
// BenchmarkStatus20k compares: the git CLI alone as a whole process (the
// reference), and Status through each engine, each including opening the
// repository and comparing every candidate with HEAD, as callers pay it.
var statusPaths = []struct {
	name string
	run  func(tb testing.TB, dir string)
}{
	{"git-status", func(tb testing.TB, dir string) {
		out, err := execRunner(context.Background(), dir, CLIEnv(os.Environ()), statusArgs)
		if err != nil || bytes.Count(out, []byte{0}) < 220 {
			tb.Fatalf("git status: %v", err)
		}
	}},
	{"cli", func(tb testing.TB, dir string) {
		checkBig(tb, func(r *Repo) (Report, error) { return r.StatusCLI(context.Background(), execRunner, DefaultMaxFiles) }, dir)
	}},
	{"gogit", func(tb testing.TB, dir string) {
		checkBig(tb, func(r *Repo) (Report, error) { return r.StatusGoGit(DefaultMaxFiles) }, dir)
	}},
}

func checkBig(tb testing.TB, status func(*Repo) (Report, error), dir string) {
	r, err := Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	st, err := status(r)
	if err != nil {
		tb.Fatal(err)
	}
	if len(st.Files) != 220 {
		tb.Fatalf("%d files, want 220", len(st.Files))
	}
}

// BenchmarkStatus20k measures each path on its own, then all three paired:
// every op of "paired" runs each path once, in an order that rotates, and
// reports the median time of each and the median of the per-op ratios, so
// load from other work on the machine hits all sides alike.
func BenchmarkStatus20k(b *testing.B) {
	dir := bigRepo(b)
	for _, p := range statusPaths {
		b.Run(p.name, func(b *testing.B) {
			start := cpuTime()
			for b.Loop() {
				p.run(b, dir)
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
	b.Run("paired", func(b *testing.B) {
		wall := make([][]float64, len(statusPaths))
		cpu := make([][]float64, len(statusPaths))
		n := 0
		for b.Loop() {
			for k := range statusPaths {
				i := (n + k) % len(statusPaths)
				t0, c0 := time.Now(), cpuTime()
				statusPaths[i].run(b, dir)
				wall[i] = append(wall[i], float64(time.Since(t0).Microseconds())/1000)
				cpu[i] = append(cpu[i], float64((cpuTime()-c0).Microseconds())/1000)
			}
			n++
		}
		for i, name := range []string{"git", "cli", "gogit"} {
			b.ReportMetric(median(wall[i]), name+"-ms")
			b.ReportMetric(median(cpu[i]), name+"-cpu-ms")
		}
		b.ReportMetric(median(ratios(wall[1], wall[0])), "cli/git")
		b.ReportMetric(median(ratios(wall[2], wall[0])), "gogit/git")
		b.ReportMetric(median(ratios(cpu[1], cpu[0])), "cli/git-cpu")
		b.ReportMetric(median(ratios(cpu[2], cpu[0])), "gogit/git-cpu")
	})
}

func ratios(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] / b[i]
	}
	return out
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
