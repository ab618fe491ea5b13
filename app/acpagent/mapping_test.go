package acpagent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
	"agenthub/backend/patch"
	"agenthub/diffview"
)

func event(t *testing.T, typ backend.EventType, payload any) backend.Event {
	t.Helper()
	raw, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return backend.Event{Type: typ, Payload: raw, RunID: "run_1", Sequence: 1}
}

// wire is an update as the editor receives it.
func wire(t *testing.T, u acp.SessionUpdate) map[string]any {
	t.Helper()
	raw, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// twoHunks is a patch of story.txt changing its first and last line.
func twoHunks(t *testing.T) backend.ApprovalRequest {
	t.Helper()
	line := func(op diffview.Op, text string) diffview.Line {
		return diffview.Line{Op: op, Text: text, EOL: diffview.EOLLF}
	}
	pv := patch.Preview{Tool: "write_file", Path: "story.txt", Operation: "modify", Diff: diffview.FileDiff{Hunks: []diffview.Hunk{
		{OldStart: 1, OldLines: 2, NewStart: 1, NewLines: 2, Lines: []diffview.Line{
			line(diffview.OpDelete, "line 1"), line(diffview.OpAdd, "LINE 1"), line(diffview.OpContext, "line 2")}},
		{OldStart: 19, OldLines: 2, NewStart: 19, NewLines: 2, Lines: []diffview.Line{
			line(diffview.OpContext, "line 19"), line(diffview.OpDelete, "line 20"), line(diffview.OpAdd, "LINE 20")}},
	}}}
	raw, err := json.Marshal(pv)
	if err != nil {
		t.Fatal(err)
	}
	return backend.ApprovalRequest{ID: "apr_1", RunID: "run_1", ToolCallID: "call_1", Kind: backend.ActionPatch,
		Title: "Edit story.txt", Preview: raw, SubjectHash: "sha256:abc",
		DecisionsOffered: []backend.DecisionKind{backend.ApproveOnce, backend.ApproveForRun, backend.AlwaysAllowWorkspace,
			backend.RejectAndTell, backend.RejectAndStop}}
}

func shellApproval() backend.ApprovalRequest {
	return backend.ApprovalRequest{ID: "apr_2", ToolCallID: "call_2", Kind: backend.ActionShell, Title: "Run: echo hi",
		Preview: json.RawMessage(`{"command":"echo hi","cwd":"."}`), SubjectHash: "sha256:def",
		DecisionsOffered: []backend.DecisionKind{backend.ApproveOnce, backend.RejectAndTell}}
}

func TestUpdates(t *testing.T) {
	cases := []struct {
		name string
		ev   func(t *testing.T) backend.Event
		want []map[string]any // the wire form of each update, compared on the keys given
	}{
		{"message delta is an agent message chunk", func(t *testing.T) backend.Event {
			return event(t, backend.EvMessageDelta, map[string]string{"messageId": "m1", "text": "Hello"})
		}, []map[string]any{{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "Hello"}}}},
		{"a completed message not streamed is sent whole", func(t *testing.T) backend.Event {
			return event(t, backend.EvMessageCompleted, map[string]string{"messageId": "m2", "role": "assistant", "text": "Whole"})
		}, []map[string]any{{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "Whole"}}}},
		{"tool call starts pending with kind, title, input and location", func(t *testing.T) backend.Event {
			return event(t, backend.EvToolCall, map[string]any{"toolCallId": "call_1", "name": "write_file",
				"arguments": map[string]string{"path": "notes.txt", "content": "x"}})
		}, []map[string]any{{"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "write_file: notes.txt",
			"kind": "edit", "status": "pending", "rawInput": map[string]any{"path": "notes.txt", "content": "x"},
			"locations": []any{map[string]any{"path": "/ws/notes.txt"}}}}},
		{"shell call is execute, titled by its command", func(t *testing.T) backend.Event {
			return event(t, backend.EvToolCall, map[string]any{"toolCallId": "call_2", "name": "run_shell",
				"arguments": map[string]string{"command": "echo hi"}})
		}, []map[string]any{{"sessionUpdate": "tool_call", "title": "run_shell: echo hi", "kind": "execute"}}},
		{"shell output streams into the call", func(t *testing.T) backend.Event {
			return event(t, backend.EvToolDelta, map[string]string{"toolCallId": "call_2", "text": "hi\n"})
		}, []map[string]any{{"sessionUpdate": "tool_call_update", "toolCallId": "call_2", "status": "in_progress",
			"content": []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "```\nhi\n```"}}}}}},
		{"approved decision moves the call in progress", func(t *testing.T) backend.Event {
			return event(t, backend.EvApprovalResolved, map[string]string{"approvalId": "apr_1", "toolCallId": "call_1", "decision": "approve_once"})
		}, []map[string]any{{"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "in_progress"}}},
		{"a rejection says nothing until the result", func(t *testing.T) backend.Event {
			return event(t, backend.EvApprovalResolved, map[string]string{"approvalId": "apr_1", "toolCallId": "call_1", "decision": "reject_and_tell"})
		}, nil},
		{"failed result fails the call", func(t *testing.T) backend.Event {
			return event(t, backend.EvToolResult, map[string]any{"toolCallId": "call_3", "content": "rejected", "isError": true})
		}, []map[string]any{{"sessionUpdate": "tool_call_update", "toolCallId": "call_3", "status": "failed",
			"content": []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "```\nrejected\n```"}}}}}},
		{"run failure is told with its code and next step", func(t *testing.T) backend.Event {
			return event(t, backend.EvRunFailed, backend.RunEnded{Code: backend.FailInternal, Message: "boom", Next: "retry"})
		}, []map[string]any{{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text",
			"text": "\n\nThe run failed (internal_error): boom\nNext: retry"}}}},
		{"a write the policy allowed shows its diff on the call", func(t *testing.T) backend.Event {
			pv := patch.Preview{Path: "notes.txt", Operation: "create", Diff: diffview.FileDiff{Hunks: []diffview.Hunk{{NewStart: 1, NewLines: 1,
				Lines: []diffview.Line{{Op: diffview.OpAdd, Text: "hi", EOL: diffview.EOLLF}}}}}}
			return event(t, backend.EvPatchProposed, map[string]any{"toolCallId": "call_4", "resolver": "policy", "preview": pv})
		}, []map[string]any{{"sessionUpdate": "tool_call_update", "toolCallId": "call_4", "status": "in_progress",
			"content":   []any{map[string]any{"type": "diff", "path": "/ws/notes.txt", "newText": "hi\n"}},
			"locations": []any{map[string]any{"path": "/ws/notes.txt"}}}}},
		{"a reviewed proposal was shown with its approval", func(t *testing.T) backend.Event {
			return event(t, backend.EvPatchProposed, map[string]any{"toolCallId": "call_1", "resolver": "reviewer", "approvalId": "apr_1"})
		}, nil},
		{"status changes map to nothing", func(t *testing.T) backend.Event {
			return event(t, backend.EvRunStatusChanged, backend.StatusChanged{From: backend.RunRunning, To: backend.RunNeedsApproval})
		}, nil},
		{"a malformed payload maps to nothing", func(t *testing.T) backend.Event {
			return backend.Event{Type: backend.EvToolCall, Payload: json.RawMessage(`[1]`)}
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := newMapper("/ws").updates(c.ev(t))
			if len(got) != len(c.want) {
				t.Fatalf("%d updates, want %d: %+v", len(got), len(c.want), got)
			}
			for i, u := range got {
				w := wire(t, u)
				for k, v := range c.want[i] {
					if diff := cmp.Diff(v, w[k]); diff != "" {
						t.Errorf("update %d key %s (-want +got):\n%s\nwhole: %v", i, k, diff, w)
					}
				}
			}
		})
	}
}

