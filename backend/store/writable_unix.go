//go:build unix

package store

import (
	"errors"
	"path/filepath"
	"syscall"
)

// writable reports whether the database's directory (where SQLite creates
// its -wal and -shm files) and the file, if it exists, can be written.
// access(2) reports a read-only filesystem even to root.
func writable(path string) bool {
	if syscall.Access(filepath.Dir(path), 2) != nil { // W_OK
		return false
	}
	err := syscall.Access(path, 2)
	return err == nil || errors.Is(err, syscall.ENOENT)
}
