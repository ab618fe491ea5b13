package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
)

func TestRunShellAction(t *testing.T) {
	f := newFixture(t)
	a := f.action(t, RunShell, `{"command":"go test ./...","timeout_seconds":30}`)
	if a == nil || a.Kind != backend.ActionShell || a.Title != "Run: go test ./..." || a.Risk != backend.RiskMedium {
		t.Fatalf("Action = %+v", a)
	}
	var subject map[string]string
	mustJSON(t, a.Subject, &subject)
	if diff := cmp.Diff(map[string]string{"kind": "shell", "command": "go test ./...", "cwd": "."}, subject); diff != "" {
		t.Errorf("subject (-want +got):\n%s", diff)
	}
	var pv shellPreview
	mustJSON(t, a.Preview, &pv)
	want := shellPreview{Command: "go test ./...", Shell: "/bin/sh -c", Cwd: ".", Env: []string{"HOME", "LANG", "PATH", "TERM",
		"GOCACHE", "GOMODCACHE", "npm_config_cache", "YARN_CACHE_FOLDER", "PIP_CACHE_DIR", "XDG_CACHE_HOME"},
		TimeoutSeconds: 30, Confinement: wantConfinement()}
	if diff := cmp.Diff(want, pv); diff != "" {
		t.Errorf("preview (-want +got):\n%s", diff)
	}
	f.noMachinePaths(t, "preview", string(a.Preview))

	if a := f.action(t, RunShell, `{"command":"rm -rf build"}`); a.Risk != backend.RiskHigh {
		t.Errorf("rm risk = %s, want high", a.Risk)
	}
	if a := f.action(t, RunShell, `{"command":"make\nmake install"}`); a.Title != "Run: make …" {
		t.Errorf("multi-line title = %q", a.Title)
	}
	var dflt shellPreview
	mustJSON(t, f.action(t, RunShell, `{"command":"ls"}`).Preview, &dflt)
	if dflt.TimeoutSeconds != 120 {
		t.Errorf("default timeout = %d", dflt.TimeoutSeconds)
	}
}

func TestRunShellOutput(t *testing.T) {
	f := newFixture(t)
	f.write(t, "hello.txt", "hi from the workspace\n")
	t.Setenv("AGENTHUB_TEST_SECRET", "sk-do-not-leak")
	tests := []struct {
		name, command string
		isErr         bool
		has           []string
		hasNot        []string
	}{
		{name: "stdout", command: "cat hello.txt", has: []string{"exit code: 0\n", "stdout:\nhi from the workspace\n", "stderr: (empty)\n"}},
		{name: "exit code and stderr", command: "echo out; echo oops >&2; exit 3", isErr: true,
			has: []string{"exit code: 3\n", "stdout:\nout\n", "stderr:\noops\n"}},
		{name: "runs in the root, shown as .", command: "pwd; ls \"$PWD\" >/dev/null; echo \"$(pwd)/hello.txt\"",
			has: []string{"stdout:\n.\n./hello.txt\n"}},
		{name: "home shown as ~", command: `echo "$HOME/x"`, has: []string{"stdout:\n~/x\n"}},
		{name: "minimal environment", command: "env | sort",
			has: []string{"TERM=dumb\n", "LANG=", "PATH="}, hasNot: []string{"sk-do-not-leak", "AGENTHUB_TEST_SECRET"}},
		{name: "no final newline", command: "printf abc", has: []string{"stdout:\nabc\nstderr:"}},
		{name: "command not found", command: "definitely-not-a-command-xyz", isErr: true, has: []string{"exit code: 127\n", "not found"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args, _ := json.Marshal(shellArgs{Command: tc.command})
			a, res := f.call(t, RunShell, string(args))
			if a == nil {
				t.Fatal("a shell command was not gated")
			}
			if res.IsError != tc.isErr {
				t.Errorf("IsError = %v, want %v:\n%s", res.IsError, tc.isErr, res.Content)
			}
			for _, h := range tc.has {
				if !strings.Contains(res.Content, h) {
					t.Errorf("result lacks %q:\n%s", h, res.Content)
				}
			}
			for _, h := range tc.hasNot {
				if strings.Contains(res.Content, h) {
					t.Errorf("result has %q:\n%s", h, res.Content)
				}
			}
			f.noMachinePaths(t, "result", res.Content)
		})
	}
}

