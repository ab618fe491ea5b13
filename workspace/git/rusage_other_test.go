//go:build !unix

package git

import "time"

// cpuTime is not measured off unix; benchmarks then report 0 CPU per op.
func cpuTime() time.Duration { return 0 }
