//go:build unix

package workspace

import (
	"io/fs"
	"os"
	"syscall"
)

// linkCount returns the hard-link count of an open regular file.
func linkCount(_ *os.File, fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// statLinkCount returns the hard-link count from a stat result.
func statLinkCount(_ *os.Root, _ string, fi fs.FileInfo) uint64 { return linkCount(nil, fi) }
