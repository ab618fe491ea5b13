//go:build !unix && !windows

package workspace

import (
	"io/fs"
	"os"
)

// linkCount cannot be known on this platform; files are assumed unlinked.
func linkCount(_ *os.File, _ fs.FileInfo) uint64 { return 1 }

// statLinkCount cannot be known on this platform; files are assumed unlinked.
func statLinkCount(_ *os.Root, _ string, _ fs.FileInfo) uint64 { return 1 }
