package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOutput(t *testing.T) {
	tests := []struct {
		name      string
		script    string
		max       int
		wantOut   string
		wantCode  int
		truncated bool
	}{
		{name: "stdout", script: "printf hello", wantOut: "hello"},
		{name: "exit code is a result", script: "printf x; exit 7", wantOut: "x", wantCode: 7},
		{name: "environment is only what is given", script: `printf "%s" "${HOME:-unset}"`, wantOut: "unset"},
		{name: "output capped", script: "printf 0123456789", max: 4, wantOut: "0123", truncated: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Output(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c", tc.script}, MaxOutput: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(res.Stdout); got != tc.wantOut || res.ExitCode != tc.wantCode || res.Truncated != tc.truncated {
				t.Fatalf("got %q code %d truncated %v, want %q %d %v", got, res.ExitCode, res.Truncated, tc.wantOut, tc.wantCode, tc.truncated)
			}
		})
	}
}

// TestTimeoutKillsTheWholeGroup starts a shell that leaves a grandchild
// running and ignores SIGTERM; after the timeout no process of its group may
// remain. The timeout leaves a loaded machine (and -race) time to start the
// supervisor and the shell before it fires.
func TestTimeoutKillsTheWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `trap '' TERM; sleep 60 & echo $! > ` + pidFile + `; wait`
	start := time.Now()
	_, err := Output(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c", script}, Timeout: 5 * time.Second})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("Output returned after %s", waited)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return // gone
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still alive after the timeout", pid)
		}
	}
}

func TestCancelIsNotATimeout(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := Output(ctx, Spec{Path: "/bin/sh", Args: []string{"-c", "sleep 30"}, Timeout: time.Minute})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCaptureLoginPath(t *testing.T) {
	dir := t.TempDir()
	// A login shell whose profile adds a directory and prints noise, as
	// nvm's and Homebrew's setup lines do.
	shell := writeScript(t, dir, "fake-shell", `echo "welcome banner"
PATH=/opt/nvm/bin:$PATH
eval "$3"
echo "goodbye"`)
	got := CaptureLoginPath(t.Context(), shell, "/usr/bin:/bin")
	if got != "/opt/nvm/bin:/usr/bin:/bin" {
		t.Fatalf("login PATH = %q", got)
	}
	broken := writeScript(t, dir, "broken-shell", "exit 1")
	if got := CaptureLoginPath(t.Context(), broken, "/usr/bin"); got != "/usr/bin" {
		t.Fatalf("broken shell: %q, want the fallback", got)
	}
	if got := CaptureLoginPath(t.Context(), "", "/usr/bin"); got != "/usr/bin" {
		t.Fatalf("no shell: %q", got)
	}
}

func TestLook(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "claude", "exit 0")
	if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		found      bool
	}{
		{"claude", "/nonexistent:" + dir, true},
		{"claude", "relative:/nonexistent", false},
		{"plain", dir, false}, // not executable
		{"gemini", dir, false},
		{"../claude", dir, false},
	}
	for _, tc := range tests {
		p, err := Look(tc.name, tc.path)
		if (err == nil) != tc.found {
			t.Errorf("Look(%q, %q) = %q, %v", tc.name, tc.path, p, err)
		}
	}
}

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
