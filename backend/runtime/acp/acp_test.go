package acp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
	"agenthub/backend/runtime/agentbin"
)

func TestCheck(t *testing.T) {
	tests := []struct{ line, problem string }{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`, ""},
		{`{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{}}`, ""},
		{`{"jsonrpc":"2.0","method":"_zed.dev/hello","params":{}}`, ""},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, ""},
		{`not json`, "not a JSON-RPC message"},
		{`{"jsonrpc":"1.0","id":1,"result":{}}`, `jsonrpc is "1.0"`},
		{`{"jsonrpc":"2.0"}`, "neither a method nor an id"},
		{`{"jsonrpc":"2.0","id":1}`, "neither a result nor an error"},
		{`{"jsonrpc":"2.0","id":4,"method":"session/teleport"}`, "unknown method session/teleport"},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"telepathy"}}}`, `unknown session/update "telepathy"`},
		{`{"jsonrpc":"2.0","method":"session/update","params":[1]}`, "session/update params"},
	}
	for _, tt := range tests {
		got, _ := Check([]byte(tt.line))
		if (tt.problem == "") != (got == "") || !strings.Contains(got, tt.problem) {
			t.Errorf("Check(%s) = %q, want %q", tt.line, got, tt.problem)
		}
	}
}

// testSession is a session on a temporary workspace, without a process.
func testSession(t *testing.T, files map[string]string) *session {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	s := newSession(Config{Name: "acp", CheckpointDir: filepath.Join(t.TempDir(), "checkpoints")}, agentbin.Info{}, "task")
	s.Root = root
	s.RealRoot, _ = filepath.EvalSymlinks(root)
	t.Cleanup(s.drop)
	return s
}

func reqErr(err error) string {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return re.Message
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestReadsAreRooted(t *testing.T) {
	s := testSession(t, map[string]string{"a.txt": "1\n2\n3\n", ".env": "TOKEN=x\n", "sub/b.txt": "b\n"})
	c := client{s}
	two, one := 2, 1
	tests := []struct {
		name, path  string
		line, limit *int
		want, err   string
	}{
		{"inside", s.Root + "/a.txt", nil, nil, "1\n2\n3\n", ""},
		{"lines", s.Root + "/a.txt", &two, &one, "2\n", ""},
		{"nested", s.Root + "/sub/b.txt", nil, nil, "b\n", ""},
		{"resolved spelling", s.RealRoot + "/a.txt", nil, nil, "1\n2\n3\n", ""},
		{"relative", "a.txt", nil, nil, "", "paths must be absolute"},
		{"dotdot", s.Root + "/../a.txt", nil, nil, "", "outside the workspace"},
		{"elsewhere", "/etc/passwd", nil, nil, "", "outside the workspace"},
		{"symlink out", s.Root + "/escape/x", nil, nil, "", "cannot be read"},
		{"secret", s.Root + "/.env", nil, nil, "", "secret file"},
		{"missing", s.Root + "/nope.txt", nil, nil, "", "Resource not found: nope.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := c.ReadTextFile(t.Context(), sdk.ReadTextFileRequest{Path: tt.path, Line: tt.line, Limit: tt.limit})
			if got := reqErr(err); (tt.err == "") != (got == "") || !strings.Contains(got, tt.err) {
				t.Fatalf("err = %q, want %q", got, tt.err)
			}
			if r.Content != tt.want {
				t.Fatalf("content = %q, want %q", r.Content, tt.want)
			}
			if err != nil && strings.Contains(reqErr(err), s.Root) {
				t.Fatalf("the refusal names the root: %q", reqErr(err))
			}
		})
	}
	var reads int
	for _, it := range s.Queue {
		if it.kind == itemEvent && it.evType == backend.EvFileRead {
			reads++
		}
	}
	if reads != 4 {
		t.Fatalf("%d run.file.read events, want 4", reads)
	}
}

