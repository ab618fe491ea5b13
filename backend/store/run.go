package store

import (
	"encoding/json"
	"fmt"

	"agenthub/backend"
)

// RunRecord is a run row.
type RunRecord struct {
	ID, SessionID, WorkspaceID string
	Profile, AgentID, Runtime  string
	Task                       string
	State                      backend.RunState
	DoneReason                 string
	FailureCode                backend.FailureCode
	FailureMessage             string
	FailureNext                string // the failure's own next step; "" = the code's default
	Scripted                   bool
	Actor                      string
	Surface                    backend.Surface
	QueueSeq                   int64
	Plan, Stats                json.RawMessage
	LastSeq                    int64
	CreatedAt, LastEventAt     string
	PendingApprovals           int
	// ResumedFrom is the interrupted run this one continues; ResumedBy the
	// run that continues this one (a run is resumed once).
	ResumedFrom, ResumedBy string
}

// Summary converts the row to the API shape.
func (r RunRecord) Summary() backend.RunSummary {
	s := backend.RunSummary{ID: r.ID, SessionID: r.SessionID, WorkspaceID: r.WorkspaceID, Profile: r.Profile,
		Task: r.Task, State: r.State, Coarse: r.State.Coarse(), Queued: r.State == backend.RunAccepted,
		DoneReason: r.DoneReason, CreatedAt: r.CreatedAt, LastEventAt: r.LastEventAt, LastSequence: r.LastSeq,
		PendingApprovals: r.PendingApprovals, Scripted: r.Scripted, ResumedFrom: r.ResumedFrom, ResumedBy: r.ResumedBy}
	if r.State == backend.RunFailed {
		s.Failure = &backend.Failure{Code: r.FailureCode, Message: r.FailureMessage, Next: r.FailureNext}
		if s.Failure.Next == "" {
			s.Failure.Next = backend.Recovery[r.FailureCode]
		}
	}
	return s
}

// CreateSession inserts a session of a workspace.
func (t *Tx) CreateSession(id, workspaceID, title string) error {
	_, err := t.tx.ExecContext(t.ctx, `INSERT INTO sessions (id, workspace_id, title, created_at)
		VALUES (?, ?, ?, ?)`, id, workspaceID, t.s.red.text(title), now())
	if err != nil {
		return fmt.Errorf("create session %s: %w", id, err)
	}
	return nil
}

