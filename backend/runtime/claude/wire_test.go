package claude

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend/scrub"
)

// Sample lines are those of agent-clis.md §1.3 and §1.4 (2.1.330), with the
// workspace path filled in.
const (
	sampleInit = `{"type":"system","subtype":"init","cwd":"/ws","session_id":"25ca1710-aa","model":"claude-opus-5-5","permissionMode":"default","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.330","mcp_servers":[],"tools":["Task","Bash","Edit"],"analytics_disabled":true,"served_by_anthropic":false}`
	sampleText = `{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"I'll create the file now."}],"stop_reason":null,"usage":{"input_tokens":100,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"parent_tool_use_id":null,"session_id":"25ca1710-aa","uuid":"u1","timestamp":"2026-11-21T12:22:35.116Z","request_id":"req_1"}`
	sampleUse  = `{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"/ws/hello.txt","content":"hello\n"}}]},"parent_tool_use_id":null,"session_id":"25ca1710-aa"}`
	sampleRes  = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"File created successfully at: /ws/hello.txt"}]},"parent_tool_use_id":null,"session_id":"25ca1710-aa","tool_use_result":{"type":"create","filePath":"/ws/hello.txt","content":"hello\n","structuredPatch":[],"originalFile":null,"userModified":false},"tool_result_meta":[{"id":"toolu_1","permission_decision":{"decision":"accept","source":"user_temporary"}}]}`
	sampleDone = `{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"Done: I created the file.","stop_reason":"end_turn","session_id":"25ca1710-aa","total_cost_usd":0.0016,"permission_denials":[],"terminal_reason":"completed","duration_ms":547,"usage":{"input_tokens":100,"output_tokens":20,"cache_creation_input_tokens":5,"cache_read_input_tokens":7}}`
	sampleAsk  = `{"type":"control_request","request_id":"0ae5602a-1","request":{"subtype":"can_use_tool","tool_name":"Write","display_name":"Write","input":{"file_path":"/ws/hello.txt","content":"hello\n"},"description":"hello.txt","permission_suggestions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}],"tool_use_id":"toolu_1"}}`
	sampleAPI  = `{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"terminal_reason":"api_error","result":"API Error: 500","num_turns":1}`
)

func TestParseSampleLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want line
	}{
		{"init", sampleInit, line{Kind: kindInit, Init: initInfo{CWD: "/ws", SessionID: "25ca1710-aa",
			Model: "claude-opus-5-5", Version: "2.1.330", PermissionMode: "default", Tools: []string{"Task", "Bash", "Edit"}}}},
		{"assistant text", sampleText, line{Kind: kindAssistant, MessageID: "msg_1", Texts: []string{"I'll create the file now."}}},
		{"assistant tool use", sampleUse, line{Kind: kindAssistant, MessageID: "msg_1",
			Uses: []toolUse{{ID: "toolu_1", Name: "Write", Input: []byte(`{"file_path":"/ws/hello.txt","content":"hello\n"}`)}}}},
		{"tool result", sampleRes, line{Kind: kindToolResult,
			Results: []toolResult{{ToolUseID: "toolu_1", Content: "File created successfully at: /ws/hello.txt"}}}},
		{"can_use_tool", sampleAsk, line{Kind: kindControl, Control: control{RequestID: "0ae5602a-1", Subtype: "can_use_tool",
			ToolName: "Write", Input: []byte(`{"file_path":"/ws/hello.txt","content":"hello\n"}`), ToolUseID: "toolu_1",
			Description: "hello.txt"}}},
		{"text delta", `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I'll"}},"parent_tool_use_id":null}`,
			line{Kind: kindDelta, Delta: "I'll"}},
		{"other stream event", `{"type":"stream_event","event":{"type":"message_stop"}}`, line{Kind: kindIgnored}},
		{"status", `{"type":"system","subtype":"status","status":"requesting"}`, line{Kind: kindIgnored}},
		{"cancel", `{"type":"control_cancel_request","request_id":"r9"}`, line{Kind: kindCancel, Control: control{RequestID: "r9"}}},
		{"reply", `{"type":"control_response","response":{"subtype":"success","request_id":"agenthub_init","response":{}}}`, line{Kind: kindReply}},
		{"sub-agent text", `{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"inner"}]},"parent_tool_use_id":"toolu_9"}`,
			line{Kind: kindAssistant, MessageID: "m2", Texts: []string{"inner"}, Sub: true}},
		{"result blocks", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":[{"type":"text","text":"a"},{"type":"image"}]}]}}`,
			line{Kind: kindToolResult, Results: []toolResult{{ToolUseID: "t", Content: "a\n[image]", IsError: true}}}},
		{"prompt echo", `{"type":"user","message":{"role":"user","content":"hi"}}`, line{Kind: kindIgnored}},
		{"blank", "   ", line{Kind: kindIgnored}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseLine([]byte(tt.in))
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(line{})); diff != "" {
				t.Errorf("parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseResult(t *testing.T) {
	l := parseLine([]byte(sampleDone))
	if l.Kind != kindResult || l.Result.Text != "Done: I created the file." || l.Result.IsError ||
		l.Result.Usage.Input != 100 || l.Result.Usage.Output != 20 || l.Result.Usage.CacheRead != 7 || l.Result.CostUSD != 0.0016 {
		t.Fatalf("result: %+v", l)
	}
	l = parseLine([]byte(sampleAPI))
	if l.Kind != kindResult || !l.Result.IsError || l.Result.APIErrorStatus != 500 {
		t.Fatalf("api error result: %+v", l)
	}
	if err := resultError(l.Result); err == nil || !strings.Contains(err.Error(), "HTTP 500") {
		t.Fatalf("resultError: %v", err)
	}
}

// TestParseMalformed: nothing the CLI prints crashes the parser; what it
// cannot use says why.
func TestParseMalformed(t *testing.T) {
	tests := []struct {
		name, in string
		want     kind
		problem  string
	}{
		{"not json", `API Error: connection refused`, kindInvalid, "not a JSON object"},
		{"truncated", sampleText[:80], kindInvalid, "not a JSON object"},
		{"array", `[1,2]`, kindInvalid, "not a JSON object"},
		{"unknown type", `{"type":"telepathy","x":1}`, kindUnknown, `unknown message type "telepathy"`},
		{"no type", `{"hello":"world"}`, kindUnknown, "unknown message type"},
		{"assistant without message", `{"type":"assistant"}`, kindInvalid, "without a message"},
		{"assistant content not a list", `{"type":"assistant","message":{"content":"x"}}`, kindInvalid, "not a list"},
		{"tool_use without id", `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Write"}]}}`, kindInvalid, "without id"},
		{"tool_result without id", `{"type":"user","message":{"content":[{"type":"tool_result","content":"x"}]}}`, kindInvalid, "tool_use_id"},
		{"control without id", `{"type":"control_request","request":{"subtype":"can_use_tool"}}`, kindInvalid, "request_id"},
		{"can_use_tool without input", `{"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool","tool_name":"Write","input":"x"}}`, kindInvalid, "input object"},
		{"result without subtype", `{"type":"result","is_error":false}`, kindInvalid, "without subtype"},
		{"result with wrong types", `{"type":"result","subtype":"success","num_turns":"two"}`, kindInvalid, "result:"},
		{"stream_event without event", `{"type":"stream_event"}`, kindInvalid, "without an event"},
		{"init with wrong types", `{"type":"system","subtype":"init","tools":"all"}`, kindInvalid, "system/init"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseLine([]byte(tt.in))
			if got.Kind != tt.want || !strings.Contains(got.Problem, tt.problem) {
				t.Fatalf("parse %q = kind %d problem %q, want kind %d with %q", tt.in, got.Kind, got.Problem, tt.want, tt.problem)
			}
		})
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{sampleInit, sampleText, sampleUse, sampleRes, sampleDone, sampleAsk, sampleAPI, `{"type":`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l := parseLine(b)
		if (l.Kind == kindInvalid || l.Kind == kindUnknown) && l.Problem == "" {
			t.Fatalf("an unusable line without a reason: %q", b)
		}
	})
}

func TestClip(t *testing.T) {
	if got := scrub.Clip("héllo", 2); got != "h…" {
		t.Fatalf("clip = %q", got)
	}
	if got := scrub.Clip("abc", 3); got != "abc" {
		t.Fatalf("clip = %q", got)
	}
}
