package proc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"agenthub/backend/confine"
)

// selfExe re-executes this very binary, also once it was replaced on disk.
const selfExe = "/proc/self/exe"

// lifeline is a pipe whose write end only this process holds (close on
// exec, never closed): each supervisor gets the read end and sees EOF when
// this process is gone, however it died.
var lifeline struct {
	once sync.Once
	r, w *os.File
	err  error
}

func lifelineReader() (*os.File, error) {
	lifeline.once.Do(func() { lifeline.r, lifeline.w, lifeline.err = os.Pipe() })
	return lifeline.r, lifeline.err
}

// supervision is the parent's side of a supervisor.
type supervision struct {
	active bool
	status supervisorStatus
}

// commandPid is the command's pid, which the supervisor reported.
func (s *supervision) commandPid() int { return s.status.pid }

// result replaces the supervisor's exit with the command's own.
func (s *supervision) result(res *Result) {
	switch {
	case s.status.exited:
		res.ExitCode, res.Signal = s.status.code, ""
	case s.status.signaled:
		res.ExitCode, res.Signal = -1, unix.SignalName(s.status.signal)
	}
}

// launch starts the supervisor, hands it the command, waits until the
// command runs (or could not be started) and reaps it on a goroutine that
// holds its OS thread for the child's whole life: the child's parent-death
// signal fires when the thread that forked it ends.
func (p *Process) launch(ctx context.Context, cancel context.CancelFunc) error {
	life, err := lifelineReader()
	if err != nil {
		return fmt.Errorf("the lifeline pipe: %w", err)
	}
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("the configuration pipe: %w", err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		_, _ = cfgR.Close(), cfgW.Close()
		return fmt.Errorf("the status pipe: %w", err)
	}
	cfg := supervisorConfig{Path: p.spec.Path, Args: p.spec.Args, Env: p.spec.Env}
	if cfg.Env == nil {
		cfg.Env = []string{}
	}
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if p.spec.Confine != nil {
		support := confine.Probe()
		cfg.Rules, cfg.ABI = p.spec.Confine, support.ABI
		if p.spec.Confine.Isolated(support) {
			// No network was granted: the supervisor, and so the command
			// and all it starts, get network and user namespaces of their
			// own (confine.NetNSAttr): no TCP, UDP, DNS or raw socket
			// reaches the host.
			cfg.NetNS, attr = true, confine.NetNSAttr(attr)
		}
	}
	cmd := exec.CommandContext(ctx, supervisorProgram())
	cmd.Args = []string{"agenthub-supervise", p.spec.Path}
	cmd.Dir = p.spec.Dir
	cmd.Env = []string{supervisorEnv + "=1"}
	cmd.ExtraFiles = []*os.File{cfgR, life, statusW} // fdConfig, fdLifeline, fdStatus
	cmd.SysProcAttr = attr
	cmd.Cancel = p.terminate
	cmd.WaitDelay = gracePeriod + killPeriod + time.Second
	p.cmd, p.sup.active = cmd, true
	if err := p.wire(); err != nil {
		_, _, _, _ = cfgR.Close(), cfgW.Close(), statusR.Close(), statusW.Close()
		return err
	}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		_, _ = cfgR.Close(), statusW.Close()
		if err != nil {
			_, _ = cfgW.Close(), statusR.Close()
			started <- err
			return
		}
		go func() {
			_ = json.NewEncoder(cfgW).Encode(cfg) // a failed write shows as the supervisor's error
			_ = cfgW.Close()
		}()
		status := bufio.NewReader(statusR)
		err = parseStatus(status, &p.sup.status)
		switch {
		case err != nil && ctx.Err() != nil: // cancelled or timed out while starting
			err = ctx.Err()
			if errors.Is(err, context.DeadlineExceeded) && p.spec.Timeout > 0 {
				err = ErrTimeout
			}
		case err != nil:
			err = errors.New("the supervisor ended before starting it")
		case p.sup.status.err != "":
			err = errors.New(p.sup.status.err)
		}
		var record recordFile
		if err == nil {
			record = p.record() // before Start returns: the owner's next start must find it
		}
		started <- err
		waitErr := cmd.Wait()
		for parseStatus(status, &p.sup.status) == nil {
		}
		_ = statusR.Close()
		record.remove()
		p.finish(ctx, cancel, waitErr)
	}()
	return <-started
}
