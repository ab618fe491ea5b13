//go:build !unix

package worktree

import "time"

// cpuTime is not measured off unix; the benchmark then reports 0 CPU per op.
func cpuTime() time.Duration { return 0 }
