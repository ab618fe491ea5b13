//go:build smoke

package desktop

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// app is a started agenthub process, its exit, and its stderr (also passed
// through to the test's) so that a crash can be quoted in the failure.
type app struct {
	cmd    *exec.Cmd
	exited chan error
	stderr *lockedBuffer
}

func startApp(t *testing.T, d *display, bin, home string) *app {
	t.Helper()
	return startAppArgs(t, d, bin, "--home", home)
}

func startAppArgs(t *testing.T, d *display, bin string, args ...string) *app {
	t.Helper()
	cmd := d.command(context.Background(), bin, args...)
	a := &app{cmd: cmd, exited: make(chan error, 1), stderr: &lockedBuffer{}}
	cmd.Stdout, cmd.Stderr = os.Stdout, io.MultiWriter(os.Stderr, a.stderr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() { a.exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return a
}

// crash quotes the start of a Go crash report from the app's stderr (the
// reason and the first frames), or says there was none. CI keeps only the
// tail of a long log, and the reason is at the head of the report.
func (a *app) crash() string {
	lines := strings.Split(a.stderr.String(), "\n")
	for i, line := range lines {
		if crashStart.MatchString(line) {
			return "\napp crash report:\n" + strings.Join(lines[i:min(len(lines), i+12)], "\n")
		}
	}
	return "\n(no crash report on the app's stderr)"
}

var crashStart = regexp.MustCompile(`^(panic: |fatal error: |SIG[A-Z]+: |signal \d+ received|unexpected fault)`)

// lockedBuffer is a bytes.Buffer written by the process's copier goroutine
// and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestWindowShowsFirstScreen(t *testing.T) {
	d := startDisplay(t)
	home := t.TempDir()
	a := startApp(t, d, binary(t), home)
	id, err := d.waitWindow(t, "AgentHub", a.exited, 60*time.Second)
	if err != nil {
		t.Fatal(err, a.crash())
	}
	// The window maps before the page renders; poll until the first screen
	// has painted rather than sleeping a fixed time.
	shot := filepath.Join(artifacts(t), "window.png")
	var v float64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if v = variance(d.screenshot(t, id, shot)); v > 50 {
			break
		}
	}
	if v <= 50 {
		t.Fatalf("the window looks blank: luminance variance %.1f (screenshot %s)", v, shot)
	}
	t.Logf("window %s painted, variance %.1f, screenshot %s", id, v, shot)

	t.Run("second instance does not open a second window", func(t *testing.T) {
		second := startApp(t, d, binary(t), home)
		select {
		case <-second.exited:
		case <-time.After(20 * time.Second):
			t.Fatal("the second instance kept running")
		}
		if n := len(d.windows(t, "AgentHub")); n != 1 {
			t.Fatalf("%d AgentHub windows, want 1", n)
		}
	})

	// Close the window the way a user would and expect a clean exit.
	if err := d.closeWindow(id); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.exited:
		if err != nil {
			t.Fatalf("the app did not exit cleanly: %v%s", err, a.crash())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the app did not exit within 15 s of closing its window")
	}
}

// TestDetectsBinaryWithoutDesktopTags proves the smoke test cannot be fooled
// by a binary that prints Wails' build-tag error and exits 0.
func TestDetectsBinaryWithoutDesktopTags(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "agenthub-notags")
	build := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", bin, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build without tags: %v\n%s", err, out)
	}
	d := startDisplay(t)
	a := startApp(t, d, bin, t.TempDir())
	if _, err := d.waitWindow(t, "AgentHub", a.exited, 20*time.Second); err == nil {
		t.Fatal("a binary built without the desktop tags showed a window")
	}
}
