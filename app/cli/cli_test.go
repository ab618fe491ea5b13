package cli

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"agenthub/app/api"
)

// runCLI runs one command in-process with a private environment.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut syncBuffer
	code := mainWith(t, env, strings.NewReader(""), &out, &errOut, args...)
	return code, out.String(), errOut.String()
}

func mainWith(t *testing.T, env map[string]string, stdin io.Reader, stdout, stderr io.Writer, args ...string) int {
	t.Helper()
	return Main(Env{
		Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr, Context: t.Context(),
		Assets: fstest.MapFS{"index.html": {Data: []byte("x")}}, Version: "test",
		Getenv: func(k string) string { return env[k] },
		Window: func(*api.Core, fs.FS) error { t.Error("the window must not open in this test"); return nil },
	})
}

func TestUsageErrorsExit2(t *testing.T) {
	env := map[string]string{"AGENTHUB_HOME": t.TempDir()}
	tests := [][]string{
		{"bogus"},
		{"serve", "--bogus"},
		{"serve", "extra"},
		{"version", "x"},
		{"workspace"},
		{"workspace", "frobnicate"},
		{"workspace", "add"},
		{"--bogus"},
	}
	for _, args := range tests {
		code, _, stderr := runCLI(t, env, args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
		if stderr == "" {
			t.Errorf("%v: no usage message", args)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	code, out, _ := runCLI(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "agenthub test") {
		t.Fatalf("version: %d %q", code, out)
	}
	code, out, _ = runCLI(t, nil, "help")
	if code != 0 || !strings.Contains(out, "serve") {
		t.Fatalf("help: %d %q", code, out)
	}
}

func TestWorkspaceLifecycle(t *testing.T) {
	env := map[string]string{"AGENTHUB_HOME": t.TempDir()}
	dir := t.TempDir()
	if code, out, _ := runCLI(t, env, "workspace", "list"); code != 0 || !strings.Contains(out, "No workspaces yet") {
		t.Fatalf("empty list: %d %q", code, out)
	}
	if code, out, errOut := runCLI(t, env, "workspace", "add", dir); code != 0 || !strings.Contains(out, "Added workspace") {
		t.Fatalf("add: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, env, "workspace", "add", dir); code != ExitFailed || !strings.Contains(errOut, "workspace_exists") {
		t.Fatalf("duplicate add: %d %q", code, errOut)
	}
	if code, out, _ := runCLI(t, env, "workspace", "list", "--json"); code != 0 || !strings.Contains(out, `"displayPath"`) {
		t.Fatalf("json list: %d %q", code, out)
	}
	if code, out, errOut := runCLI(t, env, "workspace", "remove", dir); code != 0 || !strings.Contains(out, "Removed") {
		t.Fatalf("remove: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, env, "workspace", "remove", dir); code != ExitFailed || !strings.Contains(errOut, "not_found") {
		t.Fatalf("second remove: %d %q", code, errOut)
	}
}

func TestUnwritableDataDirIsNamed(t *testing.T) {
	// A file in the way fails for every user; permission bits would not
	// stop root, which CI runs as.
	parent := t.TempDir()
	blocker := filepath.Join(parent, "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(blocker, "home")
	code, _, errOut := runCLI(t, nil, "workspace", "list", "--home", home)
	if code != ExitFailed || !strings.Contains(errOut, home) || !strings.Contains(errOut, "data directory") {
		t.Fatalf("exit %d, stderr %q: want the directory named", code, errOut)
	}
}

func TestNoDisplayFallsBackToBrowser(t *testing.T) {
	home := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	out := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Main(Env{Args: []string{"--home", home}, Stdout: out, Stderr: out, Context: ctx,
			Getenv: func(string) string { return "" }, Assets: fstest.MapFS{},
			Window: func(*api.Core, fs.FS) error { t.Error("window opened without a display"); return nil }})
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "serving on http://127.0.0.1:"); {
		if time.Now().After(deadline) {
			t.Fatalf("browser mode did not start: %q", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d after stop: %q", code, out.String())
	}
	if !strings.Contains(out.String(), "No display found") {
		t.Fatalf("no fallback notice: %q", out.String())
	}
}

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads. runCLI uses it too: Main points the process's default logger at its
// stderr, and a run of a parallel test may log into it while it is read.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
