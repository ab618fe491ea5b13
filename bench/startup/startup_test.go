// Package startup measures what a user pays to start AgentHub's commands,
// against the fastest reference in the same run: `git --version` for a
// command that does nothing but print, run alternately with it so that the
// machine's load hits both alike. Run with bench/startup/run.sh (which
// builds the binaries first) or:
//
//	AGENTHUB_BIN=build/bin/agenthub go test -tags sqlite_fts5 -run '^$' -bench . -benchtime 40x ./bench/startup/
package startup

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sample is one whole process: wall time and CPU time (user + system of
// the child, from its rusage).
type sample struct{ wall, cpu time.Duration }

func run(b *testing.B, env []string, extra []*os.File, name string, args ...string) sample {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.ExtraFiles = extra
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil && extra == nil {
		b.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return sample{wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}

func median(s []sample, cpu bool) float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		if cpu {
			v[i] = float64(x.cpu.Microseconds()) / 1000
		} else {
			v[i] = float64(x.wall.Microseconds()) / 1000
		}
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}

// ratios is the median of the per-op ratios a/b (paired).
func ratios(a, b []sample) float64 {
	v := make([]float64, len(a))
	for i := range a {
		v[i] = float64(a[i].wall) / float64(max(b[i].wall, 1))
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func agenthub(b *testing.B) string {
	b.Helper()
	bin := os.Getenv("AGENTHUB_BIN")
	if bin == "" {
		bin = "../../build/bin/agenthub"
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		b.Fatalf("AGENTHUB_BIN: %v (build it with make build)", err)
	}
	return abs
}

func gitPath(b *testing.B) string {
	b.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		b.Fatal("the reference needs git on the PATH")
	}
	return git
}

// BenchmarkVersion: `agenthub version` against `git --version`, each op one
// of each, in alternating order. Goal: within 5× of git (issue 16).
func BenchmarkVersion(b *testing.B) {
	bin, git := agenthub(b), gitPath(b)
	env := append(os.Environ(), "AGENTHUB_HOME="+b.TempDir())
	var ours, ref []sample
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			ref = append(ref, run(b, env, nil, git, "--version"))
			ours = append(ours, run(b, env, nil, bin, "version"))
		} else {
			ours = append(ours, run(b, env, nil, bin, "version"))
			ref = append(ref, run(b, env, nil, git, "--version"))
		}
	}
	b.ReportMetric(median(ours, false), "agenthub-ms")
	b.ReportMetric(median(ref, false), "git-ms")
	b.ReportMetric(median(ours, true), "agenthub-cpu-ms")
	b.ReportMetric(median(ref, true), "git-cpu-ms")
	b.ReportMetric(ratios(ours, ref), "x-git")
}

// BenchmarkRunsList: `agenthub runs list` against a warm engine (started
// once with `agenthub engine start`, outside the timer) and, alternating,
// `git --version`. Goal: under 50 ms (issue 16). The data directory holds
// no runs: the figure is the command's own cost, not the listing's.
func BenchmarkRunsList(b *testing.B) {
	bin, git := agenthub(b), gitPath(b)
	home := b.TempDir()
	env := append(os.Environ(), "AGENTHUB_HOME="+home)
	start := exec.Command(bin, "engine", "start", "--home", home)
	start.Env = env
	if out, err := start.CombinedOutput(); err != nil {
		b.Fatalf("agenthub engine start: %v\n%s", err, out)
	}
	b.Cleanup(func() {
		stop := exec.Command(bin, "engine", "stop", "--home", home)
		stop.Env = env
		if out, err := stop.CombinedOutput(); err != nil {
			b.Errorf("agenthub engine stop: %v\n%s", err, out)
		}
	})
	run(b, env, nil, bin, "runs", "list", "--home", home) // the first connection
	var ours, ref []sample
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			ref = append(ref, run(b, env, nil, git, "--version"))
			ours = append(ours, run(b, env, nil, bin, "runs", "list", "--home", home))
		} else {
			ours = append(ours, run(b, env, nil, bin, "runs", "list", "--home", home))
			ref = append(ref, run(b, env, nil, git, "--version"))
		}
	}
	b.ReportMetric(median(ours, false), "runs-list-ms")
	b.ReportMetric(median(ref, false), "git-ms")
	b.ReportMetric(median(ours, true), "runs-list-cpu-ms")
	b.ReportMetric(ratios(ours, ref), "x-git")
}

// BenchmarkSupervisorStart: what one supervisor costs to start (load,
// package init, reading its configuration) when it is the window binary
// against the CLI binary, alternating. Every command an engine runs starts
// one; the window binary now hands them to the CLI binary
// (proc.UseSupervisorProgram). Skipped when agenthub-window is not beside
// AGENTHUB_BIN.
func BenchmarkSupervisorStart(b *testing.B) {
	bin := agenthub(b)
	window := filepath.Join(filepath.Dir(bin), "agenthub-window")
	if _, err := os.Stat(window); err != nil {
		b.Skip("no agenthub-window beside AGENTHUB_BIN")
	}
	cfg := filepath.Join(b.TempDir(), "config.json")
	// A configuration naming no program: the supervisor reads it, becomes a
	// subreaper, fails to start "" and reports it, then exits.
	raw, _ := json.Marshal(map[string]any{"path": "", "args": []string{}, "env": []string{}})
	if err := os.WriteFile(cfg, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	one := func(program string) sample {
		f, err := os.Open(cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		life, lifeW, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		defer life.Close()
		lifeW.Close() // EOF at once: "AgentHub is gone"
		status, err := os.CreateTemp(b.TempDir(), "status")
		if err != nil {
			b.Fatal(err)
		}
		defer status.Close()
		return run(b, []string{"AGENTHUB_PROC_SUPERVISOR=1"}, []*os.File{f, life, status}, program)
	}
	var win, small []sample
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			win, small = append(win, one(window)), append(small, one(bin))
		} else {
			small, win = append(small, one(bin)), append(win, one(window))
		}
	}
	b.ReportMetric(median(win, false), "window-ms")
	b.ReportMetric(median(small, false), "cli-ms")
	b.ReportMetric(median(win, true), "window-cpu-ms")
	b.ReportMetric(median(small, true), "cli-cpu-ms")
}