func TestRunShellCapsOutput(t *testing.T) {
	f := newFixture(t)
	res := f.execute(t, RunShell, `{"command":"head -c 70000 /dev/zero | tr '\\0' a; head -c 10 /dev/zero | tr '\\0' b >&2"}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	_, rest, _ := strings.Cut(res.Content, "stdout:\n")
	out, _, _ := strings.Cut(rest, "\n")
	if len(out) != maxShellOutput || strings.Trim(out, "a") != "" {
		t.Errorf("stdout is %d bytes, want %d", len(out), maxShellOutput)
	}
	want := fmt.Sprintf("[stdout truncated: the first 64 KiB are shown, %d more bytes were dropped]", 70000-maxShellOutput)
	if !strings.Contains(res.Content, want) || !strings.Contains(res.Content, "stderr:\nbbbbbbbbbb\n") {
		t.Errorf("result tail: %q", res.Content[len(res.Content)-200:])
	}
	if strings.Contains(res.Content, "stderr truncated") {
		t.Errorf("stderr reported as truncated")
	}
}

// TestRunShellTimeoutKillsTheGroup: a command that ignores SIGTERM and leaves
// a grandchild behind is stopped, grandchild included, and the model is told.
func TestRunShellTimeoutKillsTheGroup(t *testing.T) {
	f := newFixture(t)
	start := time.Now()
	res := f.execute(t, RunShell, `{"command":"trap '' TERM; echo started; sleep 60 & echo $! > pid; wait","timeout_seconds":1}`)
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("Execute returned after %s", took)
	}
	if !res.IsError || !strings.Contains(res.Content, "timed out after 1s; the command and every process it started were killed") ||
		!strings.Contains(res.Content, "stdout:\nstarted\n") {
		t.Fatalf("result:\n%s", res.Content)
	}
	waitGone(t, readPID(t, filepath.Join(f.root, "pid")))
}

func TestRunShellIsTrackedAndStoppable(t *testing.T) {
	f := newFixture(t)
	done := make(chan backend.ToolResult, 1)
	go func() {
		res, err := f.tools[RunShell].Execute(context.Background(), f.env(),
			backend.ToolInput{Arguments: json.RawMessage(`{"command":"sleep 60 & echo $! > pid; wait"}`)})
		if err != nil {
			res = backend.ToolResult{Content: err.Error()}
		}
		done <- res
	}()
	var s backend.Stopper
	for deadline := time.Now().Add(10 * time.Second); s == nil; time.Sleep(10 * time.Millisecond) {
		f.mu.Lock()
		if len(f.tracked) > 0 {
			s = f.tracked[0]
		}
		f.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("the process was never tracked")
		}
	}
	pid := readPID(t, filepath.Join(f.root, "pid"))
	if err := s.Stop(200 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if !res.IsError || !strings.Contains(res.Content, "stopped: the run was cancelled") {
			t.Errorf("result:\n%s", res.Content)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Execute did not return after Stop")
	}
	waitGone(t, pid)
	if err := s.Stop(time.Second); err != nil {
		t.Errorf("stopping a finished process: %v", err)
	}
}

func TestRunShellCancel(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err := f.tools[RunShell].Execute(ctx, f.env(), backend.ToolInput{Arguments: json.RawMessage(`{"command":"sleep 60"}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Content, "stopped") {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", filepath.Base(path))
		}
	}
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d survived", pid)
		}
	}
}
