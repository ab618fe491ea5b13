//go:build !unix

package git

import "io/fs"

// linkCount is 1 where the platform's stat does not report hard links; the
// workspace's own reads check them on the open handle (workspace.FS).
func linkCount(fs.FileInfo) uint64 { return 1 }
