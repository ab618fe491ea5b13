//go:build unix

package store

import (
	"fmt"
	"os"
	"syscall"
)

// lockAnchor takes an exclusive lock on the anchor's lock file, so that two
// processes sharing a data directory (the window and a command line) never
// interleave their anchor writes.
func lockAnchor(dbPath string) (func(), error) {
	f, err := os.OpenFile(dbPath+".audit-lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the audit anchor: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the audit anchor: %w", err)
	}
	return func() { f.Close() }, nil // closing releases the lock
}
