package acpagent

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"agenthub/backend"
	"agenthub/backend/patch"
	"agenthub/diffview"
)

// maxOutput bounds the tool output one tool call shows in the editor: the
// whole output stays in the run's events.
const maxOutput = 64 << 10

// maxHunkOptions bounds the per-hunk options of one permission request:
// a patch with more hunks is offered in this many contiguous groups, so a
// dialog never grows a button per hunk of a large rewrite.
const maxHunkOptions = 8

// mapper turns one run's envelope events into ACP session updates. It keeps
// what a later event needs of an earlier one: whether a message was
// streamed, a tool call's output so far and the diff its approval showed.
type mapper struct {
	// root is the workspace directory as the editor named it: ACP wants
	// absolute paths, AgentHub's events carry workspace-relative ones.
	root     string
	streamed map[string]bool
	output   map[string]string
	diffs    map[string][]acp.ToolCallContent
}

func newMapper(root string) *mapper {
	return &mapper{root: root, streamed: map[string]bool{}, output: map[string]string{},
		diffs: map[string][]acp.ToolCallContent{}}
}

// Payloads of the events the mapper reads (backend/event.go, run-model §13).
type (
	messagePayload struct {
		MessageID string `json:"messageId"`
		Text      string `json:"text"`
		Role      string `json:"role"`
	}
	toolCallPayload struct {
		ToolCallID string          `json:"toolCallId"`
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
	}
	toolDeltaPayload struct {
		ToolCallID string `json:"toolCallId"`
		Text       string `json:"text"`
	}
	toolResultPayload struct {
		ToolCallID string `json:"toolCallId"`
		Content    string `json:"content"`
		IsError    bool   `json:"isError"`
		Status     string `json:"status"`
	}
	// proposedPayload is run.patch.proposed: a policy-approved proposal
	// carries its preview, since no approval showed it.
	proposedPayload struct {
		ToolCallID string          `json:"toolCallId"`
		Resolver   string          `json:"resolver"`
		Preview    json.RawMessage `json:"preview"`
	}
	resolvedPayload struct {
		ApprovalID string               `json:"approvalId"`
		ToolCallID string               `json:"toolCallId"`
		Decision   backend.DecisionKind `json:"decision"`
	}
)

