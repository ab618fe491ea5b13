package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrStopped reports that a command was ended by [Process.Stop].
var ErrStopped = errors.New("command stopped")

// Process is a started command. [Process.Wait] collects its result;
// [Process.Stop] ends its whole process group, so a run's cancel can reach a
// command while another goroutine waits for it. Its method set matches
// backend.Stopper without importing backend.
type Process struct {
	spec    Spec
	cmd     *exec.Cmd
	stdout  *capped
	stderr  *capped
	stdin   io.WriteCloser
	pipeR   *io.PipeReader // set with Spec.StdoutPipe
	pipeW   *io.PipeWriter
	lines   *lineWriter
	done    chan struct{}
	stopped atomic.Bool

	// Set by the waiter goroutine before done is closed.
	waitErr error
	ctxErr  error
}

// Start starts spec in its own process group. The timeout and ctx bound the
// whole run, as for [Output]; the process is always reaped by a goroutine of
// its own, so a caller that only calls Stop leaks nothing.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	var cancel context.CancelFunc
	if spec.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, spec.Timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	limit := spec.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	p := &Process{spec: spec, stdout: &capped{limit: limit}, stderr: &capped{limit: limit}, done: make(chan struct{})}
	p.cmd = command(ctx, spec)
	if err := p.wire(); err != nil {
		cancel()
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("run %s: %w", spec.Path, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		if p.lines != nil {
			p.lines.flush()
		}
		if p.pipeW != nil {
			_ = p.pipeW.Close() // the reader sees EOF after the last byte
		}
		// Read the context before cancelling it: a normal exit must not look
		// like a cancellation.
		p.ctxErr = ctx.Err()
		cancel()
		close(p.done)
	}()
	return p, nil
}

// wire connects the child's standard streams as the spec asks.
func (p *Process) wire() error {
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if t := p.spec.Tee; t != nil {
		p.cmd.Stdout, p.cmd.Stderr = io.MultiWriter(p.stdout, t), io.MultiWriter(p.stderr, t)
	}
	if p.spec.Lines != nil {
		p.lines = newLineWriter(p.spec.Lines, p.spec.MaxLine)
		p.cmd.Stdout = p.lines
	}
	if p.spec.StdoutPipe {
		// An io.Pipe rather than cmd.StdoutPipe: Wait then returns only once
		// everything the child wrote was read (or the reader closed), so the
		// caller never loses the last message of a child that exits.
		p.pipeR, p.pipeW = io.Pipe()
		p.cmd.Stdout = p.pipeW
	}
	if p.spec.Stdin {
		w, err := p.cmd.StdinPipe()
		if err != nil {
			return fmt.Errorf("stdin of %s: %w", p.spec.Path, err)
		}
		p.stdin = w
	}
	return nil
}

// Stdin is the write end of the child's standard input when [Spec.Stdin]
// is set, else nil. Closing it tells the child that no more input comes; it
// is closed for the caller once the child has exited.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the child's standard output as a stream when
// [Spec.StdoutPipe] is set, else nil. It ends with EOF once the child (and
// every process that shares its output) is done; closing it early makes
// further output from the child fail.
func (p *Process) Stdout() io.ReadCloser {
	if p.pipeR == nil {
		return nil
	}
	return p.pipeR
}

// Pid is the child's process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Wait blocks until the command has exited and its output is collected. A
// non-zero exit is not an error. Timeout ([ErrTimeout]), cancellation of the
// start context and [Process.Stop] ([ErrStopped]) are errors, with whatever
// output arrived before them in the result. Wait may be called repeatedly.
func (p *Process) Wait() (Result, error) {
	<-p.done
	res := Result{Stdout: p.stdout.buf.Bytes(), Stderr: p.stderr.buf.Bytes(),
		StdoutDropped: p.stdout.dropped, StderrDropped: p.stderr.dropped}
	res.Truncated = res.StdoutDropped > 0 || res.StderrDropped > 0
	if p.cmd.ProcessState != nil {
		res.ExitCode = p.cmd.ProcessState.ExitCode()
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = unix.SignalName(ws.Signal())
		}
	}
	var exit *exec.ExitError
	switch {
	case p.stopped.Load():
		return res, fmt.Errorf("%s: %w", p.spec.Path, ErrStopped)
	case errors.Is(p.ctxErr, context.DeadlineExceeded) && p.spec.Timeout > 0:
		return res, fmt.Errorf("%s after %s: %w", p.spec.Path, p.spec.Timeout, ErrTimeout)
	case p.ctxErr != nil:
		return res, fmt.Errorf("%s: %w", p.spec.Path, p.ctxErr)
	case errors.As(p.waitErr, &exit):
		return res, nil
	case errors.Is(p.waitErr, io.ErrClosedPipe) && p.spec.StdoutPipe:
		return res, nil // the caller closed Stdout: it wanted no more output
	case p.waitErr != nil:
		return res, fmt.Errorf("run %s: %w", p.spec.Path, p.waitErr)
	}
	return res, nil
}

// Done is closed when the command has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop sends SIGTERM to the whole process group, waits at most grace for the
// command to exit, then kills the group. Stopping a finished command does
// nothing, so a run may stop every process it ever tracked.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	p.stopped.Store(true)
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s: %w", p.spec.Path, err)
	}
	select {
	case <-p.done:
		// The leader is gone; children that ignored SIGTERM are not.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return nil
	case <-time.After(grace):
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s: %w", p.spec.Path, err)
	}
	select {
	case <-p.done:
	case <-time.After(gracePeriod + time.Second):
		// WaitDelay bounds this; do not hang a cancel on a stuck pipe.
	}
	return nil
}

// KillGroup kills every process left in the command's process group, also
// after the leader exited: a child that exits when its input closes may
// leave its own children running, and [Process.Stop] does nothing once the
// leader is gone. Call it right after the leader ended (its group id is
// still held by any member that is left).
func (p *Process) KillGroup() error {
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill the group of %s: %w", p.spec.Path, err)
	}
	return nil
}
