package cli

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"agenthub/app/api"
	"agenthub/app/engineclient"
)

// TestWindowServesTheEngineSocket: a window that owns the data directory's
// runs serves the engine socket, so a CLI command beside it is its client:
// a workspace added through the socket is in the window's own core, and
// status names the window. In-process, so -race covers the socket server
// and a forwarded command.
func TestWindowServesTheEngineSocket(t *testing.T) {
	home, err := os.MkdirTemp("", "ah-win-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	ws := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cores := make(chan *api.Core, 1)
	done := make(chan int, 1)
	go func() {
		done <- Main(Env{Args: []string{"window", "--home", home}, Stdout: &syncBuffer{}, Stderr: &syncBuffer{},
			Context: ctx, Version: "test", Assets: fstest.MapFS{},
			Getenv: func(k string) string { return map[string]string{"DISPLAY": ":99"}[k] },
			Window: func(core *api.Core, _ fs.FS) error {
				if err := core.Open(ctx); err != nil {
					return err
				}
				cores <- core
				<-ctx.Done()
				return core.Close()
			}})
	}()
	core := <-cores
	var c *engineclient.Client
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err = engineclient.Dial(home); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the window never served the socket: %v", err)
		}
	}
	st, err := c.Status(ctx)
	if err != nil || st.Surface != "window" {
		t.Fatalf("status: %+v %v, want the window", st, err)
	}
	var out, errOut bytes.Buffer
	code, err := c.Exec(ctx, engineclient.ExecRequest{Args: []string{"workspace", "add", ws},
		Env: map[string]string{"AGENTHUB_HOME": home}}, strings.NewReader(""), &out, &errOut, nil)
	if err != nil || code != 0 {
		t.Fatalf("workspace add through the window's socket: %d %v\n%s%s", code, err, out.String(), errOut.String())
	}
	list, err := api.NewWorkspacesAPI(core).List()
	if err != nil || len(list) != 1 {
		t.Fatalf("the window's core does not have the workspace: %v %v", list, err)
	}
	// A command for another data directory is refused, not run here.
	code, _ = c.Exec(ctx, engineclient.ExecRequest{Args: []string{"workspace", "list", "--home", t.TempDir()},
		Env: map[string]string{}}, nil, &out, &errOut, nil)
	if code != ExitFailed || !strings.Contains(errOut.String(), "serves the data directory") {
		t.Fatalf("another data directory: exit %d %q", code, errOut.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("window exit %d", code)
	}
}
