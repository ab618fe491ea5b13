package agentproc

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/runtime/rawlog"
)

func TestStartKeepsRawLinesAndFinishCloses(t *testing.T) {
	dir := t.TempDir()
	raw, err := rawlog.Open(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	p, err := Start(Spec{Label: "Tool", Path: "/bin/sh", Args: []string{"-c", "echo one; echo two; cat >/dev/null"},
		Dir: dir, Stdin: true, Raw: raw, Lines: func(b []byte, cut bool) {
			mu.Lock()
			got = append(got, string(b))
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	Finish(p, &mu, 5*time.Second) // cat exits when its input closes
	select {
	case <-p.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the process did not end")
	}
	res, _ := p.Wait()
	raw.Close()
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != "one,two" || res.ExitCode != 0 {
		t.Fatalf("lines %q, exit %d", got, res.ExitCode)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "s1.jsonl"))
	if string(b) != "one\ntwo\n" {
		t.Fatalf("raw output %q", b)
	}
}

func TestStartFailureIsRuntimeUnavailable(t *testing.T) {
	raw, err := rawlog.Open(t.TempDir(), "s2")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Start(Spec{Label: "Tool", Path: filepath.Join(t.TempDir(), "missing"), Dir: t.TempDir(), Raw: raw,
		Lines: func([]byte, bool) {}})
	if backend.CodeOf(err) != backend.FailRuntimeUnavailable || !strings.Contains(err.Error(), "Tool could not be started") {
		t.Fatalf("%v", err)
	}
}

func TestExitError(t *testing.T) {
	err := ExitError("Tool", 3, "boom", 0, 10)
	if backend.CodeOf(err) != backend.FailRuntimeUnavailable || !strings.Contains(err.Error(), "Tool exited with code 3") ||
		!strings.Contains(err.Error(), ": boom") {
		t.Errorf("exit: %v", err)
	}
	if err := ExitError("Tool", 0, "", 5, 10); backend.CodeOf(err) != backend.FailSchemaValidation {
		t.Errorf("unreadable: %v", err)
	}
	if got := Tail([]byte(strings.Repeat("x", 3000) + "end")); len(got) != 2048 || !strings.HasSuffix(got, "end") {
		t.Errorf("Tail: %d bytes", len(got))
	}
}