// TestStreamedMessageIsNotRepeated: the completed message of a streamed
// message must not be sent a second time.
func TestStreamedMessageIsNotRepeated(t *testing.T) {
	m := newMapper("/ws")
	m.updates(event(t, backend.EvMessageDelta, map[string]string{"messageId": "m1", "text": "Hel"}))
	if got := m.updates(event(t, backend.EvMessageCompleted, map[string]string{"messageId": "m1", "role": "assistant", "text": "Hello"})); len(got) != 0 {
		t.Fatalf("a streamed message was repeated: %+v", got)
	}
}

// TestResultKeepsApprovedDiff: the result of a patch call keeps the diff the
// reviewer approved above the tool's text (ACP content replaces content).
func TestResultKeepsApprovedDiff(t *testing.T) {
	m := newMapper("/ws")
	m.updates(event(t, backend.EvApprovalRequested, twoHunks(t)))
	got := m.updates(event(t, backend.EvToolResult, map[string]any{"toolCallId": "call_1", "content": "updated story.txt"}))
	w := wire(t, got[0])
	content := w["content"].([]any)
	if len(content) != 3 {
		t.Fatalf("content %v, want the two hunk diffs and the result", content)
	}
	for i := 0; i < 2; i++ {
		if c := content[i].(map[string]any); c["type"] != "diff" || c["path"] != "/ws/story.txt" {
			t.Errorf("content %d = %v, want a diff of /ws/story.txt", i, c)
		}
	}
}

