//go:build unix

package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestKill9Recovery is the crash test of run-model scenarios 30, 38 and 39:
// a child process (TestKillHelperProcess) runs a streaming, tool-calling,
// approval-waiting workload on a real SQLite file and is killed with SIGKILL
// at a random moment; the parent then reopens the file, recovers and checks
// the invariants (see kill_check_test.go). The "fresh" iterations use a new
// file each; "same-db" kills, recovers and continues on one file several
// times, so sequences must continue across restarts without gaps.
//
// AGENTHUB_KILL_ITERATIONS sets the number of fresh iterations (default 20;
// `make test-kill` runs 200); AGENTHUB_KILL_SEED repeats a run's plans,
// decisions and kill delays (the exact kill instant still depends on timing).
func TestKill9Recovery(t *testing.T) {
	if os.Getenv(envKillHelper) != "" {
		return
	}
	if testing.Short() {
		t.Skip("kill test skipped in -short mode")
	}
	defer goleak.VerifyNone(t)
	iters := envInt(t, "AGENTHUB_KILL_ITERATIONS", 20)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("AGENTHUB_KILL_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("AGENTHUB_KILL_SEED: %v", err)
		}
	}
	t.Logf("seed %d (AGENTHUB_KILL_SEED=%d repeats it), %d fresh iterations", seed, seed, iters)
	rng := rand.New(rand.NewPCG(seed, 0))
	var total killStats
	t.Run("fresh", func(t *testing.T) {
		for i := range iters {
			path := filepath.Join(t.TempDir(), "agenthub.db")
			g := killGen{path: path, seed: rng.Uint64(), delay: killDelay(rng), final: true}
			if !t.Run(strconv.Itoa(i), func(t *testing.T) { total.add(g.run(t)) }) {
				return
			}
		}
	})
	t.Run("same-db", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "agenthub.db")
		gens := max(4, iters/5)
		for i := range gens {
			g := killGen{path: path, seed: rng.Uint64(), delay: killDelay(rng), final: i == gens-1}
			if !t.Run(strconv.Itoa(i), func(t *testing.T) { total.add(g.run(t)) }) {
				return
			}
		}
	})
	t.Logf("totals: %s", total)
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// killDelay is log-uniform in [1 ms, 1 s] after the child is ready: kills
// land on the first runs' creation as often as deep in a busy workload.
func killDelay(rng *rand.Rand) time.Duration {
	return time.Duration(math.Exp(rng.Float64()*math.Log(1000)) * float64(time.Millisecond))
}

// killGen is one generation: start the child on path, kill it after delay,
// recover and check. final drives every run to a terminal state at the end.
type killGen struct {
	path  string
	seed  uint64
	delay time.Duration
	final bool
}

// evRef is one event the child reported as committed.
type evRef struct {
	run string
	seq int64
	id  string
}

func (g killGen) run(t *testing.T) killStats {
	t.Logf("child seed %d, kill after %v", g.seed, g.delay)
	reported, stderr := g.killChild(t)
	if t.Failed() {
		return killStats{}
	}
	s := checkAfterKill(t, g.path, reported, g.final)
	s.reported = len(reported)
	if t.Failed() {
		t.Logf("child stderr:\n%s", stderr)
	}
	t.Logf("%s", s)
	return s
}

// killChild runs the helper process until delay after its "ready" line,
// kills it with SIGKILL and returns the events it reported as committed.
func (g killGen) killChild(t *testing.T) ([]evRef, string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envKillHelper+"=1", envKillDB+"="+g.path,
		envKillChild+"="+strconv.FormatUint(g.seed, 10))
	var stderr capped
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	var reported []evRef
	var bad []string
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		reported, bad = readReports(out, ready)
	}()
	select {
	case <-ready:
		time.Sleep(g.delay)
	case <-readDone:
	case <-time.After(60 * time.Second):
		t.Error("the child did not get ready within 60 s")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Errorf("kill: %v", err)
	}
	<-readDone // EOF: the child is gone and its end of the pipe closed
	err = cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the child ended by itself (%v), not by SIGKILL", err)
	}
	if len(bad) > 0 {
		t.Errorf("unparseable report lines: %q", bad)
	}
	if strings.Contains(stderr.String(), "WARNING: DATA RACE") {
		t.Errorf("the child reported a data race")
	}
	if t.Failed() {
		t.Logf("child stderr:\n%s", stderr.String())
	}
	return reported, stderr.String()
}

// readReports parses the child's stdout. A line without its newline (the
// kill cut it) is ignored; nothing promised it was committed.
func readReports(r io.Reader, ready chan struct{}) (evs []evRef, bad []string) {
	br := bufio.NewReaderSize(r, 1<<16)
	readyClosed := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if !readyClosed {
				close(ready)
			}
			return evs, bad
		}
		line = strings.TrimSuffix(line, "\n")
		switch f := strings.Fields(line); {
		case line == "ready" && !readyClosed:
			close(ready)
			readyClosed = true
		case len(f) == 4 && f[0] == "ev":
			seq, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				bad = append(bad, line)
				continue
			}
			evs = append(evs, evRef{run: f[1], seq: seq, id: f[3]})
		case strings.HasPrefix(line, "ev "):
			bad = append(bad, line)
		}
	}
}

// capped keeps the first 64 KB of the child's stderr.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := 64<<10 - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// killStats counts what a generation found, for the log.
type killStats struct {
	reported, runs, events               int
	interrupted, waiting, queued, closed int
}

func (s *killStats) add(o killStats) {
	s.reported += o.reported
	s.runs += o.runs
	s.events += o.events
	s.interrupted += o.interrupted
	s.waiting += o.waiting
	s.queued += o.queued
	s.closed += o.closed
}

func (s killStats) String() string {
	return fmt.Sprintf("%d events reported, %d runs, %d events stored; at the kill: %d running (now interrupted), "+
		"%d waiting, %d queued, %d terminal", s.reported, s.runs, s.events, s.interrupted, s.waiting, s.queued, s.closed)
}

// tlog sends the recovering engine's warnings to the test log.
type tlog struct{ t *testing.T }

func (w tlog) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
