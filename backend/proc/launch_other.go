//go:build !linux

package proc

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

// supervision is a no-op where there is no supervisor.
type supervision struct{ active bool }

func (s *supervision) result(*Result) {}

func (s *supervision) commandPid() int { return 0 }

// launch starts the command directly in its own process group.
func (p *Process) launch(ctx context.Context, cancel context.CancelFunc) error {
	cmd := exec.CommandContext(ctx, p.spec.Path, p.spec.Args...)
	cmd.Dir = p.spec.Dir
	cmd.Env = p.spec.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = p.terminate
	cmd.WaitDelay = gracePeriod + killPeriod + time.Second
	p.cmd = cmd
	if err := p.wire(); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { p.finish(ctx, cancel, cmd.Wait()) }()
	return nil
}
