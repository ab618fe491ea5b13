package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"agenthub/backend/confine"
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

	tmp string // the private temp dir, removed at the end
	sup supervision

	// Set by the waiter goroutine before done is closed.
	waitErr error
	ctxErr  error
}

// Start starts spec in its own process group. The timeout and ctx bound the
// whole run, as for [Output]; the process is always reaped by a goroutine of
// its own, so a caller that only calls Stop leaks nothing.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if err := checkProgram(spec.Path); err != nil {
		return nil, err
	}
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
	if err := p.privateTemp(); err != nil {
		cancel()
		return nil, err
	}
	if err := p.launch(ctx, cancel); err != nil {
		cancel()
		p.removeTemp()
		return nil, fmt.Errorf("run %s: %w", spec.Path, err)
	}
	return p, nil
}

// checkProgram refuses a program that cannot be executed before anything
// starts, as exec would.
func checkProgram(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("run %s: %w", path, err)
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("run %s: %w", path, syscall.EACCES)
	}
	return nil
}

// privateTemp makes the private temp dir the confinement asks for, and
// names it in the child's TMPDIR.
func (p *Process) privateTemp() error {
	r := p.spec.Confine
	if r == nil || !r.PrivateTemp {
		return nil
	}
	dir, err := os.MkdirTemp("", "agenthub-cmd-")
	if err != nil {
		return fmt.Errorf("run %s: a private temp dir: %w", p.spec.Path, err)
	}
	p.tmp = dir
	rules := *r
	rules.Write = append(slices.Clip(rules.Write), confine.Dir{Path: dir, Label: confine.LabelTemp})
	rules.PrivateTemp = false
	p.spec.Confine = &rules
	env := slices.DeleteFunc(slices.Clone(p.spec.Env), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	p.spec.Env = append(env, "TMPDIR="+dir)
	return nil
}

func (p *Process) removeTemp() {
	if p.tmp != "" {
		_ = os.RemoveAll(p.tmp)
	}
}

// finish runs once the child has been reaped: it delivers the last output,
// records why it ended and closes done.
func (p *Process) finish(ctx context.Context, cancel context.CancelFunc, waitErr error) {
	p.waitErr = waitErr
	if p.lines != nil {
		p.lines.flush()
	}
	if p.pipeW != nil {
		_ = p.pipeW.Close() // the reader sees EOF after the last byte
	}
	p.removeTemp()
	// Read the context before cancelling it: a normal exit must not look
	// like a cancellation.
	p.ctxErr = ctx.Err()
	cancel()
	close(p.done)
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

// Pid is the child's process id, which is also its process group id. On
// Linux the child is the supervisor, and the command is in its group.
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
	p.sup.result(&res) // the command's own status, which the supervisor reported
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
// command to exit, then kills the group and everything the command
// started. Stopping a finished command does nothing, so a run may stop
// every process it ever tracked.
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
	if err := p.kill(); err != nil {
		return fmt.Errorf("kill %s: %w", p.spec.Path, err)
	}
	select {
	case <-p.done:
	case <-time.After(gracePeriod + killPeriod + time.Second):
		// WaitDelay bounds this; do not hang a cancel on a stuck pipe.
	}
	return nil
}

// terminate is the context's cancellation: SIGTERM to the group, then,
// after the grace period, the kill.
func (p *Process) terminate() error {
	err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	time.AfterFunc(gracePeriod, func() { _ = p.kill() })
	return err
}

// kill ends everything: the supervisor kills every descendant of the
// command (also those that left its group), then the group gets SIGKILL.
func (p *Process) kill() error {
	pgid := p.cmd.Process.Pid
	if p.sup.active {
		_ = syscall.Kill(pgid, syscall.SIGUSR1)
		select {
		case <-p.done:
		case <-time.After(killPeriod):
		}
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
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
