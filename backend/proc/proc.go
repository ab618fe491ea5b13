// Package proc is the only package that starts processes. Every child runs
// in its own process group, so a timeout or a cancel stops the whole tree it
// spawned; output is capped so a chatty child cannot exhaust memory. On
// Linux every child is started by a supervisor (supervise_linux.go) so that
// nothing it starts outlives AgentHub, confined by Landlock when the spec
// asks for it (backend/confine).
//
// It must not interpret what a child prints: callers parse output.
package proc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"agenthub/backend/confine"
)

// Spec describes one run of a command.
type Spec struct {
	Path      string        // absolute path of the executable
	Args      []string      // arguments, without the program name
	Dir       string        // working directory; empty means the current one
	Env       []string      // the whole environment; nil means an empty one
	Timeout   time.Duration // zero means no limit beyond ctx
	MaxOutput int           // bytes kept of stdout and of stderr each; zero means DefaultMaxOutput

	// Stdin keeps a pipe to the child's standard input open for
	// [Process.Stdin]; otherwise the child reads from an empty input.
	Stdin bool
	// Lines, when set, receives standard output line by line (without the
	// line break) as it arrives, instead of it being kept in the result. It
	// runs on the one goroutine that copies the output, so it sees lines in
	// order and must not block for long. A line longer than MaxLine arrives
	// cut to MaxLine bytes, with truncated set; the rest of it is dropped.
	// The slice is reused once Lines returns: copy what is kept.
	Lines   func(line []byte, truncated bool)
	MaxLine int // zero means DefaultMaxLine
	// Tee, when set, also receives standard output and standard error as
	// they arrive, interleaved in arrival order (a terminal's live view). The
	// two streams are copied on goroutines of their own, so it must be safe
	// for concurrent use. It gets every byte, also past MaxOutput, so it must
	// bound what it keeps itself.
	Tee io.Writer
	// StdoutPipe hands standard output to the caller as a stream
	// ([Process.Stdout]) for a protocol spoken over stdio (MCP). The caller
	// must keep reading it or close it; nothing is kept in the result.
	StdoutPipe bool
	// Confine, when set, confines the command and everything it starts
	// (see backend/confine); a private temp dir it asks for is made here,
	// named by TMPDIR and removed when the command ends. Where the kernel
	// lacks Landlock the command runs unconfined, as [confine.Describe]
	// says.
	Confine *confine.Rules
}

// DefaultMaxLine bounds one line given to [Spec.Lines]. Agent CLIs print a
// whole message per line, often far beyond bufio's 64 KiB default.
const DefaultMaxLine = 32 << 20

// DefaultMaxOutput caps each captured stream.
const DefaultMaxOutput = 1 << 20

// gracePeriod is how long a child has to exit after SIGTERM before the
// whole group gets SIGKILL.
const gracePeriod = 2 * time.Second

// killPeriod is how long the supervisor has to kill every descendant
// before its own group gets SIGKILL.
const killPeriod = time.Second

// ErrTimeout reports that a command ran past its Spec.Timeout.
var ErrTimeout = errors.New("command timed out")

// Result is what a finished command left behind.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int
	// Signal names the signal that ended the command ("SIGTERM"), if one
	// did; ExitCode is then -1.
	Signal    string
	Truncated bool // some output was dropped at MaxOutput
	// StdoutDropped and StderrDropped count the bytes dropped from each
	// stream, so callers can say how much is missing.
	StdoutDropped, StderrDropped int64
}

// Output runs spec to completion. A non-zero exit is not an error: the code
// is in the result. Timeout and cancellation stop the whole process group.
func Output(ctx context.Context, spec Spec) (Result, error) {
	p, err := Start(ctx, spec)
	if err != nil {
		return Result{}, err
	}
	return p.Wait()
}

// capped keeps the first limit bytes written and counts the rest as dropped.
type capped struct {
	buf     bytes.Buffer
	limit   int
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.limit - c.buf.Len()
	if room < len(p) {
		c.dropped += int64(len(p) - max(room, 0))
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}
