package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"agenthub/backend"
)

// Ticket is an approval or input ticket row.
type Ticket struct {
	backend.ApprovalRequest
	TicketKind string // approval | input
	ResumeMode backend.ResumeMode
}

// CreateTicket stores an open ticket and its run.approval.requested event
// (SR2) with an audit entry.
func (t *Tx) CreateTicket(tk Ticket) error {
	a := tk.ApprovalRequest
	if a.CreatedAt == "" {
		a.CreatedAt = now()
	}
	// The preview and subject show commands and diffs: what is stored and
	// sent is redacted; the subject hash stays the one of what will execute.
	a.Title, a.GrantPreview = t.s.red.text(a.Title), t.s.red.text(a.GrantPreview)
	a.Preview, a.Subject = t.s.red.json(a.Preview), t.s.red.json(a.Subject)
	trace, _ := json.Marshal(nonNil(a.PolicyTrace))
	trace = t.s.red.json(trace)
	offered, _ := json.Marshal(nonNil(a.DecisionsOffered))
	a.TitleMessage, a.RulePreview = t.s.red.message(a.TitleMessage), t.s.red.message(a.RulePreview)
	msgs, _ := json.Marshal(ticketMessages{Title: a.TitleMessage, RulePreview: a.RulePreview, RuleLocation: a.RuleLocation,
		Risk: a.RiskMessage})
	_, err := t.tx.ExecContext(t.ctx, `INSERT INTO approvals (id, run_id, tool_call_id, ticket_kind, kind, title,
		preview, risk, subject, subject_hash, base_commit, policy_trace, enforcement, decisions_offered,
		grant_preview, resume_mode, status, created_at, messages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
		'pending', ?, ?)`, a.ID, a.RunID, a.ToolCallID, tk.TicketKind, string(a.Kind), a.Title, orJSON(a.Preview, "null"),
		string(a.Risk), orJSON(a.Subject, "null"), a.SubjectHash, a.BaseCommit, string(trace), a.Enforcement, string(offered),
		a.GrantPreview, string(tk.ResumeMode), a.CreatedAt, string(msgs))
	if err != nil {
		return fmt.Errorf("create ticket %s: %w", a.ID, err)
	}
	a.Status = "pending"
	ev, err := t.Append(a.RunID, backend.EvApprovalRequested, a)
	if err != nil {
		return err
	}
	_, err = t.Audit(backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine, Kind: "approval.requested",
		RunID: a.RunID, ToolCallID: a.ToolCallID, SubjectHash: a.SubjectHash,
		Data: map[string]any{"approvalId": a.ID, "kind": string(a.Kind), "event": ev.Sequence}})
	return err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func orJSON(b json.RawMessage, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

// CloseTicket marks an open ticket closed without a decision (cancel,
// reject-and-stop siblings, interrupted runs).
func (t *Tx) CloseTicket(id string) error {
	_, err := t.tx.ExecContext(t.ctx, `UPDATE approvals SET status = 'closed', resolved_at = ?
		WHERE id = ? AND status = 'pending'`, now(), id)
	if err != nil {
		return fmt.Errorf("close ticket %s: %w", id, err)
	}
	return nil
}

// StoredDecision is a committed decision with its recorded outcome.
type StoredDecision struct {
	backend.Decision
	RunID   string
	Payload json.RawMessage
	Outcome json.RawMessage
}

// Ticket reads a ticket by id inside the transaction.
func (t *Tx) Ticket(id string) (Ticket, error) {
	return scanTicket(t.tx.QueryRowContext(t.ctx, ticketSelect+` WHERE id = ?`, id))
}

// DecisionFor returns the decision committed for a ticket, if any.
func (t *Tx) DecisionFor(approvalID string) (StoredDecision, bool, error) {
	var d StoredDecision
	var hunks, payload, outcome string
	err := t.tx.QueryRowContext(t.ctx, `SELECT id, approval_id, run_id, tool_call_id, kind, subject_hash, reason,
		hunks, payload, actor, surface, outcome FROM decisions WHERE approval_id = ?`, approvalID).Scan(
		&d.DecisionID, &d.ApprovalID, &d.RunID, &d.ToolCallID, &d.Kind, &d.SubjectHash, &d.Reason, &hunks,
		&payload, &d.Actor, &d.Surface, &outcome)
	if errors.Is(err, sql.ErrNoRows) {
		return d, false, nil
	}
	if err != nil {
		return d, false, fmt.Errorf("read decision of %s: %w", approvalID, err)
	}
	_ = json.Unmarshal([]byte(hunks), &d.Hunks)
	d.Payload, d.Outcome = json.RawMessage(payload), json.RawMessage(outcome)
	return d, true, nil
}

// Resolve commits a decision for an open ticket (AP8): the decision row, the
// ticket status, run.approval.resolved and the audit entry, together.
func (t *Tx) Resolve(d StoredDecision, resolver string) error {
	// null, not [], when the reviewer chose no hunks at all: absent means
	// the whole patch, an empty list means none of it.
	hunks, _ := json.Marshal(d.Hunks)
	res, err := t.tx.ExecContext(t.ctx, `UPDATE approvals SET status = 'resolved', resolved_at = ?
		WHERE id = ? AND status = 'pending'`, now(), d.ApprovalID)
	if err != nil {
		return fmt.Errorf("resolve ticket %s: %w", d.ApprovalID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("resolve ticket %s: not open: %w", d.ApprovalID, backend.ErrNotFound)
	}
	d.Reason, d.Payload = t.s.red.text(d.Reason), t.s.red.json(d.Payload)
	_, err = t.tx.ExecContext(t.ctx, `INSERT INTO decisions (id, approval_id, run_id, tool_call_id, kind,
		subject_hash, reason, hunks, payload, actor, surface, outcome, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, d.DecisionID, d.ApprovalID, d.RunID, d.ToolCallID,
		string(d.Kind), d.SubjectHash, d.Reason, string(hunks), orJSON(d.Payload, "null"), d.Actor, string(d.Surface),
		orJSON(d.Outcome, "{}"), now())
	if err != nil {
		return fmt.Errorf("insert decision %s: %w", d.DecisionID, err)
	}
	resolved := map[string]any{"approvalId": d.ApprovalID, "toolCallId": d.ToolCallID, "decisionId": d.DecisionID,
		"decision": d.Kind, "resolver": resolver, "subjectHash": d.SubjectHash, "reason": d.Reason}
	if d.Hunks != nil {
		resolved["hunks"] = d.Hunks
	}
	ev, err := t.Append(d.RunID, backend.EvApprovalResolved, resolved)
	if err != nil {
		return err
	}
	// The entry says why and what (issue 19): the reason, the hunks chosen
	// of a patch (absent: the whole patch), and the event it records.
	data := map[string]any{"approvalId": d.ApprovalID, "decisionId": d.DecisionID, "decision": string(d.Kind),
		"event": ev.Sequence}
	if d.Reason != "" {
		data["reason"] = d.Reason
	}
	if d.Hunks != nil {
		hunks := make([]any, len(d.Hunks))
		for i, h := range d.Hunks {
			hunk := map[string]any{"path": h.Path, "index": h.Index}
			if len(h.Lines) > 0 { // the lines chosen of a hunk approved in part
				hunk["lines"] = h.Lines
			}
			hunks[i] = hunk
		}
		data["hunks"] = hunks
	}
	_, err = t.Audit(backend.AuditEntry{Actor: d.Actor, Surface: d.Surface, Kind: "approval.resolved",
		RunID: d.RunID, ToolCallID: d.ToolCallID, SubjectHash: d.SubjectHash, Data: data})
	return err
}

const ticketSelect = `SELECT id, run_id, tool_call_id, ticket_kind, kind, title, preview, risk, subject,
	subject_hash, base_commit, policy_trace, enforcement, decisions_offered, grant_preview, resume_mode, status,
	created_at, messages FROM approvals`

// ticketMessages is the approvals.messages column (migration 00011).
type ticketMessages struct {
	Title        *backend.Text         `json:"titleMessage,omitempty"`
	RulePreview  *backend.Text         `json:"rulePreview,omitempty"`
	RuleLocation *backend.RuleLocation `json:"ruleLocation,omitempty"`
	Risk         *backend.Text         `json:"riskMessage,omitempty"`
}

type scanner interface{ Scan(...any) error }

func scanTicket(row scanner) (Ticket, error) {
	var tk Ticket
	a := &tk.ApprovalRequest
	var preview, subject, trace, offered, msgs string
	err := row.Scan(&a.ID, &a.RunID, &a.ToolCallID, &tk.TicketKind, &a.Kind, &a.Title, &preview, &a.Risk,
		&subject, &a.SubjectHash, &a.BaseCommit, &trace, &a.Enforcement, &offered, &a.GrantPreview,
		&tk.ResumeMode, &a.Status, &a.CreatedAt, &msgs)
	if errors.Is(err, sql.ErrNoRows) {
		return tk, fmt.Errorf("ticket: %w", backend.ErrNotFound)
	}
	if err != nil {
		return tk, fmt.Errorf("read ticket: %w", err)
	}
	a.Preview, a.Subject = json.RawMessage(preview), json.RawMessage(subject)
	_ = json.Unmarshal([]byte(trace), &a.PolicyTrace)
	_ = json.Unmarshal([]byte(offered), &a.DecisionsOffered)
	var m ticketMessages
	if json.Unmarshal([]byte(msgs), &m) == nil { // a row the column cannot describe shows its English text
		a.TitleMessage, a.RulePreview, a.RuleLocation, a.RiskMessage = m.Title, m.RulePreview, m.RuleLocation, m.Risk
	}
	return tk, nil
}
