package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/canon"
	"agenthub/backend/store"
)

var errRejectStop = errors.New("approval_rejected")

// ask suspends a call with an approval ticket (AP4).
func (rc *runCtl) ask(c *callState, a backend.GatedAction, res backend.PolicyResult) *ending {
	hash, err := subjectHash(a)
	if err != nil {
		return rc.finish(c, backend.CallFailed, "invalid action subject", true)
	}
	offered, grant := decisionsFor(c.Req.Name, a, res, rc.e.store.Redact)
	tk := store.Ticket{TicketKind: "approval", ResumeMode: backend.ResumeReplayToolCall,
		ApprovalRequest: backend.ApprovalRequest{ID: backend.NewID(backend.PrefixApproval), RunID: rc.rec.ID,
			ToolCallID: c.Req.ID, Kind: a.Kind, Title: a.Title, Preview: a.Preview, Risk: a.Risk,
			Subject: a.Subject, SubjectHash: hash, PolicyTrace: res.Trace, Enforcement: string(backend.Enforced),
			DecisionsOffered: offered, GrantPreview: grant, TitleMessage: a.TitleMessage}}
	if act, err := approval.ActionOf(backend.GateRequest{Tool: c.Req.Name, Action: a}); err == nil &&
		a.Risk == backend.RiskLow && approval.ReadOnly(act) {
		tk.RiskMessage = backend.Msg("risk_read_only") // the dialog's banner says it only reads
	}
	if grant != "" {
		// What "always allow" would write, as a message the UI localises,
		// and where: the setting now, which the decision then follows.
		if g, err := grantFor(c.Req.Name, a); err == nil {
			loc := rc.e.cfg.Rules.Location(rc.rec.WorkspaceID)
			tk.RulePreview, tk.RuleLocation = g.Message(), &loc
		}
	}
	c.Gate = a.Kind
	if err := rc.commit(func(tx *store.Tx) error {
		if err := rc.suspendTx(tx, c, tk); err != nil {
			return err
		}
		return rc.proposalTx(tx, c, a, hash, tk.ID) // changeset.go
	}); err != nil {
		return failed(backend.FailInternal, "could not record the approval request")
	}
	return nil
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func inputTicket(c *callState, s *backend.Suspension) store.Ticket {
	mode := s.ResumeMode
	if mode == "" {
		mode = backend.ResumePassDecisionToTool
	}
	subject, _ := json.Marshal(map[string]any{"kind": "input", "toolCallId": c.Req.ID, "reason": s.Reason})
	hash, _ := canon.SHA256(json.RawMessage(subject))
	return store.Ticket{TicketKind: "input", ResumeMode: mode, ApprovalRequest: backend.ApprovalRequest{
		ID: backend.NewID(backend.PrefixApproval), ToolCallID: c.Req.ID, Kind: "input", Title: s.Title,
		Preview: s.Preview, Risk: backend.RiskLow, Subject: subject, SubjectHash: hash,
		Enforcement:      string(backend.Enforced),
		DecisionsOffered: []backend.DecisionKind{backend.ApproveOnce, backend.RejectAndTell, backend.RejectAndStop}}}
}

func (rc *runCtl) suspendTx(tx *store.Tx, c *callState, tk store.Ticket) error {
	tk.RunID = rc.rec.ID
	c.TicketID, c.Subject, c.ResumeMode = tk.ID, tk.SubjectHash, tk.ResumeMode
	if err := rc.setCall(tx, c, backend.CallSuspended, "", false); err != nil {
		return err
	}
	return tx.CreateTicket(tk)
}

// wait is the suspension: checkpoint, NeedsApproval, release the global
// slot, then apply one decision (SR2, SR8, EX3 Sequential).
func (rc *runCtl) wait() *ending {
	rc.pauseClock()
	err := rc.commit(func(tx *store.Tx) error {
		if _, err := tx.Checkpoint(rc.rec.ID, "suspension", rc.cur.Step,
			ckState{Step: rc.st.Steps, Stats: rc.st, Cur: rc.cur, Executor: rc.p.Executor}); err != nil {
			return err
		}
		_, err := tx.Transition(rc.rec.ID, backend.RunNeedsApproval, "waiting for a decision", nil)
		return err
	})
	if err != nil {
		return failed(backend.FailInternal, "could not record the suspension")
	}
	if rc.holdsGlobal {
		rc.e.lanes.releaseGlobal()
		rc.holdsGlobal = false
	}
	var d store.StoredDecision
	select {
	case <-rc.ctx.Done():
		end, _ := rc.cancelled()
		return end
	case d = <-rc.decisions:
	}
	if d.Kind == backend.RejectAndStop {
		return rc.endFor(errRejectStop)
	}
	if err := rc.reacquire(); err != nil { // delegate.go: a sub-agent keeps its own lane
		end, _ := rc.cancelled()
		return end
	}
	if err := rc.transition(backend.RunRunning, "decision "+d.DecisionID); err != nil {
		return failed(backend.FailInternal, "could not record the run state")
	}
	rc.startClock()
	return rc.apply(d)
}

// apply replays one decided call (SR4, SR5).
func (rc *runCtl) apply(d store.StoredDecision) *ending {
	var c *callState
	for _, x := range rc.cur.Calls {
		if x.Req.ID == d.ToolCallID && x.Status == backend.CallSuspended {
			c = x
		}
	}
	if c == nil {
		return nil
	}
	rc.attachReview(c, d) // changeset.go
	if !d.Kind.Approves() {
		return rc.rejected(c, d) // changeset.go
	}
	if err := rc.commit(func(tx *store.Tx) error { return rc.setCall(tx, c, backend.CallResuming, "", false) }); err != nil {
		return failed(backend.FailInternal, "could not record the call")
	}
	if c.ResumeMode == backend.ResumeUseDecisionAsToolResult {
		return rc.finish(c, backend.CallSucceeded, string(d.Payload), false)
	}
	resume := d.Payload
	if len(resume) == 0 || string(resume) == "null" {
		resume = decisionInput(d)
	}
	end, stop := rc.verified(rc.replayTool(c.Req.Name), c, resume, func(action *backend.GatedAction) *ending {
		return rc.keepGrant(d, c, action)
	})
	if end == nil && stop {
		return rc.backfill(0, "interrupted")
	}
	return end
}

// stepEnd commits the step checkpoint, then evaluates stop conditions (SC2).
func (rc *runCtl) stepEnd(text string) *ending {
	o := stepOutcome{text: text}
	if rc.cur != nil {
		all, anyExec := true, false
		for _, c := range rc.cur.Calls {
			if c.Executed {
				anyExec = true
				o.executed = append(o.executed, c.Req)
				o.tools = append(o.tools, c.Req.Name)
				all = all && c.Status == backend.CallFailed
			}
		}
		o.failed = anyExec && all
	}
	rc.pauseClock()
	rc.st.record(o)
	rc.startClock()
	err := rc.commit(func(tx *store.Tx) error {
		if err := rc.writeStep(tx); err != nil {
			return err
		}
		if err := tx.SetStats(rc.rec.ID, rc.st); err != nil {
			return err
		}
		id, err := tx.Checkpoint(rc.rec.ID, "step", rc.st.Steps, ckState{Step: rc.st.Steps, Stats: rc.st})
		if err != nil {
			return err
		}
		_, err = tx.Append(rc.rec.ID, backend.EvCheckpointCreated, map[string]any{"kind": "step",
			"step": rc.st.Steps, "checkpointId": id})
		return err
	})
	if err != nil {
		return failed(backend.FailInternal, "could not commit the step checkpoint")
	}
	rc.turnDiff(rc.st.Steps) // changeset.go
	rc.hookStepEnd()
	if code := rc.p.Stop.evaluate(rc.st, o); code != "" {
		return &ending{state: backend.RunCompleted, end: store.End{DoneReason: backend.DoneStopped(code)}}
	}
	return nil
}

// writeStep appends the step's assistant message and one result per call,
// in call order (TC6), asserting the expected message count (CK4).
func (rc *runCtl) writeStep(tx *store.Tx) error {
	if rc.cur == nil || rc.cur.Written {
		return nil
	}
	msgs := []backend.Message{rc.cur.Assistant}
	for _, c := range rc.cur.Calls {
		msgs = append(msgs, backend.Message{Role: backend.RoleTool, ToolCallID: c.Req.ID, Text: c.Result,
			IsError: c.IsError})
	}
	if rc.msgCount == len(rc.transcript)-1 { // the task message is not stored yet
		msgs = append([]backend.Message{rc.transcript[len(rc.transcript)-1]}, msgs...)
	}
	n, err := tx.AddMessages(rc.rec.SessionID, rc.rec.ID, rc.cur.Step, rc.msgCount, msgs)
	if err != nil {
		return err
	}
	rc.msgCount = n
	rc.cur.Written = true
	rc.transcript = append(rc.transcript, msgs[len(msgs)-len(rc.cur.Calls)-1:]...)
	return nil
}

// Decide applies a reviewer's decision (SR4, AP7, AP9). It is committed, with
// its audit entry, before any effect; the run's loop then replays the call.
func (e *Engine) Decide(ctx context.Context, d backend.Decision) (string, error) {
	if d.DecisionID == "" {
		d.DecisionID = backend.NewID(backend.PrefixDecision)
	}
	var sd store.StoredDecision
	var twins []store.StoredDecision
	var first string
	_, err := e.store.Do(ctx, func(tx *store.Tx) error {
		tk, err := tx.Ticket(d.ApprovalID)
		if err != nil {
			return backend.Errorf(backend.CodeNotFound, "no such approval")
		}
		if prev, ok, err := tx.DecisionFor(tk.ID); err != nil {
			return err
		} else if ok {
			if prev.DecisionID == d.DecisionID {
				first = string(prev.Outcome)
				return nil
			}
			return backend.Errorf(backend.CodeApprovalAlreadyResolved, "this approval was already decided")
		}
		if tk.Status != "pending" {
			return backend.Errorf(backend.CodeNotFound, "this approval is closed")
		}
		if d.SubjectHash != tk.SubjectHash {
			return backend.Errorf(backend.CodeApprovalStale, "the request changed after it was shown")
		}
		if err := checkDecision(tk, d.Kind); err != nil {
			return err
		}
		sd = store.StoredDecision{Decision: d, RunID: tk.RunID, Outcome: json.RawMessage(`{"outcome":"accepted"}`)}
		sd.ToolCallID = tk.ToolCallID
		if tk.TicketKind == "input" && d.Reason != "" {
			sd.Payload, _ = json.Marshal(d.Reason)
		}
		if err := tx.Resolve(sd, "user"); err != nil {
			return err
		}
		if err := deliverComments(tx, tk, sd); err != nil { // changeset.go
			return err
		}
		twins, err = resolveTwins(tx, tk, sd)
		return err
	})
	if err != nil {
		return "", err
	}
	if first != "" {
		return first, nil
	}
	e.mu.Lock()
	rc := e.runs[sd.RunID]
	e.mu.Unlock()
	if rc != nil {
		for _, x := range append([]store.StoredDecision{sd}, twins...) {
			rc.decisions <- x
		}
	}
	return string(sd.Outcome), nil
}

// resolveTwins writes the reviewer's decision for every other pending
// ticket of the run that asks for exactly the same thing (AP13): one
// decision per ticket, each with its own id derived from the reviewer's, so
// delivering the decision again still has one effect. Each call is verified
// again before it executes, so a twin whose subject drifted (its file
// changed when the first was applied) fails closed.
func resolveTwins(tx *store.Tx, tk store.Ticket, sd store.StoredDecision) ([]store.StoredDecision, error) {
	list, err := tx.PendingTwins(tk)
	if err != nil {
		return nil, err
	}
	out := make([]store.StoredDecision, 0, len(list))
	for _, twin := range list {
		x := sd
		x.DecisionID, x.ApprovalID, x.ToolCallID = sd.DecisionID+"~"+twin.ID, twin.ID, twin.ToolCallID
		if err := tx.Resolve(x, "user"); err != nil {
			return nil, fmt.Errorf("resolve the twin %s: %w", twin.ID, err)
		}
		out = append(out, x)
	}
	return out, nil
}

// decisionInput is what an approved tool reads on replay: the decision, the
// reviewer's per-hunk selection of a patch (absent means the whole patch)
// and the reason, which the agent is told along with rejected hunks.
func decisionInput(d store.StoredDecision) json.RawMessage {
	in := map[string]any{"decision": d.Kind, "decisionId": d.DecisionID}
	if d.Hunks != nil {
		in["hunks"] = d.Hunks
	}
	if d.Reason != "" {
		in["reason"] = d.Reason
	}
	b, _ := json.Marshal(in)
	return b
}
