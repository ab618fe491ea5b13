//go:build unix

package workspace

import "syscall"

// nonBlocking is added to every open of a workspace entry: opening a FIFO
// for reading otherwise blocks until a writer appears (forever, for a FIFO a
// cloned repository ships), and the file's type is only known once it is
// open. Reads and writes of regular files ignore the flag.
const nonBlocking = syscall.O_NONBLOCK
