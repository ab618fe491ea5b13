//go:build unix

package worktree

import (
	"syscall"
	"time"
)

// cpuTime is the user+system CPU used so far by this process and its waited
// children (every git command runs as a child). On a loaded, shared machine
// wall time per op swings with other load; CPU time much less.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
