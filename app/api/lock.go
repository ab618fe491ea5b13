package api

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"agenthub/backend"
)

// Lock is an exclusive advisory lock on a file in the data directory. The
// window takes it so that a second window never becomes a second writer,
// even where the D-Bus single-instance lock is unavailable.
type Lock struct{ f *os.File }

// TryLock takes home/name without waiting; a holder elsewhere yields a
// conflict error that says what to do.
func TryLock(home, name string) (*Lock, error) {
	f, err := os.OpenFile(filepath.Join(home, name), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, &backend.Error{Code: backend.CodeConflict, Err: err,
			Message: fmt.Sprintf("AgentHub is already running with the data directory %s", DisplayPath(home)),
			Next:    "Switch to its window, or pass --home DIR for a separate data directory."}
	}
	return &Lock{f: f}, nil
}

// Release drops the lock.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
	}
}
