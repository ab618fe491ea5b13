package hostile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// childEnv marks the test binary started as `agenthub` itself: the process
// a crash test kills with SIGKILL.
const childEnv = "HOSTILE_AGENTHUB_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		env := map[string]string{}
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
		os.Exit(runMain(context.Background(), env, os.Stdout, os.Stderr, os.Args[1:]...))
	}
	os.Exit(runSuite(m)) // speed_test.go: a small supervisor program first
}

// procCases run a command that leaves processes behind; each process the
// command starts carries HOSTILE_NONCE=<nonce> in its environment, which
// is how the test finds them in /proc.
var procCases = []struct {
	name    string
	command string
	kill9   bool // SIGKILL agenthub while the command runs; else let the run end
}{
	{"kill9-during-command", "HOSTILE_NONCE={N} sleep 300", true},
	{"kill9-setsid-child", "HOSTILE_NONCE={N} setsid sleep 300 & HOSTILE_NONCE={N} sleep 300", true},
	{"kill9-nohup-background", "HOSTILE_NONCE={N} nohup sleep 300 >/dev/null 2>&1 & HOSTILE_NONCE={N} sleep 300", true},
	{"setsid-daemon-outlives-run", "HOSTILE_NONCE={N} setsid sleep 300 >/dev/null 2>&1 < /dev/null & {WAIT}", false},
	{"double-fork-daemon-outlives-run", "(HOSTILE_NONCE={N} sleep 300 >/dev/null 2>&1 < /dev/null &) ; {WAIT}", false},
}

// playProcs runs each case's command in `agenthub run` started as a
// process of its own (this test binary, re-executed), approves it, and
// then either kills agenthub with SIGKILL while the command runs, or lets
// the run finish: no process the command started may be left (issue 14
// item 9). Survivors are killed by the test, by their pid.
func playProcs(t *testing.T, l *ledger) {
	var wg sync.WaitGroup
	for i, c := range procCases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(c.name, func(t *testing.T) { playProc(t, l, i, c.name, c.command, c.kill9) })
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.Run("environ", func(t *testing.T) { playEnvironLeak(t, l) })
	}()
	wg.Wait()
}

func playProc(t *testing.T, l *ledger, i int, name, command string, kill9 bool) {
	w := newWorld(t)
	nonce := fmt.Sprintf("hostile-%d-%d", os.Getpid(), i)
	// {WAIT} holds the command until the test saw its processes, so that
	// a daemon killed with the command is seen first.
	cmdText := strings.NewReplacer("{N}", nonce, "{WAIT}", "while [ ! -e seen ]; do sleep 0.1; done").Replace(command)
	w.putScriptProfile("proc", script(call{Tool: "run_shell", Args: map[string]any{"command": cmdText, "timeout_seconds": 600}}), "10m")
	child := exec.Command(os.Args[0], "run", "--workspace", w.ws, "--profile", "proc", "--on-approval", "approve", "--json", "do the task")
	child.Env = []string{childEnv + "=1", "AGENTHUB_HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	var out syncBuffer
	child.Stdout, child.Stderr = &out, &out
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, child.Start())
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	t.Cleanup(func() {
		_ = child.Process.Kill()
		for _, pid := range noncePIDs(nonce) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if !waitFor(60*time.Second, func() bool { return len(noncePIDs(nonce)) > 0 }) {
		t.Fatalf("the command never started:\n%s", lastLine(out.String()))
	}
	must(t, os.WriteFile(filepath.Join(w.ws, "seen"), nil, 0o644))
	how := "ended the run"
	if kill9 {
		how = "was killed with SIGKILL"
		must(t, child.Process.Signal(syscall.SIGKILL))
		<-exited
	} else {
		select {
		case <-exited:
		case <-time.After(90 * time.Second):
			t.Fatalf("the run did not end:\n%s", lastLine(out.String()))
		}
	}
	gone := waitFor(20*time.Second, func() bool { return len(noncePIDs(nonce)) == 0 })
	l.check(t, "proc/"+name, gone, "processes of the command still run 20 s after agenthub %s: %v", how, noncePIDs(nonce))
}

// noncePIDs lists the processes whose environment holds HOSTILE_NONCE=nonce.
func noncePIDs(nonce string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	needle := []byte("HOSTILE_NONCE=" + nonce + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(env, 0), needle) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(stat), ") Z ") {
			continue // a zombie holds nothing
		}
		pids = append(pids, pid)
	}
	return pids
}

// playEnvironLeak runs agenthub as a process of its own with a secret in
// its environment (as a user who exported a token in the shell that
// started it) and has an approved command read AgentHub's environment
// through /proc: the secret must not reach the command's output, the
// events or the database.
func playEnvironLeak(t *testing.T, l *ledger) {
	w := newWorld(t)
	secret := "env-" + entropy("agenthub-environ", hexLow, 40)
	cmdText := `p=$(ps -o ppid= -p $PPID | tr -d ' '); cat /proc/$PPID/environ /proc/$p/environ 2>&1 | tr '\0' '\n'`
	w.putScriptProfile("environ", script(call{Tool: "run_shell", Args: map[string]any{"command": cmdText, "timeout_seconds": 30}}), "2m")
	child := exec.Command(os.Args[0], "run", "--workspace", w.ws, "--profile", "environ", "--on-approval", "approve", "--json", "do the task")
	child.Env = []string{childEnv + "=1", "AGENTHUB_HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"HOSTILE_EXPORTED_TOKEN=" + secret}
	var out syncBuffer
	child.Stdout, child.Stderr = &out, &out
	must(t, child.Start())
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	select {
	case <-exited:
	case <-time.After(2 * time.Minute):
		_ = child.Process.Kill()
		t.Fatalf("the run did not end:\n%s", lastLine(out.String()))
	}
	if len(toolResults(decodeEvents(out.String()))) != 1 {
		t.Fatalf("the command did not run:\n%s", lastLine(out.String()))
	}
	where := secretLeaks(w.dataFiles(), out.String(), "", secret)
	l.check(t, "proc/agenthub-environ-read-by-command", len(where) == 0,
		"a secret in AgentHub's own environment reached: %s", strings.Join(where, ", "))
}