// TestWritesApplyOnlyWhatWasApproved: a permission's change is approved
// with one of its two hunks; the agent's write of the whole change is
// applied with that hunk only (with a checkpoint) and answered with an
// error that says so; a write of other content waits for the gate and
// leaves the file alone.
func TestWritesApplyOnlyWhatWasApproved(t *testing.T) {
	before := "alpha\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nomega\n"
	proposed := strings.Replace(strings.Replace(before, "alpha", "ALPHA", 1), "omega", "OMEGA", 1)
	s := testSession(t, map[string]string{"a.txt": before})
	p := s.newPermission(sdk.RequestPermissionRequest{ToolCall: sdk.ToolCallUpdate{ToolCallId: "c1",
		Kind: sdk.Ptr(sdk.ToolKindEdit), Content: []sdk.ToolCallContent{sdk.ToolDiffContent(s.Root+"/a.txt", proposed)}},
		Options: []sdk.PermissionOption{{Kind: sdk.PermissionOptionKindAllowOnce, OptionId: "once"}}})
	call, err := s.proxyCall(p)
	if err != nil || call.Name != ToolEdit {
		t.Fatalf("call %+v %v", call, err)
	}
	var a permArgs
	_ = json.Unmarshal(call.Arguments, &a)
	env := backend.ToolEnv{WorkspaceRoot: s.Root, WorkspaceID: "ws"}
	act, err := permTool{name: ToolEdit}.Action(t.Context(), env, call.Arguments)
	if err != nil || act.Kind != backend.ActionPatch || act.Title != "Edit a.txt" {
		t.Fatalf("action %+v %v", act, err)
	}
	plans, res := s.planEdit(env, p, a, json.RawMessage(`{"decision":"approve_once","hunks":[{"path":"a.txt","index":0}],"reason":"no"}`))
	if res != nil || len(plans) != 1 {
		t.Fatalf("plan: %+v", res)
	}
	_, err = client{s}.WriteTextFile(t.Context(), sdk.WriteTextFileRequest{Path: s.Root + "/a.txt", Content: proposed})
	if !strings.Contains(reqErr(err), "only part of this change was approved; the reviewer approved 1 of 2 hunks") {
		t.Fatalf("write answer: %q", reqErr(err))
	}
	want := strings.Replace(before, "alpha", "ALPHA", 1)
	if b, _ := os.ReadFile(filepath.Join(s.Root, "a.txt")); string(b) != want {
		t.Fatalf("a.txt = %q", b)
	}
	if plans[0].applied == nil || plans[0].applied.CheckpointID == "" {
		t.Fatalf("no checkpoint: %+v", plans[0])
	}
	// The same content again is not covered: the plan was used up.
	done := make(chan error, 1)
	go func() {
		_, err := client{s}.WriteTextFile(context.Background(), sdk.WriteTextFileRequest{Path: s.Root + "/a.txt", Content: proposed})
		done <- err
	}()
	wr := waitWrite(t, s)
	if wr.rel != "a.txt" {
		t.Fatalf("write request %+v", wr)
	}
	s.Mu.Lock()
	wr.sent = true
	s.Mu.Unlock()
	s.settle([]backend.Message{{Role: backend.RoleTool, ToolCallID: wr.callID, Text: "rejected by the reviewer"}})
	if err := <-done; !strings.Contains(reqErr(err), "nothing was written: rejected by the reviewer") {
		t.Fatalf("write answer: %q", reqErr(err))
	}
	if b, _ := os.ReadFile(filepath.Join(s.Root, "a.txt")); string(b) != want {
		t.Fatalf("a.txt changed: %q", b)
	}
}

func waitWrite(t *testing.T, s *session) *writeReq {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if it, ok, _ := s.Pop(); ok && it.kind == itemWrite {
			return it.write
		}
	}
	t.Fatal("the write was not queued for the gate")
	return nil
}

func TestPermissionAnswers(t *testing.T) {
	opt := func(kinds ...sdk.PermissionOptionKind) []sdk.PermissionOption {
		var out []sdk.PermissionOption
		for _, k := range kinds {
			out = append(out, sdk.PermissionOption{Kind: k, OptionId: sdk.PermissionOptionId(k)})
		}
		return out
	}
	all := opt(sdk.PermissionOptionKindAllowAlways, sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindRejectOnce,
		sdk.PermissionOptionKindRejectAlways)
	onlyAlways := opt(sdk.PermissionOptionKindAllowAlways, sdk.PermissionOptionKindRejectAlways)
	tests := []struct {
		name     string
		opts     []sdk.PermissionOption
		decision backend.DecisionKind
		want     string
	}{
		{"once", all, backend.ApproveOnce, "allow_once"},
		{"a run grant still answers once", all, backend.ApproveForRun, "allow_once"},
		{"a workspace grant still answers once", all, backend.AlwaysAllowWorkspace, "allow_once"},
		{"only always, approved once", onlyAlways, backend.ApproveOnce, ""},
		{"only always, granted for the run", onlyAlways, backend.ApproveForRun, "allow_always"},
	}
	for _, tt := range tests {
		got, ok := allowOption(tt.opts, tt.decision)
		if string(got) != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: %q %v, want %q", tt.name, got, ok, tt.want)
		}
	}
	if r := rejectOutcome(all); r.Selected == nil || r.Selected.OptionId != "reject_once" {
		t.Errorf("reject: %+v", r)
	}
	if r := rejectOutcome(onlyAlways); r.Cancelled == nil {
		t.Errorf("never reject_always: %+v", r)
	}
	if d := decisionOf(nil); d != backend.ApproveOnce {
		t.Errorf("no decision = %s", d)
	}
}

