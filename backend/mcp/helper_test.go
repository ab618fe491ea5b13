package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// helperEnv switches the test binary into a real MCP server over stdio
// (the os/exec tests' helper-process pattern), so the tests start a real
// process through backend/proc and speak the real protocol to it.
const helperEnv = "AGENTHUB_MCP_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		if err := serveHelper(); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveHelper is the helper server's tools:
//   - echo: no annotations, so it may be destructive (asks);
//   - lookup and crash: annotated read-only; crash exits mid-call;
//   - spawn: starts a grandchild that outlives nothing, for the orphan test.
func serveHelper() error {
	return newHelperServer().Run(context.Background(), &sdk.StdioTransport{})
}

// newHelperServer is the helper's MCP server, served over stdio by the
// helper process and over Streamable HTTP in process (http_test.go).
//   - grow: read-only; adds the tool "extra" (the server then sends
//     notifications/tools/list_changed) and answers a moment later.
func newHelperServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "helper", Version: "1"}, nil)
	obj := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
	}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	args := func(req *sdk.CallToolRequest) map[string]any {
		m := map[string]any{}
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echo the text.", InputSchema: obj(`"text":{"type":"string"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(fmt.Sprintf("echo: %v", args(req)["text"])), nil
		})
	s.AddTool(&sdk.Tool{Name: "lookup", Description: "Look a key up.", InputSchema: obj(`"key":{"type":"string"}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(fmt.Sprintf("value of %v is 42", args(req)["key"])), nil
		})
	s.AddTool(&sdk.Tool{Name: "crash", Description: "Exit mid-call.", InputSchema: obj(""),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "helper: crashing on purpose")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "spawn", Description: "Start a grandchild.", InputSchema: obj("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			c := exec.Command("sleep", "300")
			if err := c.Start(); err != nil {
				return nil, err
			}
			return text(fmt.Sprint(c.Process.Pid)), nil
		})
	s.AddTool(&sdk.Tool{Name: "write", Description: "Write a file.", InputSchema: obj(`"path":{"type":"string"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			p := fmt.Sprint(args(req)["path"])
			if strings.HasPrefix(p, "$TMPDIR/") {
				p = filepath.Join(os.TempDir(), strings.TrimPrefix(p, "$TMPDIR/"))
			}
			if err := os.WriteFile(p, []byte("written by the MCP server\n"), 0o644); err != nil {
				return text("refused: " + err.Error()), nil
			}
			return text("wrote"), nil
		})
	s.AddTool(&sdk.Tool{Name: "dial", Description: "Open a TCP connection.", InputSchema: obj(`"addr":{"type":"string"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			c, err := net.DialTimeout("tcp", fmt.Sprint(args(req)["addr"]), 10*time.Second)
			if err != nil {
				return text("refused: " + err.Error()), nil
			}
			_ = c.Close()
			return text("connected"), nil
		})
	s.AddTool(&sdk.Tool{Name: "fail", Description: "Report a tool error.", InputSchema: obj("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "no such record"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "grow", Description: "Add a tool.", InputSchema: obj(""),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			s.AddTool(&sdk.Tool{Name: "extra", Description: "Added mid-run.", InputSchema: obj("")},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return text("extra ran"), nil
				})
			// The notification is debounced (10 ms) and, over HTTP, travels
			// on another stream: let it arrive before the answer.
			time.Sleep(300 * time.Millisecond)
			return text("grown"), nil
		})
	return s
}

// helperConfig is a server entry that starts this test binary as the
// helper server.
func helperConfig(t *testing.T, name string, allowReadOnly bool) Config {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(helperEnv, "1")
	return Config{Name: name, Command: exe, Env: []string{helperEnv}, AllowReadOnly: allowReadOnly}
}
