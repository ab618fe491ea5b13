// Package protocol holds what the ecosystem protocol adapters (AG-UI in
// app/protocol/agui, the AI SDK v6 UI message stream in app/protocol/aisdk)
// share: how an approval is described to a foreign client (the response
// schema) and how an answer from one becomes an AgentHub decision bound to
// the subject hash the client was shown. Pure functions over the backend
// vocabulary: no I/O, so the adapters stay table-testable.
package protocol

import (
	"encoding/json"
	"fmt"
	"strings"

	"agenthub/backend"
)

// Answer is what a protocol client sends back for one approval: the
// AG-UI resume payload, or the AI SDK body's agenthub.decisions entry.
// SubjectHash must be the hash the client was shown (AP9).
type Answer struct {
	Decision    backend.DecisionKind `json:"decision"`
	SubjectHash string               `json:"subjectHash"`
	Reason      string               `json:"reason,omitempty"`
	Hunks       []backend.HunkRef    `json:"hunks,omitempty"`
	DecisionID  string               `json:"decisionId,omitempty"`
}

// For turns an answer for approvalID into the decision the approvals
// facade takes; decisionID is used when the answer names none, so a client
// that retries the same request has one effect (AP7).
func (a Answer) For(approvalID, decisionID string) backend.Decision {
	id := a.DecisionID
	if id == "" {
		id = decisionID
	}
	return backend.Decision{DecisionID: id, ApprovalID: approvalID, Kind: a.Decision,
		SubjectHash: a.SubjectHash, Reason: a.Reason, Hunks: a.Hunks}
}

// Prompt is the part of an approval a foreign client shows: what the
// approval dialog shows, with the hash the answer must carry.
type Prompt struct {
	ApprovalID       string                 `json:"approvalId"`
	RunID            string                 `json:"runId"`
	ToolCallID       string                 `json:"toolCallId"`
	Kind             backend.ActionKind     `json:"kind"`
	Title            string                 `json:"title"`
	Risk             backend.Risk           `json:"risk"`
	Subject          json.RawMessage        `json:"subject"`
	SubjectHash      string                 `json:"subjectHash"`
	Path             string                 `json:"path,omitempty"`    // a patch's file
	Diff             string                 `json:"diff,omitempty"`    // a patch's unified diff
	Hunks            int                    `json:"hunks,omitempty"`   // how many hunks a selection may name
	Command          string                 `json:"command,omitempty"` // a shell command
	DecisionsOffered []backend.DecisionKind `json:"decisionsOffered"`
	Preview          json.RawMessage        `json:"preview,omitempty"`
}

// preview is the part of an approval preview the prompt lifts out.
type preview struct {
	Path    string `json:"path"`
	Unified string `json:"unified"`
	Command string `json:"command"`
	Diff    struct {
		Hunks []json.RawMessage `json:"hunks"`
	} `json:"diff"`
}

// PromptOf describes a ticket for a foreign client.
func PromptOf(t backend.ApprovalRequest) Prompt {
	var pv preview
	_ = json.Unmarshal(t.Preview, &pv) // a preview of another shape has none of these
	p := Prompt{ApprovalID: t.ID, RunID: t.RunID, ToolCallID: t.ToolCallID, Kind: t.Kind, Title: t.Title,
		Risk: t.Risk, Subject: t.Subject, SubjectHash: t.SubjectHash, DecisionsOffered: t.DecisionsOffered,
		Preview: t.Preview}
	switch t.Kind {
	case backend.ActionPatch, backend.ActionWrite:
		p.Path, p.Diff, p.Hunks = pv.Path, pv.Unified, len(pv.Diff.Hunks)
	case backend.ActionShell:
		p.Command = pv.Command
	}
	if len(p.DecisionsOffered) == 0 {
		p.DecisionsOffered = []backend.DecisionKind{backend.ApproveOnce, backend.RejectAndTell, backend.RejectAndStop}
	}
	return p
}

// ResponseSchema is the JSON Schema of an [Answer] to p: the decisions it
// offers, its subject hash as a constant, and for a patch with hunks the
// selection (hunks of its own file, by index from 0).
func (p Prompt) ResponseSchema() map[string]any {
	props := map[string]any{
		"decision":    map[string]any{"type": "string", "enum": p.DecisionsOffered},
		"subjectHash": map[string]any{"type": "string", "const": p.SubjectHash},
		"reason":      map[string]any{"type": "string"},
		"decisionId":  map[string]any{"type": "string"},
	}
	if p.Hunks > 0 && p.Path != "" {
		props["hunks"] = map[string]any{
			"type": "array", "minItems": 1, "maxItems": p.Hunks, "uniqueItems": true,
			"description": "approve_once only: the hunks to apply; absent means the whole patch",
			"items": map[string]any{
				"type": "object", "required": []string{"path", "index"}, "additionalProperties": false,
				"properties": map[string]any{
					"path":  map[string]any{"type": "string", "const": p.Path},
					"index": map[string]any{"type": "integer", "minimum": 0, "maximum": p.Hunks - 1},
				},
			},
		}
	}
	return map[string]any{"type": "object", "required": []string{"decision", "subjectHash"},
		"additionalProperties": false, "properties": props}
}

// Message is the one-line prompt for whoever answers.
func (p Prompt) Message() string {
	switch {
	case p.Command != "":
		return fmt.Sprintf("%s (run `%s`)", p.Title, p.Command)
	case p.Path != "":
		return fmt.Sprintf("%s (%s, %d hunk%s)", p.Title, p.Path, p.Hunks, plural(p.Hunks))
	}
	return p.Title
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// TicketOf reads the payload of run.approval.requested.
func TicketOf(ev backend.Event) (backend.ApprovalRequest, error) {
	var t backend.ApprovalRequest
	if err := json.Unmarshal(ev.Payload, &t); err != nil {
		return t, fmt.Errorf("read approval #%d of %s: %w", ev.Sequence, ev.RunID, err)
	}
	return t, nil
}

// SplitApprovalToken undoes [ApprovalToken].
func SplitApprovalToken(tok string) (approvalID, subjectHash string) {
	id, hash, _ := strings.Cut(tok, "#")
	return id, hash
}

// ApprovalToken is the approval id a client that answers yes or no with
// no room for a hash (the AI SDK's tool approval) echoes back: the
// approval and the hash it was shown, so the answer stays bound to what
// was shown and a changed request is refused as stale.
func ApprovalToken(approvalID, subjectHash string) string { return approvalID + "#" + subjectHash }
