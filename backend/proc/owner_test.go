//go:build linux

package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envOwner makes the test binary an "engine" that starts a command through
// proc and waits to be killed (the os/exec helper-process pattern).
const (
	envOwner       = "AGENTHUB_TEST_PROC_OWNER"
	envOwnerScript = "AGENTHUB_TEST_PROC_SCRIPT"
	envOwnerDir    = "AGENTHUB_TEST_PROC_DIR"
)

// TestOwnerHelperProcess is not a test: it is the owner process of
// TestNothingOutlivesItsOwner and returns at once in a normal test run.
func TestOwnerHelperProcess(t *testing.T) {
	if os.Getenv(envOwner) != "1" {
		return
	}
	dir := os.Getenv(envOwnerDir)
	p, err := Start(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", os.Getenv(envOwnerScript)},
		Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("ready", p.Pid())
	_, _ = p.Wait()
	fmt.Println("the command ended before the kill")
	os.Exit(3)
}

// TestNothingOutlivesItsOwner: the owner of a command is killed with
// SIGKILL while the command sleeps before writing a file; every process of
// the command (the shell, and a grandchild that left the group with setsid
// after a double fork) disappears from the process table, and the file
// never appears.
func TestNothingOutlivesItsOwner(t *testing.T) {
	tests := []struct {
		name   string
		script string
		pids   []string // files holding the pids to see gone
	}{
		{name: "command", script: `echo $$ > shell.pid; sleep 3; echo late > side-effect`,
			pids: []string{"shell.pid"}},
		{name: "daemonized grandchild", script: `( setsid sh -c 'echo $$ > daemon.pid; sleep 3; echo late > side-effect' & ) ;
			echo $$ > shell.pid; sleep 60`, pids: []string{"shell.pid", "daemon.pid"}},
		{name: "grandchild in the group", script: `sh -c 'echo $$ > child.pid; trap "" TERM HUP; sleep 3; echo late > side-effect' &
			echo $$ > shell.pid; wait`, pids: []string{"shell.pid", "child.pid"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			owner := exec.Command(os.Args[0], "-test.run=^TestOwnerHelperProcess$", "-test.count=1")
			owner.Env = append(os.Environ(), envOwner+"=1", envOwnerDir+"="+dir, envOwnerScript+"="+tc.script)
			out, err := owner.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			owner.Stderr = os.Stderr
			if err := owner.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "ready ") {
				_ = owner.Process.Kill()
				t.Fatalf("owner: %q, %v", line, err)
			}
			var pids []int
			for _, f := range tc.pids {
				pids = append(pids, waitPID(t, filepath.Join(dir, f)))
			}
			ids := make([]procID, 0, len(pids))
			for _, pid := range pids {
				id, ok := identify(pid)
				if !ok {
					t.Fatalf("process %d is not running before the kill", pid)
				}
				ids = append(ids, id)
			}
			if err := owner.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = owner.Wait()
			for _, id := range ids {
				waitGoneID(t, id)
			}
			if _, err := os.Stat(filepath.Join(dir, "side-effect")); !os.IsNotExist(err) {
				t.Fatalf("the command's side effect landed after its owner died (%v)", err)
			}
		})
	}
}

// waitGoneID waits, generously, until a process has left the process
// table (a zombie counts as gone: it runs nothing more).
func waitGoneID(t *testing.T, id procID) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); alive(id); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs 30 s after its owner was killed", id.Pid)
		}
	}
}
