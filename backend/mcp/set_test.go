package mcp

import (
	"encoding/json"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/approval"
)

func toolByName(t *testing.T, s *Set, name string) backend.Tool {
	t.Helper()
	for _, tl := range s.Tools(t.Context()) {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("tool %s not listed", name)
	return nil
}

func call(t *testing.T, tl backend.Tool, args string) backend.ToolResult {
	t.Helper()
	res, err := tl.Execute(t.Context(), backend.ToolEnv{}, backend.ToolInput{CallID: "c", Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return res
}

func gone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !gone(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s %d is still running", what, pid)
		}
	}
}

func TestToolsListedWithSchemasAndNames(t *testing.T) {
	s := NewSet([]Config{helperConfig(t, "demo", false)}, nil)
	defer s.Close()
	var names []string
	for _, tl := range s.Tools(t.Context()) {
		names = append(names, tl.Spec().Name)
	}
	if got := strings.Join(names, ","); got != "mcp__demo__crash,mcp__demo__dial,mcp__demo__echo,mcp__demo__fail,mcp__demo__grow,mcp__demo__lookup,mcp__demo__spawn,mcp__demo__write" {
		t.Fatalf("tools: %s", got)
	}
	echo := toolByName(t, s, "mcp__demo__echo").Spec()
	if !strings.Contains(string(echo.Schema), `"text"`) || !strings.Contains(echo.Description, "[MCP server demo] Echo") {
		t.Errorf("spec: %+v", echo)
	}
}

// TestGateAction: an unannotated tool asks with a high risk and a subject
// that binds server, tool and arguments; a read-only tool asks too unless
// the profile allows read-only tools; bad arguments are a tool error.
func TestGateAction(t *testing.T) {
	strict := NewSet([]Config{helperConfig(t, "demo", false)}, nil)
	defer strict.Close()
	a, err := toolByName(t, strict, "mcp__demo__echo").Action(t.Context(), backend.ToolEnv{}, json.RawMessage(`{"text":"hi"}`))
	if err != nil || a == nil || a.Kind != ActionMCP || a.Risk != backend.RiskHigh {
		t.Fatalf("echo action: %+v %v", a, err)
	}
	if string(a.Subject) != `{"arguments":{"text":"hi"},"kind":"mcp","server":"demo","tool":"echo"}` {
		t.Errorf("subject %s", a.Subject)
	}
	if a, _ := toolByName(t, strict, "mcp__demo__lookup").Action(t.Context(), backend.ToolEnv{}, json.RawMessage(`{}`)); a == nil || a.Risk != backend.RiskLow {
		t.Errorf("a read-only tool on a strict server must still ask: %+v", a)
	}
	if _, err := toolByName(t, strict, "mcp__demo__echo").Action(t.Context(), backend.ToolEnv{}, json.RawMessage(`[1]`)); err == nil {
		t.Errorf("array arguments accepted")
	}
	trusting := NewSet([]Config{helperConfig(t, "demo", true)}, nil)
	defer trusting.Close()
	// allow_read_only: the call still reaches the gate (so rules apply), and
	// the policy's default for it is allow.
	verdict := func(set *Set, name string) backend.Verdict {
		a, err := toolByName(t, set, name).Action(t.Context(), backend.ToolEnv{}, json.RawMessage(`{}`))
		if err != nil || a == nil {
			t.Fatalf("%s: %+v %v", name, a, err)
		}
		act, err := approval.ActionOf(backend.GateRequest{Tool: name, Action: *a})
		if err != nil {
			t.Fatal(err)
		}
		return approval.DefaultPolicy().Evaluate(act).Verdict
	}
	if v := verdict(trusting, "mcp__demo__lookup"); v != backend.Allow {
		t.Errorf("trusted read-only tool: %s", v)
	}
	if v := verdict(trusting, "mcp__demo__echo"); v != backend.Ask {
		t.Errorf("allow_read_only let an unannotated tool through: %s", v)
	}
	if v := verdict(strict, "mcp__demo__lookup"); v != backend.Ask {
		t.Errorf("a read-only tool on a strict server: %s", v)
	}
}

func TestCallsErrorsAndCrash(t *testing.T) {
	s := NewSet([]Config{helperConfig(t, "demo", false)}, nil)
	defer s.Close()
	if res := call(t, toolByName(t, s, "mcp__demo__echo"), `{"text":"hi"}`); res.IsError || res.Content != "echo: hi" {
		t.Fatalf("echo: %+v", res)
	}
	if res := call(t, toolByName(t, s, "mcp__demo__fail"), `{}`); !res.IsError || res.Content != "no such record" {
		t.Fatalf("fail: %+v", res)
	}
	first := s.servers[0].pid()
	res := call(t, toolByName(t, s, "mcp__demo__crash"), `{}`)
	if !res.IsError || !strings.Contains(res.Content, "failed") || !strings.Contains(res.Content, "crashing on purpose") {
		t.Fatalf("crash: %+v", res)
	}
	waitGone(t, first, "crashed server")
	if res := call(t, toolByName(t, s, "mcp__demo__echo"), `{"text":"again"}`); res.IsError || res.Content != "echo: again" {
		t.Fatalf("after the crash: %+v", res)
	}
	if s.servers[0].pid() == first || s.servers[0].pid() == 0 {
		t.Errorf("the server was not restarted")
	}
}

// TestCloseLeavesNoProcess: closing the set ends the server and the
// processes it started (its process group).
func TestCloseLeavesNoProcess(t *testing.T) {
	s := NewSet([]Config{helperConfig(t, "demo", false)}, nil)
	res := call(t, toolByName(t, s, "mcp__demo__spawn"), `{}`)
	grandchild, err := strconv.Atoi(res.Content)
	if err != nil {
		t.Fatalf("spawn: %+v", res)
	}
	server := s.servers[0].pid()
	s.Close()
	waitGone(t, server, "server")
	waitGone(t, grandchild, "grandchild")
	if res := call(t, toolByName(t, s, "mcp__demo__echo"), `{}`); !res.IsError {
		t.Errorf("a closed set still calls: %+v", res)
	}
}

func TestServerThatWillNotStart(t *testing.T) {
	s := NewSet([]Config{{Name: "broken", Command: "/bin/false"}, {Name: "missing", Command: "no-such-mcp-server-xyz"}}, nil)
	defer s.Close()
	if ts := s.Tools(t.Context()); len(ts) != 0 {
		t.Fatalf("tools of broken servers: %d", len(ts))
	}
	_, err := s.servers[1].live(t.Context())
	if err == nil || !strings.Contains(err.Error(), "not on the login shell's PATH") {
		t.Errorf("missing command: %v", err)
	}
}
