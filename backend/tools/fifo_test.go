//go:build linux

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agenthub/backend"
)

// A workspace FIFO (shipped by a cloned repository or made by a command)
// blocked read_file, write_file, edit_file and delete_file in open(2), so the
// run's timeout never fired. Every file tool now refuses it at once, as not
// a regular file, and the FIFO stays as it was.
func TestFileToolsRefuseFIFOs(t *testing.T) {
	f := newFixture(t)
	fifo := filepath.Join(f.root, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(f.root, "zero")); err != nil {
		t.Fatal(err)
	}
	release := func() {
		if p, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			p.Close()
		}
	}
	cases := []struct{ tool, args, want string }{
		{ReadFile, `{"path":"pipe"}`, "not a regular file (a FIFO)"},
		{WriteFile, `{"path":"pipe","content":"x"}`, "not a regular file (a FIFO)"},
		{EditFile, `{"path":"pipe","old_string":"a","new_string":"b"}`, "not a regular file (a FIFO)"},
		{DeleteFile, `{"path":"pipe"}`, "not a regular file (a FIFO)"},
		{ListDir, `{"path":"pipe"}`, "not a directory"},
		{ReadFile, `{"path":"zero"}`, "outside the workspace"},
	}
	for _, tc := range cases {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			done := make(chan backend.ToolResult, 1)
			go func() {
				if a := f.action(t, tc.tool, tc.args); a != nil {
					t.Errorf("a refused call was proposed for approval: %s", a.Preview)
				}
				done <- f.execute(t, tc.tool, tc.args)
			}()
			var res backend.ToolResult
			select {
			case res = <-done:
			case <-time.After(20 * time.Second):
				for ; ; release() {
					select {
					case <-done:
						t.Fatal("the tool blocked on a FIFO")
					case <-time.After(100 * time.Millisecond):
					}
				}
			}
			if !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Fatalf("want an error saying %q, got %+v", tc.want, res)
			}
		})
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was changed: %v %v", fi, err)
	}
}

// Through the engine: a run whose model reads a FIFO finishes on its own,
// with the refusal as the tool result.
func TestEngineRunWithFIFOFinishes(t *testing.T) {
	f := newFixture(t)
	if err := syscall.Mkfifo(filepath.Join(f.root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := drive(t, f, ReadFile, `{"path":"pipe"}`)
	d.wait(t, backend.RunCompleted)
	if m := d.toolResult(t); !m.IsError || !strings.Contains(m.Text, "FIFO") {
		t.Fatalf("tool message %+v", m)
	}
}
