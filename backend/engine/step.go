package engine

import (
	"encoding/json"
	"errors"
	"fmt"

	"agenthub/backend"
	"agenthub/backend/redact"
	"agenthub/backend/store"
)

// loop is the phase machine: StepStart → inference → tools → (wait) →
// StepEnd, until an ending.
func (rc *runCtl) loop() *ending {
	for {
		if rc.cur == nil || rc.cur.Written {
			if end, ok := rc.cancelled(); ok {
				return end
			}
			resp, end := rc.infer()
			if end != nil {
				return end
			}
			if len(resp.Calls) == 0 {
				if end := rc.stepEnd(resp.Text); end != nil {
					return end
				}
				return rc.naturalEnd() // hooks.go
			}
			if end := rc.runBatch(); end != nil { // executor.go
				return end
			}
		}
		if end := rc.waitAll(); end != nil { // executor.go: the executor's replay policy
			return end
		}
		if end := rc.stepEnd(rc.cur.Assistant.Text); end != nil {
			return end
		}
	}
}

// messageDelta is the run.message.delta payload: the same JSON as a map,
// encoded in a third of the time.
type messageDelta struct {
	MessageID string `json:"messageId"`
	Text      string `json:"text"`
}

// infer is StepStart, BeforeInference, the inference and AfterInference.
func (rc *runCtl) infer() (backend.ModelResponse, *ending) {
	step := rc.st.Steps + 1
	msgID := backend.NewID(backend.PrefixMessage)
	req := backend.ModelRequest{Step: step, Messages: rc.transcript, Tools: rc.toolSpecs()}
	rc.hookBeforeInference(&req) // hooks.go: StepStart and BeforeInference
	// Deltas are cut where no secret can straddle two of them, so that
	// redacting each delta finds what redacting the message finds.
	var cuts redact.Stream
	emit := func(text string) {
		if text == "" {
			return
		}
		// Emit encodes (and redacts) the payload here, on the run's
		// goroutine, rather than on the store's single committer.
		rc.e.store.Emit(rc.rec.ID, backend.EvMessageDelta, messageDelta{MessageID: msgID, Text: text}, rc.noteAsync)
	}
	resp, err := rc.stream(req, func(text string) { emit(cuts.Push(text)) }) // the context route: compact.go
	emit(cuts.Flush())
	if end, ok := rc.cancelled(); ok {
		return resp, end
	}
	if err != nil {
		return resp, rc.endFor(err)
	}
	if rc.asyncFailed() {
		return resp, failed(backend.FailInternal, "could not record the model output")
	}
	refused := refuseArguments(resp.Calls) // hostile.go: arguments too deep or too large fail their call
	rc.hookAfterInference(&resp, step, msgID)
	rc.st.InputTokens += resp.Usage.InputTokens
	rc.st.OutputTokens += resp.Usage.OutputTokens
	rc.cur = &stepState{Step: step, Assistant: backend.Message{ID: msgID, Role: backend.RoleAssistant,
		Text: resp.Text, Calls: resp.Calls}}
	rc.cur.Calls = callStates(resp.Calls, refused)
	err = rc.commit(func(tx *store.Tx) error {
		if _, err := tx.Append(rc.rec.ID, backend.EvMessageCompleted, map[string]any{"messageId": msgID,
			"role": backend.RoleAssistant, "text": resp.Text, "usage": resp.Usage}); err != nil {
			return err
		}
		for _, a := range rc.hk.annotated { // hooks.go: AfterInference annotations
			if _, err := tx.Append(rc.rec.ID, backend.EvInferenceAnnotated, a); err != nil {
				return err
			}
		}
		for i, c := range rc.cur.Calls {
			if err := tx.PutCall(rc.callRow(c, i)); err != nil {
				return err
			}
			if _, err := tx.Append(rc.rec.ID, backend.EvToolCall, map[string]any{"toolCallId": c.Req.ID,
				"name": c.Req.Name, "arguments": c.Req.Arguments}); err != nil {
				return err
			}
			if c.Status.Terminal() { // refused at decode (hostile.go)
				if _, err := tx.Append(rc.rec.ID, backend.EvToolResult, map[string]any{"toolCallId": c.Req.ID,
					"status": c.Status, "content": c.Result, "isError": c.IsError}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return resp, failed(backend.FailInternal, "could not record the step")
	}
	return resp, nil
}

func (rc *runCtl) noteAsync(_ []backend.Event, err error) {
	if err != nil {
		rc.mu.Lock()
		rc.asyncErr = err
		rc.mu.Unlock()
	}
}

func (rc *runCtl) asyncFailed() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.asyncErr != nil
}

func (rc *runCtl) toolSpecs() []backend.ToolSpec {
	var specs []backend.ToolSpec
	for _, name := range rc.toolNames() {
		if t, ok := rc.tool(name); ok {
			specs = append(specs, t.Spec())
		}
	}
	return specs
}

func (rc *runCtl) toolNames() []string {
	names := rc.ownToolNames() // toolsource.go
	if len(rc.p.Tools) > 0 {
		return append(names, rc.p.Tools...)
	}
	for n := range rc.e.cfg.Tools {
		names = append(names, n)
	}
	return names
}

func (rc *runCtl) callRow(c *callState, idx int) store.Call {
	row := store.Call{RunID: rc.rec.ID, ID: c.Req.ID, Step: rc.cur.Step, Index: idx, Name: c.Req.Name,
		Arguments: c.Req.Arguments, Status: c.Status, ResumeMode: c.ResumeMode, TicketID: c.TicketID,
		SubjectHash: c.Subject}
	if c.Status.Terminal() {
		row.Result, _ = json.Marshal(map[string]any{"content": c.Result, "isError": c.IsError})
	}
	return row
}

// setCall moves a call (TC1) and, for a terminal status, records its result
// with run.tool.result.
func (rc *runCtl) setCall(tx *store.Tx, c *callState, to backend.CallStatus, result string, isErr bool) error {
	old := *c
	c.Status = to
	if to.Terminal() {
		result += c.Review // changeset.go: the reviewer's comments follow the result
		c.Result, c.IsError = result, isErr
	}
	idx := 0
	for i, x := range rc.cur.Calls {
		if x == c {
			idx = i
		}
	}
	if err := tx.PutCall(rc.callRow(c, idx)); err != nil {
		*c = old
		return err
	}
	if to.Terminal() {
		_, err := tx.Append(rc.rec.ID, backend.EvToolResult, map[string]any{"toolCallId": c.Req.ID,
			"status": to, "content": result, "isError": isErr})
		return err
	}
	return nil
}

func (rc *runCtl) suspended() bool {
	if rc.cur == nil {
		return false
	}
	for _, c := range rc.cur.Calls {
		if c.Status == backend.CallSuspended {
			return true
		}
	}
	return false
}

// runTools is ToolGate → BeforeToolExecute → execute → AfterToolExecute for
// every New call, serially in call order (Sequential executor, GT1, GT3).
func (rc *runCtl) runTools(_ []int) *ending {
	for i, c := range rc.cur.Calls {
		if c.Status != backend.CallNew {
			continue
		}
		end, stopBatch := rc.gateAndRun(c)
		if end != nil {
			return end
		}
		if stopBatch {
			return rc.backfill(i+1, "interrupted")
		}
	}
	return nil
}

// backfill fails every New call from index i on (GT4, GT8).
func (rc *runCtl) backfill(from int, text string) *ending {
	err := rc.commit(func(tx *store.Tx) error {
		for _, c := range rc.cur.Calls[from:] {
			if c.Status == backend.CallNew {
				if err := rc.setCall(tx, c, backend.CallFailed, text, true); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return failed(backend.FailInternal, "could not record the tool results")
	}
	return nil
}

// gateAndRun gates one call and executes it when allowed. stopBatch is true
// when the rest of the batch must not start.
func (rc *runCtl) gateAndRun(c *callState) (end *ending, stopBatch bool) {
	tool, ok := rc.tool(c.Req.Name)
	if !ok || !contains(rc.toolNames(), c.Req.Name) {
		return rc.finish(c, backend.CallFailed, fmt.Sprintf("tool '%s' not found", c.Req.Name), true), false
	}
	if !json.Valid(c.Req.Arguments) {
		return rc.finish(c, backend.CallFailed, "invalid arguments: not valid JSON", true), false
	}
	action, err := tool.Action(rc.ctx, rc.env(), c.Req.Arguments)
	if err != nil {
		return rc.finish(c, backend.CallFailed, toolError(err), true), false
	}
	if end, done, stop := rc.hookGate(c, action); done { // hooks.go
		return end, stop
	}
	if action != nil {
		return rc.gate(tool, c, action)
	}
	return rc.execute(tool, c, nil, nil)
}

func toolError(err error) string {
	var be *backend.Error
	if errors.As(err, &be) {
		return string(be.Code) + ": " + be.Message
	}
	return err.Error()
}

func (rc *runCtl) finish(c *callState, to backend.CallStatus, text string, isErr bool) *ending {
	if err := rc.commit(func(tx *store.Tx) error { return rc.setCall(tx, c, to, text, isErr) }); err != nil {
		return failed(backend.FailInternal, "could not record the tool result")
	}
	return nil
}

func (rc *runCtl) env() backend.ToolEnv {
	root, _ := rc.runRoot() // "" on error: the tools refuse without a root
	return backend.ToolEnv{RunID: rc.rec.ID, SessionID: rc.rec.SessionID, WorkspaceID: rc.rec.WorkspaceID,
		WorkspaceRoot: root,
		Track: func(s backend.Stopper) {
			rc.mu.Lock()
			rc.stoppers = append(rc.stoppers, s)
			rc.mu.Unlock()
			if rc.ctx.Err() != nil {
				go s.Stop(rc.e.cfg.Grace)
			}
		},
		Emit: func(typ backend.EventType, payload any) {
			rc.commitLog(func(tx *store.Tx) error { _, err := tx.Append(rc.rec.ID, typ, payload); return err })
		},
		Artifacts: rc.artifact}
}

// execute runs one call (Running → result), inside Applying when it is a
// gated action.
func (rc *runCtl) execute(tool backend.Tool, c *callState, action *backend.GatedAction,
	resume json.RawMessage) (*ending, bool) {
	gated := action != nil && action.Kind != backend.ActionRead
	err := rc.commit(func(tx *store.Tx) error {
		if gated {
			if _, err := tx.Transition(rc.rec.ID, backend.RunApplying, "gated action "+c.Req.ID, nil); err != nil {
				return err
			}
			if err := rc.auditAction(tx, c, action, "action.started", nil); err != nil {
				return err
			}
		}
		return rc.setCall(tx, c, backend.CallRunning, "", false)
	})
	if err != nil {
		return failed(backend.FailInternal, "could not record the call"), true
	}
	rc.hookBeforeExecute(c)
	o := rc.callTool(backend.WithDelegator(rc.ctx, rc), tool, rc.envFor(c),
		backend.ToolInput{CallID: c.Req.ID, Arguments: c.Req.Arguments, ResumeInput: resume})
	if o.abandoned { // hostile.go: cancel and the run's timeout win over a blocked tool
		return rc.abandon(c, action, gated), true
	}
	res, err := o.res, o.err
	c.Executed = true
	var end *ending
	stop := false
	err = rc.commit(func(tx *store.Tx) error {
		if gated {
			if _, err := tx.Transition(rc.rec.ID, backend.RunRunning, "gated action finished", nil); err != nil {
				return err
			}
			if err := rc.auditAction(tx, c, action, "action.finished", map[string]any{"outcome": outcome(res, err)}); err != nil {
				return err
			}
		}
		switch {
		case err != nil:
			return rc.setCall(tx, c, backend.CallFailed, toolError(err), true)
		case res.Suspend != nil:
			stop = true
			return rc.suspendTx(tx, c, inputTicket(c, res.Suspend))
		case res.IsError:
			return rc.setCall(tx, c, backend.CallFailed, res.Content, true)
		}
		return rc.setCall(tx, c, backend.CallSucceeded, res.Content, false)
	})
	if err != nil {
		end = failed(backend.FailInternal, "could not record the tool result")
	}
	rc.hookAfterExecute(c)
	return end, stop
}