// CreateRun inserts r in state Created with the run.created event (sequence
// 1, EV1) and its audit entry. QueueSeq is assigned here.
func (t *Tx) CreateRun(r RunRecord, created any) (RunRecord, error) {
	at := now()
	r.State, r.CreatedAt, r.LastEventAt = backend.RunCreated, at, at
	if err := t.tx.QueryRowContext(t.ctx, `SELECT coalesce(max(queue_seq), 0) + 1 FROM runs`).
		Scan(&r.QueueSeq); err != nil {
		return r, fmt.Errorf("create run %s: queue order: %w", r.ID, err)
	}
	if len(r.Plan) == 0 {
		r.Plan = json.RawMessage("{}")
	}
	if len(r.Stats) == 0 {
		r.Stats = json.RawMessage("{}")
	}
	r.Task, r.Plan = t.s.red.text(r.Task), t.s.red.json(r.Plan)
	if r.ResumedFrom != "" {
		if err := t.claimResume(r.ResumedFrom, r.ID); err != nil {
			return r, err
		}
	}
	_, err := t.tx.ExecContext(t.ctx, `INSERT INTO runs (id, session_id, workspace_id, profile, agent_id, runtime,
		task, state, scripted, actor, surface, queue_seq, plan, stats, created_at, updated_at, last_event_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.SessionID, r.WorkspaceID, r.Profile, r.AgentID, r.Runtime, r.Task, string(r.State), r.Scripted,
		r.Actor, string(r.Surface), r.QueueSeq, string(r.Plan), string(r.Stats), at, at, at)
	if err == nil && r.ResumedFrom != "" {
		_, err = t.tx.ExecContext(t.ctx, `UPDATE runs SET resumed_from = ? WHERE id = ?`, r.ResumedFrom, r.ID)
	}
	if err != nil {
		return r, fmt.Errorf("create run %s: %w", r.ID, err)
	}
	t.setMeta(r.ID, runMeta{session: r.SessionID, agent: r.AgentID, state: backend.RunCreated})
	if _, err := t.Append(r.ID, backend.EvRunCreated, created); err != nil {
		return r, err
	}
	_, err = t.Audit(backend.AuditEntry{Actor: r.Actor, Surface: r.Surface, Kind: "run.created", RunID: r.ID,
		Data: map[string]any{"profile": r.Profile, "workspaceId": r.WorkspaceID, "sessionId": r.SessionID}})
	r.LastSeq = 1
	return r, err
}

// claimResume records that run by continues run from, once: a run already
// resumed refuses, naming its continuation (run_already_resumed).
func (t *Tx) claimResume(from, by string) error {
	res, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET resumed_by = ? WHERE id = ? AND resumed_by = ''`, by, from)
	if err != nil {
		return fmt.Errorf("link run %s to its continuation: %w", from, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	var other string
	if err := t.tx.QueryRowContext(t.ctx, `SELECT resumed_by FROM runs WHERE id = ?`, from).Scan(&other); err != nil {
		return fmt.Errorf("read run %s: %w", from, err)
	}
	return ErrAlreadyResumed(from, other)
}

// ErrAlreadyResumed is the refusal of a second resume of run, which other
// already continues.
func ErrAlreadyResumed(run, other string) error {
	return &backend.Error{Code: backend.CodeRunAlreadyResumed,
		Message: fmt.Sprintf("run %s was already resumed: run %s continues it", run, other),
		Next:    fmt.Sprintf("Follow that run instead: agenthub runs follow %s", other)}
}

// End describes a terminal transition (LC5). Next is the failure's own
// next step ([backend.Error.Next]); empty, readers show the code's default.
type End struct {
	DoneReason string
	Code       backend.FailureCode
	Message    string
	Next       string
}

// Transition moves a run to state to with exactly one lifecycle event in
// this transaction (LC1–LC3). X → X is a no-op that emits nothing (changed is
// false); an illegal move returns a *backend.TransitionError and changes
// nothing.
func (t *Tx) Transition(runID string, to backend.RunState, reason string, end *End) (changed bool, err error) {
	m, err := t.meta(runID)
	if err != nil {
		return false, err
	}
	from := m.state
	if from == to {
		return false, nil
	}
	if err := backend.CheckRunTransition(from, to); err != nil {
		return false, fmt.Errorf("run %s: %w", runID, err)
	}
	typ, payload := lifecycleEvent(from, to, reason, end)
	if to.Terminal() && end == nil {
		return false, fmt.Errorf("run %s: terminal transition to %s without a done reason", runID, to)
	}
	ev, err := t.append(runID, m, typ, payload)
	if err != nil {
		return false, err
	}
	m.lastSeq, m.state = ev.Sequence, to
	t.setMeta(runID, m)
	var e End
	if end != nil {
		e = *end
	}
	e.Message = t.s.red.text(e.Message) // errors may quote tool output
	e.Next = t.s.red.text(e.Next)
	var ended any
	if to.Terminal() {
		ended = now()
	}
	_, err = t.tx.ExecContext(t.ctx, `UPDATE runs SET state = ?, done_reason = ?, failure_code = ?,
		failure_message = ?, failure_next = ?, updated_at = ?, ended_at = ? WHERE id = ?`,
		string(to), e.DoneReason, string(e.Code), e.Message, e.Next, now(), ended, runID)
	if err != nil {
		return false, fmt.Errorf("update run %s state: %w", runID, err)
	}
	_, err = t.Audit(backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine, Kind: "run.transition",
		RunID: runID, Data: map[string]any{"from": string(from), "to": string(to), "reason": reason,
			"doneReason": e.DoneReason}})
	return true, err
}

func lifecycleEvent(from, to backend.RunState, reason string, end *End) (backend.EventType, any) {
	switch {
	case to == backend.RunRunning && from == backend.RunPreparing:
		return backend.EvRunStarted, backend.StatusChanged{From: from, To: to, Reason: reason}
	case to.Terminal():
		p := backend.RunEnded{From: from, DoneReason: end.DoneReason, Code: end.Code, Message: end.Message,
			Next: end.Next}
		if end.Code != "" {
			p.Recovery = backend.Recovery[end.Code]
		}
		typ := map[backend.RunState]backend.EventType{backend.RunCompleted: backend.EvRunCompleted,
			backend.RunFailed: backend.EvRunFailed, backend.RunCancelled: backend.EvRunCancelled}[to]
		return typ, p
	}
	return backend.EvRunStatusChanged, backend.StatusChanged{From: from, To: to, Reason: reason}
}

// SetStats stores the run's statistics (steps, tokens, active time; SC4).
func (t *Tx) SetStats(runID string, stats any) error {
	raw, err := json.Marshal(stats)
	if err != nil {
		return fmt.Errorf("encode stats of %s: %w", runID, err)
	}
	raw = t.s.red.json(raw) // loop detection keeps recent texts
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET stats = ?, updated_at = ? WHERE id = ?`,
		string(raw), now(), runID); err != nil {
		return fmt.Errorf("update stats of %s: %w", runID, err)
	}
	return nil
}

// Call is a tool-call row (TC2).
type Call struct {
	RunID, ID        string
	Step, Index      int
	Name             string
	Arguments        json.RawMessage
	Status           backend.CallStatus
	ResumeMode       backend.ResumeMode
	TicketID         string
	SuspensionReason string
	ResumeInput      json.RawMessage
	SubjectHash      string
	Result           json.RawMessage
}

// PutCall upserts a call; a status change must follow the call table (TC1).
func (t *Tx) PutCall(c Call) error {
	var old string
	err := t.tx.QueryRowContext(t.ctx, `SELECT status FROM tool_calls WHERE run_id = ? AND id = ?`,
		c.RunID, c.ID).Scan(&old)
	if err == nil {
		if err := backend.CheckCallTransition(backend.CallStatus(old), c.Status); err != nil {
			return fmt.Errorf("call %s: %w", c.ID, err)
		}
	}
	if c.ResumeMode == "" {
		c.ResumeMode = backend.ResumeReplayToolCall
	}
	// Arguments are kept as the model produced them (TC2) except for
	// secrets: a replay after a restart then sees another subject and fails
	// closed (AP10) instead of a secret being stored.
	c.Arguments, c.Result, c.ResumeInput = t.s.red.json(c.Arguments), t.s.red.json(c.Result), t.s.red.json(c.ResumeInput)
	c.SuspensionReason = t.s.red.text(c.SuspensionReason)
	_, err = t.tx.ExecContext(t.ctx, `INSERT INTO tool_calls (run_id, id, step, idx, name, arguments, status,
		resume_mode, ticket_id, suspension_reason, resume_input, subject_hash, result, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, nullif(?, ''), ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, id) DO UPDATE SET status = excluded.status, ticket_id = excluded.ticket_id,
		suspension_reason = excluded.suspension_reason, resume_input = excluded.resume_input,
		subject_hash = excluded.subject_hash, result = excluded.result, updated_at = excluded.updated_at`,
		c.RunID, c.ID, c.Step, c.Index, c.Name, string(c.Arguments), string(c.Status), string(c.ResumeMode),
		c.TicketID, c.SuspensionReason, nullJSON(c.ResumeInput), c.SubjectHash, nullJSON(c.Result), now())
	if err != nil {
		return fmt.Errorf("put call %s: %w", c.ID, err)
	}
	return nil
}

func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// AddMessages appends transcript messages of a session, asserting that the
// session holds expected messages first (CK4). It returns the new count.
func (t *Tx) AddMessages(sessionID, runID string, step int, expected int, msgs []backend.Message) (int, error) {
	var count int
	if err := t.tx.QueryRowContext(t.ctx, `SELECT message_count FROM sessions WHERE id = ?`, sessionID).
		Scan(&count); err != nil {
		return 0, fmt.Errorf("read session %s: %w", sessionID, err)
	}
	if expected >= 0 && count != expected {
		return count, fmt.Errorf("session %s holds %d messages, expected %d: %w", sessionID, count, expected,
			ErrConflict)
	}
	for _, m := range msgs {
		if m.ID == "" {
			m.ID = backend.NewID(backend.PrefixMessage)
		}
		raw, err := json.Marshal(m)
		if err != nil {
			return 0, fmt.Errorf("encode message: %w", err)
		}
		raw = t.s.red.json(raw)
		if _, err := t.tx.ExecContext(t.ctx, `INSERT INTO messages (id, session_id, run_id, position, step, role,
			content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, m.ID, sessionID, runID, count, step,
			string(m.Role), string(raw), now()); err != nil {
			return 0, fmt.Errorf("insert message: %w", err)
		}
		count++
	}
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE sessions SET message_count = ? WHERE id = ?`, count,
		sessionID); err != nil {
		return 0, fmt.Errorf("update session %s: %w", sessionID, err)
	}
	return count, nil
}

// Checkpoint stores a checkpoint of a run; version is per run, +1 each time.
func (t *Tx) Checkpoint(runID, kind string, step int, state any) (string, error) {
	raw, err := json.Marshal(state)
	if err != nil {
		return "", fmt.Errorf("encode checkpoint: %w", err)
	}
	raw = t.s.red.json(raw) // holds the open step: model text and tool results
	id := backend.NewID(backend.PrefixCheckpoint)
	_, err = t.tx.ExecContext(t.ctx, `INSERT INTO checkpoints (id, run_id, kind, step, version, state, created_at)
		VALUES (?, ?, ?, ?, (SELECT coalesce(max(version), 0) + 1 FROM checkpoints WHERE run_id = ?), ?, ?)`,
		id, runID, kind, step, runID, string(raw), now())
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", runID, err)
	}
	return id, nil
}

// ErrConflict reports an optimistic-concurrency conflict (CK4).
var ErrConflict = fmt.Errorf("conflict")