func TestEnvironIsAnAllowList(t *testing.T) {
	host := map[string]string{"LANG": "C.UTF-8", "OPENAI_API_KEY": "sk-host", "GEMINI_API_KEY": "host-key", "AWS_SECRET": "x"}
	c := Config{Gemini: true, BaseURL: "http://127.0.0.1:9/", APIKey: "profile-key-123", Dir: "/data/runtimes/gemini/gm",
		Getenv: func(k string) string { return host[k] }}
	s := newSession(c, agentbin.Info{}, "task")
	ep, err := s.endpoint()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Keys.Close()
	env := c.environ("/usr/bin", ep)
	for _, want := range []string{"HOME=/data/runtimes/gemini/gm/home", "PATH=/usr/bin", "GEMINI_API_KEY=" + s.Keys.Token(),
		"GOOGLE_GEMINI_BASE_URL=" + s.Keys.URL(), "GEMINI_CLI_TRUST_WORKSPACE=false", "GEMINI_CLI_NO_RELAUNCH=true",
		"LANG=C.UTF-8"} {
		if !slices.Contains(env, want) {
			t.Errorf("missing %s in %v", want, env)
		}
	}
	for _, kv := range env {
		if strings.Contains(kv, "sk-host") || strings.Contains(kv, "host-key") || strings.HasPrefix(kv, "AWS_SECRET") ||
			strings.Contains(kv, "profile-key-123") {
			t.Errorf("leaked %s", kv)
		}
	}
	c.APIKey = ""
	if env := c.environ("/usr/bin", c.direct()); !slices.Contains(env, "GEMINI_API_KEY="+noKey) ||
		!slices.Contains(env, "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9") {
		t.Errorf("without a key: %v", env)
	}
	if d := cmp.Diff([]string{"--acp", "--approval-mode", "default"}, c.args()); d != "" {
		t.Errorf("gemini args (-want +got):\n%s", d)
	}
	c.Command, c.Model = []string{"/opt/gemini"}, "gemini-test"
	if d := cmp.Diff([]string{"--acp", "--approval-mode", "default", "--model", "gemini-test"}, c.args()); d != "" {
		t.Errorf("gemini args with a model (-want +got):\n%s", d)
	}
	other := Config{Command: []string{"my-agent", "--stdio"}, KeyEnv: "MY_KEY", APIKey: "k",
		Getenv: func(k string) string { return host[k] }}
	env = other.environ("/usr/bin", other.direct())
	if slices.Contains(env, "MY_KEY=k") || slices.Contains(env, "GEMINI_CLI_NO_RELAUNCH=true") {
		t.Errorf("acp env: %v", env)
	}
	if d := cmp.Diff([]string{"--stdio"}, other.args()); d != "" {
		t.Errorf("acp args (-want +got):\n%s", d)
	}
}

func TestMissingProgramIsRuntimeUnavailable(t *testing.T) {
	for _, c := range []Config{{Gemini: true, Command: []string{filepath.Join(t.TempDir(), "gemini")}},
		{Command: []string{"agenthub-no-such-agent-xyz"}}, {}} {
		_, err := c.resolve(t.Context())
		var be *backend.Error
		if !errors.As(err, &be) || be.Code != backend.FailRuntimeUnavailable {
			t.Fatalf("%v: %v", c.Command, err)
		}
		if c.Gemini && (!strings.Contains(be.Next, GeminiInstallHint) || strings.Contains(be.Message, GeminiInstallHint)) {
			t.Errorf("the install hint is not the next step: %q / %q", be.Message, be.Next)
		}
	}
}

func TestCapabilities(t *testing.T) {
	g, a := Capabilities(true), Capabilities(false)
	if g.Gating[backend.ActionPatch] != backend.Enforced || g.Gating[backend.ActionWrite] != backend.Enforced ||
		g.Gating[backend.ActionRead] != backend.Advisory || g.Gating[backend.ActionShell] != backend.Enforced ||
		g.Gating[backend.ActionNetwork] != backend.Enforced {
		t.Errorf("gemini: %+v", g.Gating)
	}
	for k, e := range a.Gating {
		if e != backend.Advisory {
			t.Errorf("an arbitrary ACP agent cannot have %s enforced", k)
		}
	}
}
