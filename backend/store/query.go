package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agenthub/backend"
)

const runSelect = `SELECT r.id, r.session_id, r.workspace_id, r.profile, r.agent_id, r.runtime, r.task, r.state,
	r.done_reason, r.failure_code, r.failure_message, r.failure_next, r.scripted, r.actor, r.surface, r.queue_seq, r.plan, r.stats,
	r.last_seq, r.created_at, r.last_event_at, r.resumed_from, r.resumed_by,
	(SELECT count(*) FROM approvals a WHERE a.run_id = r.id AND a.status = 'pending') FROM runs r`

func scanRun(row scanner) (RunRecord, error) {
	var r RunRecord
	var plan, stats string
	err := row.Scan(&r.ID, &r.SessionID, &r.WorkspaceID, &r.Profile, &r.AgentID, &r.Runtime, &r.Task, &r.State,
		&r.DoneReason, &r.FailureCode, &r.FailureMessage, &r.FailureNext, &r.Scripted, &r.Actor, &r.Surface, &r.QueueSeq, &plan,
		&stats, &r.LastSeq, &r.CreatedAt, &r.LastEventAt, &r.ResumedFrom, &r.ResumedBy, &r.PendingApprovals)
	r.Plan, r.Stats = json.RawMessage(plan), json.RawMessage(stats)
	return r, err
}

// Run reads one run, or backend.ErrNotFound.
func (s *Store) Run(ctx context.Context, id string) (RunRecord, error) {
	r, err := scanRun(s.r.QueryRowContext(ctx, runSelect+` WHERE r.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, &backend.NotFound{Kind: "run", ID: id}
	}
	if err != nil {
		return r, fmt.Errorf("read run %s: %w", id, err)
	}
	return r, nil
}

// RunFilter selects runs; zero fields match everything.
type RunFilter struct {
	WorkspaceID string
	SessionID   string
	States      []backend.RunState
	Limit       int
}

// Runs lists runs in admission order (oldest first).
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]RunRecord, error) {
	var where []string
	var args []any
	if f.WorkspaceID != "" {
		where, args = append(where, "r.workspace_id = ?"), append(args, f.WorkspaceID)
	}
	if f.SessionID != "" {
		where, args = append(where, "r.session_id = ?"), append(args, f.SessionID)
	}
	if len(f.States) > 0 {
		where = append(where, "r.state IN (?"+strings.Repeat(",?", len(f.States)-1)+")")
		for _, st := range f.States {
			args = append(args, string(st))
		}
	}
	q := runSelect
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx, q+" ORDER BY r.queue_seq LIMIT ?", append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []RunRecord
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// LastEvents returns the last n events of a run, ascending.
func (s *Store) LastEvents(ctx context.Context, runID string, n int) ([]backend.Event, error) {
	var last int64
	if err := s.r.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM events WHERE run_id = ?`, runID).
		Scan(&last); err != nil {
		return nil, fmt.Errorf("read last sequence of %s: %w", runID, err)
	}
	return s.Events(ctx, runID, max(0, last-int64(n)), n)
}

// Tickets lists tickets; runID "" = all runs; pendingOnly filters open ones.
func (s *Store) Tickets(ctx context.Context, runID string, pendingOnly bool) ([]Ticket, error) {
	q, args := ticketSelect+` WHERE 1=1`, []any{}
	if runID != "" {
		q, args = q+` AND run_id = ?`, append(args, runID)
	}
	if pendingOnly {
		q += ` AND status = 'pending'`
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY created_at, rowid`, args...)
	if err != nil {
		return nil, fmt.Errorf("list tickets: %w", err)
	}
	defer rows.Close()
	var out []Ticket
	for rows.Next() {
		tk, err := scanTicket(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, tk)
	}
	return out, rows.Err()
}

// Ticket reads one ticket.
func (s *Store) Ticket(ctx context.Context, id string) (Ticket, error) {
	tk, err := scanTicket(s.r.QueryRowContext(ctx, ticketSelect+` WHERE id = ?`, id))
	if errors.Is(err, backend.ErrNotFound) {
		return tk, &backend.NotFound{Kind: "approval", ID: id}
	}
	return tk, err
}

// Calls returns the calls of a run in step and call order.
func (s *Store) Calls(ctx context.Context, runID string) ([]Call, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT run_id, id, step, idx, name, arguments, status, resume_mode,
		coalesce(ticket_id, ''), suspension_reason, coalesce(resume_input, ''), subject_hash, coalesce(result, '')
		FROM tool_calls WHERE run_id = ? ORDER BY step, idx`, runID)
	if err != nil {
		return nil, fmt.Errorf("list calls of %s: %w", runID, err)
	}
	defer rows.Close()
	var out []Call
	for rows.Next() {
		var c Call
		var args, in, res string
		if err := rows.Scan(&c.RunID, &c.ID, &c.Step, &c.Index, &c.Name, &args, &c.Status, &c.ResumeMode,
			&c.TicketID, &c.SuspensionReason, &in, &c.SubjectHash, &res); err != nil {
			return nil, fmt.Errorf("list calls of %s: %w", runID, err)
		}
		c.Arguments = json.RawMessage(args)
		if in != "" {
			c.ResumeInput = json.RawMessage(in)
		}
		if res != "" {
			c.Result = json.RawMessage(res)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Messages returns a session's transcript and its message count.
func (s *Store) Messages(ctx context.Context, sessionID string) ([]backend.Message, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT content FROM messages WHERE session_id = ? ORDER BY position`,
		sessionID)
	if err != nil {
		return nil, fmt.Errorf("read transcript of %s: %w", sessionID, err)
	}
	defer rows.Close()
	var out []backend.Message
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("read transcript of %s: %w", sessionID, err)
		}
		var m backend.Message
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return nil, fmt.Errorf("decode message of %s: %w", sessionID, err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// LastCheckpoint returns the newest checkpoint state of a run, if any.
func (s *Store) LastCheckpoint(ctx context.Context, runID string) (kind string, state json.RawMessage, ok bool,
	err error) {
	var raw string
	err = s.r.QueryRowContext(ctx, `SELECT kind, state FROM checkpoints WHERE run_id = ? AND kind != 'workspace'
		ORDER BY version DESC LIMIT 1`, runID).Scan(&kind, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, fmt.Errorf("read checkpoint of %s: %w", runID, err)
	}
	return kind, json.RawMessage(raw), true, nil
}
