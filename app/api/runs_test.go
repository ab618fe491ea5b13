package api

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"agenthub/backend"
)

const sleeperPlaybook = `version = 1
name = "sleeper"
[[step]]
say = "Starting a long command."
[[step.call]]
tool = "run_shell"
args = { command = "sleep 300 & echo $! > sleeper.pid; wait" }
[[step]]
say = "unreachable"
`

// TestCancelStopsTheProcessGroup cancels a run while its approved shell
// command runs: the command's whole process group is gone afterwards, the
// run is Cancelled, concurrent cancels agree, and no goroutine leaks.
func TestCancelStopsTheProcessGroup(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	core, err := Open(t.Context(), Config{Home: t.TempDir(), Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	dir := t.TempDir()
	ws, err := NewWorkspacesAPI(core).Add(dir)
	if err != nil {
		t.Fatal(err)
	}
	profile, err := core.AddPlaybook([]byte(sleeperPlaybook))
	if err != nil {
		t.Fatal(err)
	}
	runs, approvals := NewRunsAPI(core), NewApprovalsAPI(core)
	run, err := runs.Start(StartRun{WorkspaceID: ws.ID, Profile: profile, Task: "sleep"})
	if err != nil {
		t.Fatal(err)
	}
	a := waitApproval(t, approvals, run.ID)
	if _, err := approvals.Decide(backend.Decision{ApprovalID: a.ID, ToolCallID: a.ToolCallID,
		Kind: backend.ApproveOnce, SubjectHash: a.SubjectHash}); err != nil {
		t.Fatal(err)
	}
	pid := waitPID(t, filepath.Join(dir, "sleeper.pid"))

	results := make(chan backend.RunSummary, 3)
	for range 3 {
		go func() {
			r, err := runs.Cancel(run.ID)
			if err != nil {
				t.Error(err)
			}
			results <- r
		}()
	}
	for range 3 {
		if r := <-results; r.State != backend.RunCancelled {
			t.Fatalf("cancel returned %s, want Cancelled", r.State)
		}
	}
	if alive(pid) {
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		t.Fatalf("the shell's child %d outlived the cancel: %s", pid, stat)
	}
	if r, _ := runs.Cancel(run.ID); r.State != backend.RunCancelled {
		t.Fatalf("cancelling a cancelled run changed it: %s", r.State)
	}
	if err := core.Close(); err != nil {
		t.Fatal(err)
	}
}

func waitApproval(t *testing.T, a *ApprovalsAPI, runID string) backend.ApprovalRequest {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		list, err := a.ForRun(runID)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 {
			return list[0]
		}
	}
	t.Fatal("no approval requested")
	return backend.ApprovalRequest{}
}

func waitPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
	}
	t.Fatal("the command never started")
	return 0
}

// alive reports whether pid runs; a zombie (exited, not yet reaped by its
// new parent) does not count.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
