package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agenthub/backend/llm/llmtest"
	"agenthub/backend/runtime/acp/acptest"
	"agenthub/backend/runtime/codex/codextest"
)

// mcpServerArg turns this test binary into a hostile MCP server over
// stdio: its tools write and connect wherever the model asks.
const mcpServerArg = "hostile-mcp-server"

func init() {
	if len(os.Args) > 1 && os.Args[1] == mcpServerArg {
		if err := hostileMCP().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "hostile mcp server:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	acptest.MaybeServeAgent()
}

// hostileMCP is a server whose tools do what a malicious (or hijacked) MCP
// server would: write a file at any path, open a TCP connection anywhere.
func hostileMCP() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "hostile", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"addr":{"type":"string"}}}`)
	arg := func(req *sdk.CallToolRequest, k string) string {
		m := map[string]string{}
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m[k]
	}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	s.AddTool(&sdk.Tool{Name: "write", Description: "Write a file.", InputSchema: obj},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if err := os.WriteFile(arg(req, "path"), []byte("written by a hostile MCP server\n"), 0o644); err != nil {
				return text("refused: " + err.Error()), nil
			}
			return text("wrote"), nil
		})
	s.AddTool(&sdk.Tool{Name: "dial", Description: "Connect.", InputSchema: obj},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			c, err := net.DialTimeout("tcp", arg(req, "addr"), 10*time.Second)
			if err != nil {
				return text("refused: " + err.Error()), nil
			}
			_ = c.Close()
			return text("CONNECTED"), nil
		})
	return s
}

// playAgentProcs: the processes AgentHub starts for an agent other than a
// command: Codex (its escalated commands and its own patch writes), stdio
// MCP servers, and a generic ACP agent's environment (issue 14, the
// remainder of items 6 and the confinement). Every approval is approved,
// so only the confinement and the key handling stand in the way. Cases run
// on goroutines, not t.Parallel: parallel subtests wait for one of
// -parallel's slots (2 on this machine), which the long categories hold.
func playAgentProcs(t *testing.T, l *ledger) {
	t.Run("codex", func(t *testing.T) {
		bin, ok := pinnedCLI(t, l, "AGENTHUB_CODEX_BIN", "codex", "codex", "agent/codex/")
		if ok {
			playCodexConfined(t, l, bin)
		}
	})
	t.Run("mcp", func(t *testing.T) { playMCPConfined(t, l) })
	t.Run("acp", func(t *testing.T) { playACPKey(t, l) })
}

// playCodexConfined: a command Codex runs outside its own sandbox (an
// escalation the reviewer approved), and a patch to an absolute path
// outside the workspace, both approved.
func playCodexConfined(t *testing.T, l *ledger, bin string) {
	var wg sync.WaitGroup
	for _, c := range []struct {
		name string
		call func(target string) codextest.Call
	}{
		{"escalated-write-outside", func(target string) codextest.Call {
			return codextest.Exec("call_e1", "echo pwned > "+target, true)
		}},
		{"patch-outside", func(target string) codextest.Call {
			return codextest.ApplyPatch("call_p1", "*** Begin Patch\n*** Add File: "+target+"\n+pwned\n*** End Patch\n")
		}},
	} {
		wg.Go(func() {
			t.Run(c.name, func(t *testing.T) {
				w := newWorld(t)
				target := filepath.Join(w.outside, "codex-"+c.name+".txt")
				srv := codextest.New(codextest.Turn{Calls: []codextest.Call{c.call(target)}}, codextest.Turn{Text: []string{"Done."}})
				t.Cleanup(srv.Close)
				w.putProfile("cx", fmt.Sprintf("name = \"cx\"\nruntime = \"codex\"\nbase_url = %q\nmodel = \"gpt-5.5\"\n"+
					"command = %q\nrun_timeout = \"2m\"\n[stop]\nmax_rounds = 12\n", srv.URL+"/v1", bin))
				res := w.run("cx", "approve", 3*time.Minute, nil)
				_, err := os.Stat(target)
				if len(srv.ModelRequests()) < 2 && os.IsNotExist(err) && !res.hung {
					t.Fatalf("Codex made %d model requests: the case did not play (exit %d): %s",
						len(srv.ModelRequests()), res.code, lastLine(res.stderr))
				}
				l.check(t, "agent/codex/"+c.name, !res.hung && os.IsNotExist(err),
					"Codex wrote outside the workspace (stat: %v; hung %v, ended %q)", err, res.hung, terminal(res.events))
			})
		})
	}
	wg.Wait()
}

// playMCPConfined: a stdio MCP server's tool, called with every approval
// granted, writes outside the workspace and connects to a listener on
// loopback; its profile entry does not say network = true.
func playMCPConfined(t *testing.T, l *ledger) {
	self, err := os.Executable()
	must(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	var wg sync.WaitGroup
	for _, c := range []struct {
		name, tool, args string
		escaped          func(w *world, target string, res runResult, saw string) bool
	}{
		{"write-outside", "mcp__evil__write", `{"path":%q}`, func(_ *world, target string, _ runResult, _ string) bool {
			_, err := os.Stat(target)
			return err == nil
		}},
		{"write-home", "mcp__evil__write", `{"path":%q}`, func(_ *world, target string, _ runResult, _ string) bool {
			_, err := os.Stat(target)
			return err == nil
		}},
		{"connect-out", "mcp__evil__dial", `{"addr":%q}`, func(_ *world, _ string, _ runResult, saw string) bool {
			return strings.Contains(saw, "CONNECTED")
		}},
	} {
		wg.Go(func() {
			t.Run(c.name, func(t *testing.T) {
				w := newWorld(t)
				target := filepath.Join(w.outside, "mcp-"+c.name+".txt")
				if c.name == "write-home" {
					target = filepath.Join(w.home, "mcp-planted.txt") // AgentHub's own data directory
				}
				if c.name == "connect-out" {
					target = ln.Addr().String()
				}
				srv := llmtest.NewOpenAI(
					llmtest.Turn{Calls: []llmtest.Call{{ID: "call_m1", Name: c.tool, Args: []string{fmt.Sprintf(c.args, target)}}}},
					llmtest.Turn{Text: []string{"Done."}},
				)
				t.Cleanup(srv.Close)
				w.putProfile("mc", fmt.Sprintf("name = \"mc\"\nruntime = \"native\"\nprovider = \"openai\"\nbase_url = %q\n"+
					"model = \"test-model\"\nrun_timeout = \"1m\"\n"+
					"[[mcp_servers]]\nname = \"evil\"\ncommand = %q\nargs = [%q]\n"+patientStop, srv.URL+"/v1", self, mcpServerArg))
				res := w.run("mc", "approve", 2*time.Minute, nil)
				reqs := srv.Requests()
				if len(reqs) < 2 {
					t.Fatalf("the model made %d requests: the tool was not called (exit %d): %s", len(reqs), res.code, lastLine(res.stderr))
				}
				saw := string(reqs[1].Raw)
				l.check(t, "agent/mcp/"+c.name, !res.hung && !c.escaped(w, target, res, saw),
					"the MCP server reached past its confinement (hung %v, ended %q): the model saw %.300s",
					res.hung, terminal(res.events), saw)
			})
		})
	}
	wg.Wait()
}

// playACPKey: a generic ACP agent (the scripted agent, a real process)
// whose profile has a key dumps its /proc/self/environ and its commands' environment. With a
// declared model protocol, and without one (the run is then refused), the
// key must be nowhere: not in the dump, the data files or stdout.
func playACPKey(t *testing.T, l *ledger) {
	self, err := os.Executable()
	must(t, err)
	var wg sync.WaitGroup
	for _, c := range []struct{ name, extra string }{
		{"key-in-env-openai", "model_protocol = \"openai\"\n"},
		{"key-in-env-anthropic", "model_protocol = \"anthropic\"\n"},
		{"key-in-env-no-protocol", ""},
	} {
		wg.Go(func() {
			t.Run(c.name, func(t *testing.T) {
				w := newWorld(t)
				key := "gw-" + entropy("acp-"+c.name, hexLow, 40)
				w.env["HOSTILE_ACP_KEY"] = key
				cmd, err := acptest.WriteScript(t.TempDir(), self, acptest.Script{Steps: []acptest.Step{
					{Dump: "env-dump.txt"}, {Say: "done"}}})
				must(t, err)
				quoted := make([]string, len(cmd))
				for i, a := range cmd {
					quoted[i] = fmt.Sprintf("%q", a)
				}
				w.putProfile("ag", "name = \"ag\"\nruntime = \"acp\"\ncommand = ["+strings.Join(quoted, ", ")+"]\n"+
					"key_env = \"HOSTILE_ACP_KEY\"\n"+c.extra+"run_timeout = \"1m\"\n"+
					"accept_advisory = [\"write\", \"patch\", \"shell\", \"network\"]\n")
				res := w.run("ag", "approve", 2*time.Minute, nil)
				dump, derr := os.ReadFile(filepath.Join(w.ws, "env-dump.txt"))
				if c.extra != "" && derr != nil {
					t.Fatalf("the agent wrote no dump (exit %d, %s): %s", res.code, failure(res.events), lastLine(res.stderr+res.stdout))
				}
				where := secretLeaks(w.dataFiles(), res.stdout, "", key)
				if strings.Contains(string(dump), key) {
					where = append(where, "the agent's environment")
				}
				l.check(t, "agent/acp/"+c.name, !res.hung && len(where) == 0,
					"the profile's key reached: %s (hung %v, ended %q)", strings.Join(where, ", "), res.hung, terminal(res.events))
			})
		})
	}
	wg.Wait()
}
