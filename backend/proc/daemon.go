package proc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Daemon is a long-lived service started by [StartDaemon]: it outlives the
// process that started it, which only learns whether it exited early.
type Daemon struct {
	Pid    int
	exited chan error
}

// Exited delivers the service's exit once, if it exits while its starter
// still runs (a failed start: the starter reads the log then).
func (d *Daemon) Exited() <-chan error { return d.exited }

// StartDaemon starts path with args as a service in a session of its own
// (setsid): no terminal, so the starter's Ctrl-C and hang-up never reach
// it; stdin is /dev/null and stdout and stderr go to logPath (appended,
// mode 0600). Unlike [Start] nothing ties it to a context: the engine of a
// data directory must keep the runs going after the command that started it
// ends (issue 16).
func StartDaemon(path string, args, env []string, dir, logPath string) (*Daemon, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the service log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(path, args...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	d := &Daemon{Pid: cmd.Process.Pid, exited: make(chan error, 1)}
	go func() { d.exited <- cmd.Wait() }() // reaps it if it dies while we wait
	return d, nil
}