// updates maps one event to the session updates it means to the editor;
// most events (status changes, checkpoints) mean none.
func (m *mapper) updates(ev backend.Event) []acp.SessionUpdate {
	switch ev.Type {
	case backend.EvMessageDelta:
		var p messagePayload
		if json.Unmarshal(ev.Payload, &p) != nil || p.Text == "" {
			return nil
		}
		m.streamed[p.MessageID] = true
		return []acp.SessionUpdate{acp.UpdateAgentMessageText(p.Text)}
	case backend.EvMessageCompleted:
		// A runtime that does not stream sends the whole text here only.
		var p messagePayload
		if json.Unmarshal(ev.Payload, &p) != nil || p.Text == "" || m.streamed[p.MessageID] ||
			(p.Role != "" && p.Role != string(backend.RoleAssistant)) {
			return nil
		}
		return []acp.SessionUpdate{acp.UpdateAgentMessageText(p.Text)}
	case backend.EvToolCall:
		var p toolCallPayload
		if json.Unmarshal(ev.Payload, &p) != nil || p.ToolCallID == "" {
			return nil
		}
		opts := []acp.ToolCallStartOpt{acp.WithStartKind(toolKind(p.Name)), acp.WithStartStatus(acp.ToolCallStatusPending)}
		if len(p.Arguments) > 0 && json.Valid(p.Arguments) {
			opts = append(opts, acp.WithStartRawInput(p.Arguments))
		}
		if loc := m.location(argString(p.Arguments, "path")); loc != nil {
			opts = append(opts, acp.WithStartLocations([]acp.ToolCallLocation{*loc}))
		}
		return []acp.SessionUpdate{acp.StartToolCall(acp.ToolCallId(p.ToolCallID), toolTitle(p.Name, p.Arguments), opts...)}
	case backend.EvApprovalRequested:
		var a backend.ApprovalRequest
		if json.Unmarshal(ev.Payload, &a) != nil || a.ToolCallID == "" {
			return nil
		}
		tc := m.approvalToolCall(a)
		return []acp.SessionUpdate{{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: tc.ToolCallId,
			Title: tc.Title, Kind: tc.Kind, Status: tc.Status, Content: tc.Content, Locations: tc.Locations}}}
	case backend.EvPatchProposed:
		// A write the policy allowed asks nobody: show its diff on the call
		// all the same. A reviewed one was shown with its approval.
		var p proposedPayload
		if json.Unmarshal(ev.Payload, &p) != nil || p.ToolCallID == "" || len(p.Preview) == 0 {
			return nil
		}
		var pv patch.Preview
		if json.Unmarshal(p.Preview, &pv) != nil || pv.Path == "" {
			return nil
		}
		content := patchContent(m.root, pv)
		m.diffs[p.ToolCallID] = diffsOnly(content)
		opts := []acp.ToolCallUpdateOpt{acp.WithUpdateStatus(acp.ToolCallStatusInProgress), acp.WithUpdateContent(content)}
		if loc := m.location(pv.Path); loc != nil {
			opts = append(opts, acp.WithUpdateLocations([]acp.ToolCallLocation{*loc}))
		}
		return []acp.SessionUpdate{acp.UpdateToolCall(acp.ToolCallId(p.ToolCallID), opts...)}
	case backend.EvApprovalResolved:
		var p resolvedPayload
		if json.Unmarshal(ev.Payload, &p) != nil || p.ToolCallID == "" || !p.Decision.Approves() {
			return nil
		}
		return []acp.SessionUpdate{acp.UpdateToolCall(acp.ToolCallId(p.ToolCallID),
			acp.WithUpdateStatus(acp.ToolCallStatusInProgress))}
	case backend.EvToolDelta:
		var p toolDeltaPayload
		if json.Unmarshal(ev.Payload, &p) != nil || p.ToolCallID == "" || p.Text == "" {
			return nil
		}
		out := m.output[p.ToolCallID]
		if len(out) >= maxOutput {
			return nil
		}
		out += p.Text
		if len(out) > maxOutput {
			out = out[:maxOutput] + "\n… (the rest is in the run's events)"
		}
		m.output[p.ToolCallID] = out
		return []acp.SessionUpdate{acp.UpdateToolCall(acp.ToolCallId(p.ToolCallID),
			acp.WithUpdateStatus(acp.ToolCallStatusInProgress),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(fence(out)))}))}
	case backend.EvToolResult:
		var p toolResultPayload
		if json.Unmarshal(ev.Payload, &p) != nil || p.ToolCallID == "" {
			return nil
		}
		status := acp.ToolCallStatusCompleted
		if p.IsError {
			status = acp.ToolCallStatusFailed
		}
		// Content replaces what the call showed: keep the diff it was
		// approved with above the result.
		content := append([]acp.ToolCallContent{}, m.diffs[p.ToolCallID]...)
		if p.Content != "" {
			content = append(content, acp.ToolContent(acp.TextBlock(fence(clip(p.Content)))))
		}
		return []acp.SessionUpdate{acp.UpdateToolCall(acp.ToolCallId(p.ToolCallID), acp.WithUpdateStatus(status),
			acp.WithUpdateContent(content), acp.WithUpdateRawOutput(p))}
	case backend.EvRunFailed:
		var p backend.RunEnded
		if json.Unmarshal(ev.Payload, &p) != nil {
			return nil
		}
		return []acp.SessionUpdate{acp.UpdateAgentMessageText(failureText(p))}
	}
	return nil
}

// approvalToolCall is the tool call as the approval dialog shows it: its
// kind, title and the diff or command it asks for.
func (m *mapper) approvalToolCall(a backend.ApprovalRequest) acp.ToolCallUpdate {
	kind, content, path := approvalContent(m.root, a)
	m.diffs[a.ToolCallID] = diffsOnly(content)
	tc := acp.ToolCallUpdate{ToolCallId: acp.ToolCallId(a.ToolCallID), Title: acp.Ptr(a.Title), Kind: acp.Ptr(kind),
		Status: acp.Ptr(acp.ToolCallStatusPending), Content: content}
	if loc := m.location(path); loc != nil {
		tc.Locations = []acp.ToolCallLocation{*loc}
	}
	return tc
}

func (m *mapper) location(rel string) *acp.ToolCallLocation {
	if rel == "" || m.root == "" {
		return nil
	}
	return &acp.ToolCallLocation{Path: absPath(m.root, rel)}
}

// approvalContent is what an approval shows: a patch as one diff per hunk
// (with a numbered heading when there are several, matching the per-hunk
// options), a command as the command line, anything else as its title and
// preview. path is the file a patch changes.
func approvalContent(root string, a backend.ApprovalRequest) (kind acp.ToolKind, content []acp.ToolCallContent, path string) {
	switch a.Kind {
	case backend.ActionPatch, backend.ActionWrite:
		var pv patch.Preview
		if json.Unmarshal(a.Preview, &pv) == nil && pv.Path != "" {
			kind = acp.ToolKindEdit
			if pv.Operation == "delete" {
				kind = acp.ToolKindDelete
			}
			return kind, patchContent(root, pv), pv.Path
		}
		kind = acp.ToolKindEdit
	case backend.ActionShell:
		var pv struct {
			Command string `json:"command"`
			Cwd     string `json:"cwd"`
		}
		if json.Unmarshal(a.Preview, &pv) == nil && pv.Command != "" {
			text := "```sh\n$ " + pv.Command + "\n```"
			if pv.Cwd != "" && pv.Cwd != "." {
				text += "\nin " + pv.Cwd
			}
			return acp.ToolKindExecute, []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(text))}, ""
		}
		kind = acp.ToolKindExecute
	case backend.ActionNetwork:
		kind = acp.ToolKindFetch
	case backend.ActionRead:
		kind = acp.ToolKindRead
	default:
		kind = acp.ToolKindOther
	}
	return kind, []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(a.Title + "\n" + fence(clip(compactJSON(a.Preview)))))}, ""
}

