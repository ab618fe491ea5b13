package worktree

import (
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
	bigOnce sync.Once
	bigDir  string
)

// TestMain removes the benchmark's repository, which outlives any one
// benchmark so that every run of -count shares it.
func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" {
		_ = os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

// bigRepo builds, once per test binary, a committed 20,000-file repository
// (200 directories of 100 files), as BenchmarkStatus20k in workspace/git does.
func bigRepo(b *testing.B) string {
	bigOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agenthub-wt-bigrepo-")
		if err != nil {
			b.Fatal(err)
		}
		run(b, dir, "init", "-q", "-b", "main")
		for d := range 200 {
			for f := range 100 {
				write(b, dir, fmt.Sprintf("pkg%03d/f%03d.go", d, f),
					fmt.Sprintf("package pkg%03d\n\n// file %d\nfunc F%d() int { return %d }\n", d, f, f, d*f))
			}
		}
		run(b, dir, "add", "-A")
		run(b, dir, "commit", "-q", "-m", "base")
		bigDir = dir
	})
	return bigDir
}

// BenchmarkCreate20k compares creating a run's worktree ([Manager.Create]:
// the base resolved, then `git worktree add -b`) with the bare
// `git worktree add -b` of the same base into a directory of the same data
// folder, in pairs whose order alternates so load drifts hit both sides
// alike. Each created worktree is removed outside the timed part. Reported:
// wall and CPU (this process and its git children) ms per op of each side,
// and ours/git for both.
func BenchmarkCreate20k(b *testing.B) {
	repo := bigRepo(b)
	ctx := context.Background()
	m := &Manager{Dir: filepath.Join(b.TempDir(), "worktrees"), Run: execRunner, Env: gitEnv()}
	if err := os.MkdirAll(m.Dir, 0o700); err != nil {
		b.Fatal(err)
	}
	head := run(b, repo, "rev-parse", "HEAD")
	var ours, ref, oursCPU, refCPU time.Duration
	var wallRatios, cpuRatios []float64 // per pair: one load spike skews a pair, not the median
	cleanup := func(path, branch string) {
		run(b, repo, "worktree", "remove", "--force", path)
		run(b, repo, "branch", "-D", branch)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		refID, ourID := fmt.Sprintf("ref_%d", i), fmt.Sprintf("run_%d", i)
		timeRef := func() {
			start, cpu := time.Now(), cpuTime()
			if _, err := execRunner(ctx, repo, m.Env, []string{"worktree", "add", "--quiet", "-b", Branch(refID),
				m.Path(refID), head}); err != nil {
				b.Fatal(err)
			}
			ref, refCPU = ref+time.Since(start), refCPU+cpuTime()-cpu
		}
		timeOurs := func() {
			start, cpu := time.Now(), cpuTime()
			if _, err := m.Create(ctx, repo, ourID, ""); err != nil {
				b.Fatal(err)
			}
			ours, oursCPU = ours+time.Since(start), oursCPU+cpuTime()-cpu
		}
		o0, r0, oc0, rc0 := ours, ref, oursCPU, refCPU
		if i%2 == 0 {
			timeRef()
			timeOurs()
		} else {
			timeOurs()
			timeRef()
		}
		wallRatios = append(wallRatios, float64(ours-o0)/float64(ref-r0))
		if refCPU > rc0 {
			cpuRatios = append(cpuRatios, float64(oursCPU-oc0)/float64(refCPU-rc0))
		}
		b.StopTimer()
		cleanup(m.Path(refID), Branch(refID))
		cleanup(m.Path(ourID), Branch(ourID))
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(ref.Milliseconds())/n, "git-ms/op")
	b.ReportMetric(float64(ours.Milliseconds())/n, "create-ms/op")
	b.ReportMetric(float64(ours)/float64(ref), "create/git")
	b.ReportMetric(float64(refCPU.Milliseconds())/n, "git-cpu-ms/op")
	b.ReportMetric(float64(oursCPU.Milliseconds())/n, "create-cpu-ms/op")
	if refCPU > 0 {
		b.ReportMetric(float64(oursCPU)/float64(refCPU), "create/git-cpu")
	}
	b.ReportMetric(median(wallRatios), "median-pair-create/git")
	if len(cpuRatios) > 0 {
		b.ReportMetric(median(cpuRatios), "median-pair-create/git-cpu")
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
