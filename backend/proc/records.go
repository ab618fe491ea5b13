package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Recovery: a process this package starts is meant to die with its owner
// (see supervise_linux.go), and the owner of a data directory also records
// each one, by pid and start time, so that its next start kills what a
// dead owner left anyway (a supervisor killed together with its owner
// leaves a command's daemons behind). The start time guards against a pid
// the system has since given to another process.

// procID names one process for as long as it lives: pid and start time
// (clock ticks since boot, /proc/PID/stat field 22).
type procID struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// procRecord is one file of the record directory.
type procRecord struct {
	Owner procID   `json:"owner"`
	Procs []procID `json:"procs"` // the supervisor (also the group), then the command
}

var records struct {
	mu  sync.Mutex
	dir string
}

// Adopt makes this process the owner of dir: it kills every process a
// previous owner recorded there that still runs (same pid and start time),
// then records there each process it starts until it exits. Call it once,
// as the owner of the data directory (after its lock is taken). It returns
// how many processes it killed.
func Adopt(dir string) (int, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("the process records: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return 0, fmt.Errorf("the process records: %w", err)
	}
	killed := 0
	var errs []error
	var victims []procID
	for _, f := range files {
		b, err := os.ReadFile(f)
		var rec procRecord
		if err == nil {
			err = json.Unmarshal(b, &rec)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("process record %s: %w", filepath.Base(f), err))
			_ = os.Remove(f)
			continue
		}
		// A live owner still runs it, this process included: one process
		// may hold several data directories' engines (the tests do), and
		// a record written under another engine of this process names
		// commands that engine still runs.
		if alive(rec.Owner) {
			continue
		}
		for i, p := range rec.Procs {
			if !alive(p) {
				continue
			}
			if i == 0 {
				_ = syscall.Kill(-p.Pid, syscall.SIGKILL) // the supervisor leads the group
			}
			if err := syscall.Kill(p.Pid, syscall.SIGKILL); err == nil {
				killed++
				victims = append(victims, p)
			}
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := awaitGone(victims, adoptWait); err != nil {
		errs = append(errs, err)
	}
	records.mu.Lock()
	records.dir = dir
	records.mu.Unlock()
	return killed, errors.Join(errs...)
}

// adoptWait bounds how long Adopt waits for what it killed to be gone.
const adoptWait = 30 * time.Second

// awaitGone waits until every process of ids has exited (a SIGKILLed
// process may still finish a system call it sleeps in, a write to disk
// among them): Adopt returns only once nothing a dead owner left can act,
// so a resumed run never overlaps the orphan of its own earlier command.
func awaitGone(ids []procID, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, id := range ids {
		for alive(id) {
			if time.Now().After(deadline) {
				return fmt.Errorf("process %d was killed but is still running after %v", id.Pid, limit)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// recordFile is one started process's record; remove deletes it.
type recordFile string

func (r recordFile) remove() {
	if r != "" {
		_ = os.Remove(string(r))
	}
}

// record writes the record of a started supervisor and its command, when
// this process owns a record directory.
func (p *Process) record() recordFile {
	records.mu.Lock()
	dir := records.dir
	records.mu.Unlock()
	if dir == "" {
		return ""
	}
	owner, _ := identify(os.Getpid())
	rec := procRecord{Owner: owner}
	for _, pid := range []int{p.cmd.Process.Pid, p.sup.commandPid()} {
		if id, ok := identify(pid); ok {
			rec.Procs = append(rec.Procs, id)
		}
	}
	if len(rec.Procs) == 0 {
		return ""
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return ""
	}
	path := filepath.Join(dir, strconv.Itoa(rec.Procs[0].Pid)+"-"+strconv.FormatUint(rec.Procs[0].Start, 10)+".json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "" // recovery is a second line of defence; the run goes on
	}
	return recordFile(path)
}

// identify reads pid's start time.
func identify(pid int) (procID, bool) {
	if pid <= 0 {
		return procID{}, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procID{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procID{}, false
	}
	fields := strings.Fields(s[i+1:]) // from field 3, the state
	if len(fields) < 20 || fields[0] == "Z" {
		return procID{}, false
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return procID{}, false
	}
	return procID{Pid: pid, Start: start}, true
}

// alive reports whether the process id still names the same process.
func alive(id procID) bool {
	now, ok := identify(id.Pid)
	return ok && now.Start == id.Start
}
