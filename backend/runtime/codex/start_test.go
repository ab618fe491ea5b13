package codex

import (
	"strings"
	"testing"

	"agenthub/backend"
)

// startRun plays the engine's first two steps with a fake CLI: the first
// Stream asks to start, the session tool starts, the second Stream reports.
func startRun(t *testing.T, script string) (backend.ToolResult, error) {
	t.Helper()
	bin := fakeCLI(t, t.TempDir(), `if [ "$1" = --version ]; then echo "codex-cli `+TestedVersion+`"; exit 0; fi
`+script)
	m := NewModel(Config{Command: bin, Model: "gpt-5.5", BaseURL: "http://127.0.0.1:9/v1", Dir: t.TempDir()})
	task := backend.Message{Role: backend.RoleUser, Text: "task"}
	resp, err := m.Stream(t.Context(), backend.ModelRequest{Messages: []backend.Message{task}}, func(string) {})
	if err != nil || len(resp.Calls) != 1 || resp.Calls[0].Name != ToolSession {
		t.Fatalf("first step: %+v %v", resp, err)
	}
	call := resp.Calls[0]
	var ev []string
	env := backend.ToolEnv{WorkspaceRoot: t.TempDir(), RunID: "run_1",
		Emit: func(typ backend.EventType, _ any) { ev = append(ev, string(typ)) }}
	res, err := Tools()[ToolSession].Execute(t.Context(), env, backend.ToolInput{CallID: call.ID, Arguments: call.Arguments})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []backend.Message{task, {Role: backend.RoleAssistant, Calls: []backend.ToolCallRequest{call}},
		{Role: backend.RoleTool, ToolCallID: call.ID, Text: res.Content, IsError: res.IsError}}
	_, err = m.Stream(t.Context(), backend.ModelRequest{Messages: msgs}, func(string) {})
	return res, err
}

// TestExitDuringHandshake: a CLI that dies before it answers fails the run
// with its scrubbed stderr, not as a run that lost its session.
func TestExitDuringHandshake(t *testing.T) {
	res, err := startRun(t, `read init; echo "error: no such subcommand: app-server in $PWD" >&2; exit 2`)
	if !res.IsError {
		t.Fatalf("the start succeeded: %+v", res)
	}
	var be *backend.Error
	if !asError(err, &be) || be.Code != backend.FailRuntimeUnavailable || !strings.Contains(be.Message, "exited with code 2") ||
		!strings.Contains(be.Message, "no such subcommand: app-server in .") {
		t.Fatalf("%v", err)
	}
}

// TestThreadSettingsRefused: a CLI that does not take AgentHub's approval
// settings is refused rather than run ungated.
func TestThreadSettingsRefused(t *testing.T) {
	_, err := startRun(t, `read init; echo '{"id":1,"result":{}}'
read initialized
read thread; echo '{"id":2,"result":{"thread":{"id":"t1"},"approvalPolicy":"never","approvalsReviewer":"user","sandbox":{"type":"dangerFullAccess"}}}'
cat >/dev/null`)
	var be *backend.Error
	if !asError(err, &be) || be.Code != backend.FailPermissionDenied || !strings.Contains(be.Message, "rather than left ungated") {
		t.Fatalf("%v", err)
	}
}

func asError(err error, target **backend.Error) bool {
	be, ok := err.(*backend.Error)
	if ok {
		*target = be
	}
	return ok
}
