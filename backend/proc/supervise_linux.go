package proc

// The supervisor: every child proc starts is AgentHub's own binary
// re-executed (this package's init sees supervisorEnv and never returns),
// which then starts the command. It exists so that nothing a command starts
// outlives AgentHub:
//
//   - it is a child subreaper (PR_SET_CHILD_SUBREAPER): whatever the command
//     starts, also a daemon that calls setsid and forks twice, stays its
//     descendant, so it can find and kill all of it;
//   - it learns of AgentHub's death twice over: a parent-death signal
//     (SIGTERM, set before exec; AgentHub's starting goroutine holds its
//     thread until the child is reaped, as the signal follows the parent
//     thread) and a lifeline pipe whose write end only AgentHub holds (EOF
//     when it dies, whatever killed it); either way it kills every
//     descendant and exits;
//   - the command gets SIGKILL as its own parent-death signal, so it dies
//     with the supervisor even when the supervisor is killed first;
//   - it applies the Landlock rules (backend/confine) to the thread that
//     forks the command, so the command and all it starts are confined;
//   - when the command may use no network, proc starts it in network and
//     user namespaces of its own; it brings their loopback up and drops
//     the capability that took before the command starts;
//   - when the command exits, it kills what the command left running,
//     reaps everything and reports the command's status over a pipe.
//
// Signals: the supervisor and the command share one process group, so
// proc's SIGTERM to the group reaches the command directly; the supervisor
// ignores it unless AgentHub is gone. SIGUSR1 asks it to kill every
// descendant (proc's escalation, before SIGKILL of the group).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"agenthub/backend/confine"
)

// supervisorEnv marks the re-executed binary as a supervisor; it is the
// only variable of its environment.
const supervisorEnv = "AGENTHUB_PROC_SUPERVISOR"

// The supervisor's inherited descriptors, after stdin, stdout and stderr.
const (
	fdConfig   = 3 // read: the supervisorConfig, JSON, then EOF
	fdLifeline = 4 // read: EOF when AgentHub is gone
	fdStatus   = 5 // write: "started PID", then "exit N", "signal N" or "error TEXT"
)

// supervisorConfig is what the supervisor starts.
type supervisorConfig struct {
	Path  string         `json:"path"`
	Args  []string       `json:"args"`
	Env   []string       `json:"env"`
	Rules *confine.Rules `json:"rules,omitempty"`
	ABI   int            `json:"abi"`
	// NetNS: the supervisor was started in namespaces of its own
	// (confine.NetNSAttr) and must set them up before the command starts.
	NetNS bool `json:"netns,omitempty"`
}

func init() {
	if os.Getenv(supervisorEnv) != "1" {
		return
	}
	os.Exit(supervise())
}

// supervise runs on the main thread (init holds it), which it keeps: the
// command is forked from it, confined, with its parent-death signal tied
// to it.
func supervise() int {
	runtime.LockOSThread()
	status := os.NewFile(fdStatus, "status")
	report := func(format string, args ...any) { fmt.Fprintf(status, format+"\n", args...) }
	for _, fd := range []int{fdConfig, fdLifeline, fdStatus} {
		syscall.CloseOnExec(fd)
	}
	var cfg supervisorConfig
	if err := json.NewDecoder(os.NewFile(fdConfig, "config")).Decode(&cfg); err != nil {
		report("error read the supervisor's configuration: %v", err)
		return 125
	}
	_ = unix.Close(fdConfig)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		report("error become a subreaper: %v", err)
		return 125
	}
	s := &supervisor{}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1)
	lifeline := os.NewFile(fdLifeline, "lifeline")
	gone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, lifeline) // returns at EOF: AgentHub is gone
		close(gone)
	}()
	go s.handle(sigs, gone)
	if cfg.NetNS {
		if err := confine.EnterIsolation(); err != nil {
			report("error confine %s: %v", cfg.Path, err)
			return 125
		}
		// The namespace has no way out: TCP inside it reaches only its own
		// loopback, which Landlock need not refuse (a test suite's local
		// server keeps working).
		rules := *cfg.Rules
		rules.Network = confine.Network{Any: true}
		cfg.Rules = &rules
	}
	if cfg.Rules != nil {
		if err := cfg.Rules.Apply(cfg.ABI); err != nil {
			report("error confine %s: %v", cfg.Path, err)
			return 125
		}
	}
	argv := append([]string{cfg.Path}, cfg.Args...)
	child, err := os.StartProcess(cfg.Path, argv, &os.ProcAttr{Env: cfg.Env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}})
	if err != nil {
		report("error %v", err)
		return 126
	}
	report("started %d", child.Pid)
	ws := s.reap(child.Pid)
	// The last sweep runs off this thread: it is confined, and the rules
	// need not let it read /proc.
	swept := make(chan struct{})
	go func() {
		s.killAll(true)
		close(swept)
	}()
	<-swept
	if ws.Signaled() {
		report("signal %d", int(ws.Signal()))
		return 128 + int(ws.Signal())
	}
	report("exit %d", ws.ExitStatus())
	return ws.ExitStatus()
}

// supervisor is the state of the supervising process; its work is in
// its methods.
type supervisor struct{}

// handle acts on signals and on AgentHub's death.
func (s *supervisor) handle(sigs <-chan os.Signal, gone <-chan struct{}) {
	for {
		select {
		case <-gone:
			s.killAll(false)
			os.Exit(137)
		case sig := <-sigs:
			select {
			case <-gone: // a parent-death signal, or a signal racing it
				s.killAll(false)
				os.Exit(137)
			default:
			}
			if sig == syscall.SIGUSR1 {
				s.killAll(false)
			}
			// Any other signal reached the command through the group.
		}
	}
}

// reap waits for the command, reaping every orphan that was handed to the
// supervisor on the way.
func (s *supervisor) reap(pid int) syscall.WaitStatus {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil: // ECHILD cannot happen while the command lives
			return ws
		case got == pid:
			return ws
		}
	}
}

// killAll sends SIGKILL to every descendant until none is left; with reap
// it also reaps them until there is no child at all (only the main loop
// reaps, so that it alone sees the command's status).
func (s *supervisor) killAll(reap bool) {
	self := os.Getpid()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		kids := descendants(self)
		for _, pid := range kids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		switch {
		case !reap && len(kids) == 0:
			return
		case reap && reapAll():
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// reapAll reaps every child that has exited; it reports whether none is
// left.
func reapAll() bool {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.ECHILD:
			return true
		case err == syscall.EINTR:
		case err != nil || got <= 0:
			return false
		}
	}
}

// descendants lists the live (not yet dead) processes below pid, from each
// one's /proc/PID/task/TID/children; orphans were handed to the subreaper,
// so they are its children.
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(p) + "/task/*/children")
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, field := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(field); err == nil && !zombie(c) {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // gone
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

// readStatus reads the supervisor's status lines.
type supervisorStatus struct {
	pid      int
	err      string
	exited   bool
	code     int
	signaled bool
	signal   syscall.Signal
}

func parseStatus(r *bufio.Reader, st *supervisorStatus) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	verb, arg, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	n, _ := strconv.Atoi(arg)
	switch verb {
	case "started":
		st.pid = n
	case "exit":
		st.exited, st.code = true, n
	case "signal":
		st.signaled, st.signal = true, syscall.Signal(n)
	case "error":
		st.err = arg
	}
	return nil
}
