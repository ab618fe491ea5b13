package proc

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopEndsTheWholeGroup: Stop reaches a child that ignores SIGTERM and
// the grandchild it left running, and Wait reports ErrStopped.
func TestStopEndsTheWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	p, err := Start(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c",
		`trap '' TERM; echo ready; sleep 60 & echo $! > ` + pidFile + `; wait`}})
	if err != nil {
		t.Fatal(err)
	}
	grandchild := waitPID(t, pidFile)
	start := time.Now()
	if err := p.Stop(200 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Stop took %s", took)
	}
	res, err := p.Wait()
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("Wait err = %v, want ErrStopped", err)
	}
	if string(res.Stdout) != "ready\n" {
		t.Errorf("stdout = %q", res.Stdout)
	}
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(grandchild, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived Stop", grandchild)
		}
	}
	select {
	case <-p.Done():
	default:
		t.Error("Done is open after Wait")
	}
}

func TestStopAfterExitIsANoOp(t *testing.T) {
	p, err := Start(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c", "exit 4"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Wait()
	if err != nil || res.ExitCode != 4 {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	// Wait may be called again and says the same.
	if res, err := p.Wait(); err != nil || res.ExitCode != 4 {
		t.Fatalf("second Wait = %+v, %v", res, err)
	}
}

func TestDroppedBytesPerStream(t *testing.T) {
	res, err := Output(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c", "printf 0123456789; printf ab >&2"}, MaxOutput: 4})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "0123" || res.StdoutDropped != 6 || string(res.Stderr) != "ab" || res.StderrDropped != 0 || !res.Truncated {
		t.Fatalf("got %+v", res)
	}
}

func TestStartFailure(t *testing.T) {
	_, err := Start(t.Context(), Spec{Path: filepath.Join(t.TempDir(), "missing")})
	if err == nil || !strings.HasPrefix(err.Error(), "run ") {
		t.Fatalf("err = %v", err)
	}
}

func waitPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatal("no pid written")
		}
	}
}

// TestKillGroupAfterLeaderExit: a grandchild left behind by a leader that
// already exited is killed.
func TestKillGroupAfterLeaderExit(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	p, err := Start(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c",
		`sleep 60 >/dev/null 2>&1 & echo $! > ` + pidFile}})
	if err != nil {
		t.Fatal(err)
	}
	grandchild := waitPID(t, pidFile)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := p.KillGroup(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(grandchild, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived KillGroup", grandchild)
		}
	}
}