func TestApprovalContent(t *testing.T) {
	create := func() backend.ApprovalRequest {
		pv := patch.Preview{Path: "notes.txt", Operation: "create", Diff: diffview.FileDiff{Hunks: []diffview.Hunk{{NewStart: 1, NewLines: 1,
			Lines: []diffview.Line{{Op: diffview.OpAdd, Text: "approved", EOL: diffview.EOLLF}}}}}}
		raw, _ := json.Marshal(pv)
		return backend.ApprovalRequest{Kind: backend.ActionPatch, Title: "Create notes.txt", Preview: raw}
	}
	cases := []struct {
		name     string
		a        backend.ApprovalRequest
		kind     acp.ToolKind
		wantWire []map[string]any
	}{
		{"a created file is one diff without old text", create(), acp.ToolKindEdit, []map[string]any{
			{"type": "diff", "path": "/ws/notes.txt", "newText": "approved\n", "oldText": nil}}},
		{"two hunks are labelled and diffed one by one", twoHunks(t), acp.ToolKindEdit, []map[string]any{
			{"type": "content", "content": map[string]any{"type": "text", "text": "hunk 1 of 2  @@ -1,2 +1,2 @@"}},
			{"type": "diff", "path": "/ws/story.txt", "oldText": "line 1\nline 2\n", "newText": "LINE 1\nline 2\n"},
			{"type": "content", "content": map[string]any{"type": "text", "text": "hunk 2 of 2  @@ -19,2 +19,2 @@"}},
			{"type": "diff", "path": "/ws/story.txt", "oldText": "line 19\nline 20\n", "newText": "line 19\nLINE 20\n"}}},
		{"a command shows the command line", shellApproval(), acp.ToolKindExecute, []map[string]any{
			{"type": "content", "content": map[string]any{"type": "text", "text": "```sh\n$ echo hi\n```"}}}},
		{"anything else shows its title and preview", backend.ApprovalRequest{Kind: backend.ActionPush, Title: "Push main",
			Preview: json.RawMessage(`{"remote":"origin"}`)}, acp.ToolKindOther, []map[string]any{
			{"type": "content", "content": map[string]any{"type": "text", "text": "Push main\n```\n{\n  \"remote\": \"origin\"\n}\n```"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kind, content, _ := approvalContent("/ws", c.a)
			if kind != c.kind {
				t.Errorf("kind %s, want %s", kind, c.kind)
			}
			raw, _ := json.Marshal(content)
			var got []map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.wantWire) {
				t.Fatalf("content %v, want %d items", got, len(c.wantWire))
			}
			for i := range got {
				for k, v := range c.wantWire[i] {
					if diff := cmp.Diff(v, got[i][k]); diff != "" {
						t.Errorf("item %d key %s (-want +got):\n%s", i, k, diff)
					}
				}
			}
		})
	}
}

func TestPermissionOptions(t *testing.T) {
	ids := func(opts []acp.PermissionOption) string {
		var s []string
		for _, o := range opts {
			s = append(s, string(o.OptionId)+"/"+string(o.Kind))
		}
		return strings.Join(s, " ")
	}
	onlyOnce := shellApproval()
	push := backend.ApprovalRequest{Kind: backend.ActionPush, DecisionsOffered: []backend.DecisionKind{backend.ApproveOnce,
		backend.ApproveForRun, backend.RejectAndTell}}
	cases := []struct {
		name string
		a    backend.ApprovalRequest
		want string
	}{
		{"a two-hunk patch offers each hunk", twoHunks(t),
			"allow_once/allow_once hunks:1/allow_once hunks:2/allow_once allow_for_run/allow_always reject/reject_once reject_and_stop/reject_once"},
		{"only offered decisions appear", onlyOnce, "allow_once/allow_once reject/reject_once"},
		{"a push always asks: no allow for the run", push, "allow_once/allow_once reject/reject_once"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ids(permissionOptions(c.a)); got != c.want {
				t.Errorf("options\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestHunkGroups(t *testing.T) {
	cases := []struct {
		n, max int
		want   []hunkGroup
	}{
		{0, 8, nil},
		{1, 8, []hunkGroup{{1, 1}}},
		{3, 8, []hunkGroup{{1, 1}, {2, 2}, {3, 3}}},
		{8, 8, []hunkGroup{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}, {7, 7}, {8, 8}}},
		{10, 4, []hunkGroup{{1, 3}, {4, 6}, {7, 8}, {9, 10}}},
		{20, 8, []hunkGroup{{1, 3}, {4, 6}, {7, 9}, {10, 12}, {13, 14}, {15, 16}, {17, 18}, {19, 20}}},
	}
	for _, c := range cases {
		got := hunkGroups(c.n, c.max)
		if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(hunkGroup{})); diff != "" {
			t.Errorf("hunkGroups(%d, %d) (-want +got):\n%s", c.n, c.max, diff)
		}
		covered := 0
		for _, g := range got {
			covered += g.to - g.from + 1
		}
		if covered != c.n {
			t.Errorf("hunkGroups(%d, %d) covers %d hunks", c.n, c.max, covered)
		}
	}
}

func TestDecision(t *testing.T) {
	patchReq := twoHunks(t)
	selected := func(id string) acp.RequestPermissionOutcome {
		return acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(id))
	}
	cases := []struct {
		name      string
		a         backend.ApprovalRequest
		out       acp.RequestPermissionOutcome
		want      backend.Decision
		cancelled bool
		errCode   backend.FailureCode
	}{
		{"allow once", patchReq, selected("allow_once"), backend.Decision{ApprovalID: "apr_1", ToolCallID: "call_1",
			SubjectHash: "sha256:abc", Kind: backend.ApproveOnce}, false, ""},
		{"one hunk of two", patchReq, selected("hunks:2"), backend.Decision{ApprovalID: "apr_1", ToolCallID: "call_1",
			SubjectHash: "sha256:abc", Kind: backend.ApproveOnce, Hunks: []backend.HunkRef{{Path: "story.txt", Index: 1}}}, false, ""},
		{"allow for the run", patchReq, selected("allow_for_run"), backend.Decision{ApprovalID: "apr_1", ToolCallID: "call_1",
			SubjectHash: "sha256:abc", Kind: backend.ApproveForRun}, false, ""},
		{"reject tells the agent why", patchReq, selected("reject"), backend.Decision{ApprovalID: "apr_1", ToolCallID: "call_1",
			SubjectHash: "sha256:abc", Kind: backend.RejectAndTell, Reason: RejectReason}, false, ""},
		{"reject and stop", patchReq, selected("reject_and_stop"), backend.Decision{ApprovalID: "apr_1", ToolCallID: "call_1",
			SubjectHash: "sha256:abc", Kind: backend.RejectAndStop, Reason: RejectReason}, false, ""},
		{"cancelled decides nothing", patchReq, acp.NewRequestPermissionOutcomeCancelled(), backend.Decision{}, true, ""},
		{"an option never offered is refused", shellApproval(), selected("hunks:1"), backend.Decision{}, false, backend.CodeInvalidInput},
		{"an unknown option is refused", patchReq, selected("allow_always_everywhere"), backend.Decision{}, false, backend.CodeInvalidInput},
		{"a hunk the patch does not have is refused", patchReq, selected("hunks:3"), backend.Decision{}, false, backend.CodeInvalidInput},
		{"a range past the hunks is refused", patchReq, selected("hunks:1-3"), backend.Decision{}, false, backend.CodeInvalidInput},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, cancelled, err := decision(c.a, c.out)
			var be *backend.Error
			switch {
			case c.errCode != "":
				if !errors.As(err, &be) || be.Code != c.errCode || be.Next == "" {
					t.Fatalf("err %v, want code %s with a next step", err, c.errCode)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if cancelled != c.cancelled {
				t.Errorf("cancelled %v, want %v", cancelled, c.cancelled)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPromptText: linked files are named relative to the workspace (a file
// outside it by name only), so the stored task holds no machine path.
func TestPromptText(t *testing.T) {
	blocks := []acp.ContentBlock{acp.TextBlock("fix the bug in"), acp.ResourceLinkBlock("main.go", "file:///ws/cmd/main.go"),
		acp.ResourceLinkBlock("passwd", "file:///etc/passwd"), acp.ResourceLinkBlock("spec", "https://example.com/spec"),
		acp.ResourceBlock(acp.EmbeddedResourceResource{TextResourceContents: &acp.TextResourceContents{Uri: "file:///ws/a.txt", Text: "alpha"}})}
	want := "fix the bug in\n@cmd/main.go\n@passwd\n@https://example.com/spec\n@a.txt:\n```\nalpha\n```"
	if got := promptText("/ws", blocks); got != want {
		t.Errorf("promptText = %q, want %q", got, want)
	}
}

func TestRequestErrorCarriesCodeAndNext(t *testing.T) {
	re := requestError(&backend.Error{Code: backend.FailOutsideAllowlist, Message: "/tmp/x is not an allowlisted workspace",
		Next: "Add it to the allowlist first: agenthub workspace add /tmp/x"})
	if re.Code != -32602 || !strings.Contains(re.Message, "(workspace_outside_allowlist)") || !strings.Contains(re.Message, "agenthub workspace add") {
		t.Errorf("request error %+v", re)
	}
	data := re.Data.(map[string]string)
	if data["code"] != "workspace_outside_allowlist" || data["next"] == "" {
		t.Errorf("data %v", data)
	}
}

func TestAbsPathStaysInRoot(t *testing.T) {
	cases := map[string]string{"notes.txt": "/ws/notes.txt", "a/b.txt": "/ws/a/b.txt", "../etc/passwd": "/ws/passwd", "/abs": "/abs"}
	for rel, want := range cases {
		if got := absPath("/ws", rel); got != want {
			t.Errorf("absPath(%q) = %q, want %q", rel, got, want)
		}
	}
}
