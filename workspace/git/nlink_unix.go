//go:build unix

package git

import (
	"io/fs"
	"syscall"
)

// linkCount is the hard-link count of a regular file (1 when unknown).
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink) //nolint:unconvert // Nlink is uint16 or uint32 on some unix systems
	}
	return 1
}