// patchContent shows a patch's hunks as ACP diffs. A diff carries the
// hunk's old and new lines (context included), not the whole file: that is
// what the reviewer approves, hunk by hunk.
func patchContent(root string, pv patch.Preview) []acp.ToolCallContent {
	hunks := pv.Diff.Hunks
	abs := absPath(root, pv.Path)
	if len(hunks) == 0 {
		why := "no text hunks: binary, too large or empty; it can only be approved or rejected whole"
		return []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(fmt.Sprintf("%s %s (%s)", pv.Operation, pv.Path, why)))}
	}
	var out []acp.ToolCallContent
	for i, h := range hunks {
		if len(hunks) > 1 {
			out = append(out, acp.ToolContent(acp.TextBlock(hunkLabel(i, len(hunks), h))))
		}
		oldText, newText := hunkTexts(h)
		if pv.Operation == "create" {
			out = append(out, acp.ToolDiffContent(abs, newText)) // no old text: a new file
		} else {
			out = append(out, acp.ToolDiffContent(abs, newText, oldText))
		}
	}
	return out
}

func hunkLabel(i, n int, h diffview.Hunk) string {
	return fmt.Sprintf("hunk %d of %d  @@ -%d,%d +%d,%d @@", i+1, n, h.OldStart, h.OldLines, h.NewStart, h.NewLines)
}

// hunkTexts are a hunk's two sides: context and deleted lines, context and
// added lines, each line with its terminator.
func hunkTexts(h diffview.Hunk) (oldText, newText string) {
	var o, n strings.Builder
	for _, l := range h.Lines {
		line := l.Text
		if l.EOL != diffview.EOLNone {
			line += "\n"
		}
		if l.Op != diffview.OpAdd {
			o.WriteString(line)
		}
		if l.Op != diffview.OpDelete {
			n.WriteString(line)
		}
	}
	return o.String(), n.String()
}

func diffsOnly(content []acp.ToolCallContent) []acp.ToolCallContent {
	var out []acp.ToolCallContent
	for _, c := range content {
		if c.Diff != nil {
			out = append(out, c)
		}
	}
	return out
}

// toolKind says what kind of thing one of AgentHub's tools does, so the
// editor picks its icon; a tool it does not know is "other".
func toolKind(name string) acp.ToolKind {
	switch name {
	case "read_file", "list_dir":
		return acp.ToolKindRead
	case "search", "grep", "glob", "git_status", "git_diff":
		return acp.ToolKindSearch
	case "write_file", "edit_file", "apply_patch":
		return acp.ToolKindEdit
	case "delete_file":
		return acp.ToolKindDelete
	case "run_shell":
		return acp.ToolKindExecute
	case "fetch_url":
		return acp.ToolKindFetch
	}
	return acp.ToolKindOther
}

// toolTitle names a call by its tool and what it touches: the command of a
// shell call, else the path or URL argument.
func toolTitle(name string, args json.RawMessage) string {
	for _, key := range []string{"command", "path", "url", "query", "pattern"} {
		if v := argString(args, key); v != "" {
			if len(v) > 120 {
				v = v[:117] + "…"
			}
			return name + ": " + v
		}
	}
	return name
}

func argString(args json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return ""
	}
	return s
}

// absPath joins a workspace-relative path to the root; anything that tries
// to climb out of it is shown relative, never resolved elsewhere.
func absPath(root, rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	p := filepath.Join(root, rel)
	if p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
		return filepath.Join(root, filepath.Base(rel))
	}
	return p
}

func failureText(p backend.RunEnded) string {
	text := "\n\nThe run failed"
	if p.Code != "" {
		text += " (" + string(p.Code) + ")"
	}
	if p.Message != "" {
		text += ": " + p.Message
	}
	next := p.Next
	if next == "" {
		next = p.Recovery
	}
	if next != "" {
		text += "\nNext: " + next
	}
	return text
}

func fence(s string) string {
	ticks := "```"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + "\n" + strings.TrimRight(s, "\n") + "\n" + ticks
}

func clip(s string) string {
	if len(s) <= maxOutput {
		return s
	}
	return s[:maxOutput] + "\n… (the rest is in the run's events)"
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}
