//go:build !unix

package workspace

import "io/fs"

// deviceOf cannot tell the device here: applies stage next to their
// targets, which is always the same filesystem.
func deviceOf(fs.FileInfo) (uint64, bool) { return 0, false }
