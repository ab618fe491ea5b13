package engineclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"agenthub/backend"
	"agenthub/backend/proc"
)

// Files of the data directory the start uses.
const (
	StartLock = "engine.start" // held while one client starts the engine
	LogName   = "engine.log"   // the background engine's stdout and stderr
)

// StartOptions say how to start the engine when none runs.
type StartOptions struct {
	Exe     string        // the agenthub program, run as `Exe engine --home HOME`
	Env     []string      // its environment (the starting command's)
	Timeout time.Duration // how long to wait for its socket; 0 = 30 s
}

// Ensure connects to the engine of home, starting it in the background
// first when none runs. Clients that race take the data directory's start
// lock in turn, so exactly one starts it and the others find it running.
func Ensure(ctx context.Context, home string, o StartOptions) (*Client, error) {
	if c, err := Dial(home); err == nil {
		return c, nil
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	unlock, err := lockStart(ctx, home)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if c, err := Dial(home); err == nil {
		return c, nil
	}
	logPath := filepath.Join(home, LogName)
	rotateLog(logPath)
	d, err := proc.StartDaemon(o.Exe, []string{"engine", "--home", home}, o.Env, "/", logPath)
	if err != nil {
		return nil, unavailable(err, "the engine could not be started")
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := Dial(home); err == nil {
			return c, nil
		}
		select {
		case err := <-d.Exited():
			return nil, unavailable(err, "the engine stopped while starting: "+lastLine(logPath))
		case <-ctx.Done():
			return nil, unavailable(ctx.Err(), fmt.Sprintf("the engine (pid %d) did not open its socket within %s", d.Pid, o.Timeout))
		case <-tick.C:
		}
	}
}

// maxLog is the size past which a start keeps the engine's log as
// engine.log.1 (replacing the one before) and begins a new one, so a data
// directory used for months does not collect an unbounded log.
const maxLog = 8 << 20

func rotateLog(path string) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLog {
		_ = os.Rename(path, path+".1") // a failed rename only leaves the log growing
	}
}

// lockStart takes the start lock, waiting for another starter until ctx
// ends.
func lockStart(ctx context.Context, home string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(home, StartLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the engine start lock: %w", err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("take the engine start lock: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, unavailable(ctx.Err(), "another command has been starting the engine for too long")
		case <-tick.C:
		}
	}
}

// lastLine is the engine's last error line in its log (else its last
// line): what it said before it stopped.
func lastLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i := len(lines) - 1; i >= 0; i-- { // the error line, before its next step
		if strings.HasPrefix(lines[i], "agenthub: ") {
			return strings.TrimPrefix(lines[i], "agenthub: ")
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

func unavailable(err error, msg string) error {
	return &backend.Error{Code: backend.CodeEngineUnavailable, Err: err, Message: msg,
		Next: "Read engine.log in the data directory, then start it in the foreground to see why: agenthub engine"}
}
