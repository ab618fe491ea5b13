//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// deviceOf returns the device a file lives on, for the same-filesystem check
// that a rename needs.
func deviceOf(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true //nolint:unconvert // Dev is int32 on some unix systems
}
