//go:build linux

package proc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestStopReachesADaemon: a grandchild that left the command's process
// group and session (setsid after a double fork) is killed by Stop too.
func TestStopReachesADaemon(t *testing.T) {
	dir := t.TempDir()
	p, err := Start(t.Context(), Spec{Path: "/bin/sh", Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Args: []string{"-c",
		`( setsid sh -c 'trap "" TERM HUP; echo $$ > daemon.pid; exec sleep 60' & ); sleep 60`}})
	if err != nil {
		t.Fatal(err)
	}
	id, ok := identify(waitPID(t, filepath.Join(dir, "daemon.pid")))
	if !ok {
		t.Fatal("the daemon is not running")
	}
	if err := p.Stop(100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitGoneID(t, id)
}

// TestLeftoversDieWithTheCommand: what a command leaves running when it
// exits is killed then, and Wait returns at once with its exit code.
func TestLeftoversDieWithTheCommand(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	res, err := Output(t.Context(), Spec{Path: "/bin/sh", Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Args: []string{"-c",
		`( setsid sh -c 'echo $$ > daemon.pid; exec sleep 60' >/dev/null 2>&1 & ); until test -s daemon.pid; do :; done; exit 5`}})
	if err != nil || res.ExitCode != 5 {
		t.Fatalf("Output = %+v, %v", res, err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Output returned after %s", took)
	}
	b, err := os.ReadFile(filepath.Join(dir, "daemon.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b[:len(b)-1]))
	if err := syscall.Kill(pid, 0); err == nil {
		if id, ok := identify(pid); ok {
			waitGoneID(t, id)
		}
	}
}

// TestSignalIsTheCommands: a command ended by a signal reports that
// signal, not the supervisor's exit.
func TestSignalIsTheCommands(t *testing.T) {
	res, err := Output(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c", `kill -TERM $$`}})
	if err != nil || res.Signal != "SIGTERM" || res.ExitCode != -1 {
		t.Fatalf("Output = %+v, %v", res, err)
	}
}

// TestAdoptKillsWhatADeadOwnerLeft: a record of a dead owner's process
// that still runs is killed at the next owner's start; a record whose pid
// now names another process (start time differs) is left alone.
func TestAdoptKillsWhatADeadOwnerLeft(t *testing.T) {
	dir := t.TempDir()
	orphan, err := os.StartProcess("/bin/sleep", []string{"sleep", "60"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { _, _ = orphan.Wait(); close(reaped) }()
	id, ok := identify(orphan.Pid)
	if !ok {
		t.Fatal("no start time for the orphan")
	}
	reused := id
	reused.Start-- // the same pid, another process
	deadOwner := procID{Pid: 1 << 30, Start: 1}
	write := func(name string, rec procRecord) {
		b, _ := json.Marshal(rec)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("reused.json", procRecord{Owner: deadOwner, Procs: []procID{reused}})
	killed, err := Adopt(dir)
	if err != nil || killed != 0 {
		t.Fatalf("Adopt with a reused pid: killed %d, %v", killed, err)
	}
	if !alive(id) {
		t.Fatal("a process whose pid was reused was killed")
	}
	write("left.json", procRecord{Owner: deadOwner, Procs: []procID{id}})
	if killed, err = Adopt(dir); err != nil || killed != 1 {
		t.Fatalf("Adopt: killed %d, %v", killed, err)
	}
	// Adopt returns only once what it killed runs no more (issue 15: a
	// resume must not overlap its own earlier command's orphan).
	if alive(id) {
		t.Fatal("Adopt returned while the process it killed still ran")
	}
	select {
	case <-reaped:
	case <-time.After(30 * time.Second):
		t.Fatal("the dead owner's process still runs")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(left) != 0 {
		t.Errorf("records left: %v", left)
	}
	// A record of a live owner, this process too (a second engine in it),
	// names commands that owner still runs: never killed.
	self, _ := identify(os.Getpid())
	live, err := os.StartProcess("/bin/sleep", []string{"sleep", "60"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.Kill(); _, _ = live.Wait() }()
	liveID, _ := identify(live.Pid)
	write("mine.json", procRecord{Owner: self, Procs: []procID{liveID}})
	if killed, err = Adopt(dir); err != nil || killed != 0 || !alive(liveID) {
		t.Fatalf("Adopt killed %d of a live owner's processes (%v)", killed, err)
	}
	records.mu.Lock()
	records.dir = ""
	records.mu.Unlock()
}

// TestRecordsLiveWhileTheCommandRuns: the owner records a command while it
// runs and removes the record when it ends.
func TestRecordsLiveWhileTheCommandRuns(t *testing.T) {
	dir := t.TempDir()
	if _, err := Adopt(dir); err != nil {
		t.Fatal(err)
	}
	defer func() {
		records.mu.Lock()
		records.dir = ""
		records.mu.Unlock()
	}()
	p, err := Start(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c", "exec sleep 60"}})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("records: %v", files)
	}
	var rec procRecord
	if b, err := os.ReadFile(files[0]); err != nil || json.Unmarshal(b, &rec) != nil || len(rec.Procs) != 2 ||
		rec.Procs[0].Pid != p.Pid() {
		t.Fatalf("record %+v (%v)", rec, err)
	}
	_ = p.Stop(0)
	if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
		t.Errorf("the record outlived the command (%v)", err)
	}
}
