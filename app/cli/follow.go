package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
)

// approvalMode says what `run` and `approve` do when a run asks.
type approvalMode string

const (
	modePrompt  approvalMode = "prompt"  // ask on the terminal
	modeApprove approvalMode = "approve" // approve once, every time
	modeReject  approvalMode = "reject"  // reject and tell the agent
	modeLeave   approvalMode = "leave"   // leave pending and exit 3
)

// follower prints one run's events and answers its approvals.
type follower struct {
	core    *api.Core
	out     io.Writer
	json    bool
	mode    approvalMode
	prompt  *prompter
	decided map[string]bool
	inText  bool // an assistant message is being streamed
	// intr and grace: the first Ctrl-C detaches (the run goes on), a
	// second within grace cancels the run.
	intr   *interrupts
	grace  time.Duration
	errOut io.Writer
}

// follow streams runID's events after the cursor until the run ends (exit
// code by state) or, in leave mode, waits for approval (exit 3). The first
// Ctrl-C detaches: the run goes on in the engine, the command says how to
// follow it again and exits 130 unless a second Ctrl-C comes within the
// grace period, which cancels the run (exit 4 once it has ended).
func (f *follower) follow(ctx context.Context, runID string, after int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := f.core.Subscribe(ctx, runID, after)
	if err != nil {
		return err
	}
	presses := make(chan struct{}, 2)
	// A Ctrl-C at an approval prompt ends the prompt too.
	promptCtx, endPrompt := context.WithCancel(ctx)
	defer endPrompt()
	defer f.intr.handle(func() {
		endPrompt()
		select {
		case presses <- struct{}{}:
		default:
		}
	})()
	var grace <-chan time.Time
	detached := false
	for {
		select {
		case ev, open := <-events:
			if !open {
				if ctx.Err() != nil {
					return fmt.Errorf("follow run %s: %w", runID, ctx.Err())
				}
				return fmt.Errorf("follow run %s: the event stream ended early", runID)
			}
			batch := []backend.Event{ev}
			if ev.Type == backend.EvSystemGap {
				// This follower fell behind; the dropped events are
				// committed, so read them back in order.
				if batch, err = f.refill(runID, ev); err != nil {
					return err
				}
			}
			for _, ev := range batch {
				done, err := f.handle(promptCtx, runID, ev)
				if errors.Is(err, context.Canceled) && promptCtx.Err() != nil && ctx.Err() == nil {
					break // Ctrl-C at the prompt: the press is queued
				}
				if done || err != nil {
					return err
				}
			}
		case <-presses:
			if !detached {
				detached = true
				fmt.Fprintf(f.errWriter(), "\nDetached from run %s: it goes on in the engine. Follow it again with: agenthub runs follow %s\n"+
					"Press Ctrl-C again within %s to cancel the run instead.\n", runID, runID, f.grace)
				grace = time.After(f.grace)
				continue
			}
			grace = nil
			fmt.Fprintf(f.errWriter(), "Cancelling run %s…\n", runID)
			if _, err := api.NewRunsAPI(f.core).Cancel(runID); err != nil {
				return err
			}
		case <-grace:
			return codedExit{ExitInterrupted}
		}
	}
}

func (f *follower) errWriter() io.Writer {
	if f.errOut != nil {
		return f.errOut
	}
	return f.out
}

// handle prints one event and reacts to it; done means the command ends
// (with err as its outcome).
func (f *follower) handle(ctx context.Context, runID string, ev backend.Event) (bool, error) {
	f.print(ev)
	if code, done := endCode(ev.Type); done {
		return true, f.finish(code)
	}
	if to, ok := statusTo(ev); ok && to == backend.RunNeedsApproval {
		if err := f.answer(ctx, runID); err != nil {
			return true, err
		}
	}
	return false, nil
}

func (f *follower) refill(runID string, gap backend.Event) ([]backend.Event, error) {
	var g backend.Gap
	if err := json.Unmarshal(gap.Payload, &g); err != nil {
		return nil, fmt.Errorf("read a gap event: %w", err)
	}
	return api.NewRunsAPI(f.core).Events(runID, g.FromSequence-1, int(g.ToSequence-g.FromSequence+1))
}

func (f *follower) finish(code int) error {
	if code == ExitOK {
		return nil
	}
	return codedExit{code}
}

// endCode maps a terminal event to the command's exit code.
func endCode(t backend.EventType) (int, bool) {
	switch t {
	case backend.EvRunCompleted:
		return ExitOK, true
	case backend.EvRunFailed:
		return ExitFailed, true
	case backend.EvRunCancelled:
		return ExitCanceled, true
	}
	return 0, false
}

func statusTo(ev backend.Event) (backend.RunState, bool) {
	if ev.Type != backend.EvRunStatusChanged {
		return "", false
	}
	var sc backend.StatusChanged
	if json.Unmarshal(ev.Payload, &sc) != nil {
		return "", false
	}
	return sc.To, true
}

// answer decides every pending approval of the run per the mode.
func (f *follower) answer(ctx context.Context, runID string) error {
	pending, err := api.NewApprovalsAPI(f.core).ForRun(runID)
	if err != nil {
		return err
	}
	for _, a := range pending {
		if f.decided[a.ID] {
			continue
		}
		kind, reason := backend.ApproveOnce, ""
		switch f.mode {
		case modeLeave:
			f.explainPending(runID, pending)
			return codedExit{ExitWaiting}
		case modeReject:
			kind, reason = backend.RejectAndTell, "rejected with --on-approval reject"
		case modePrompt:
			if kind, reason, err = f.prompt.ask(ctx, a); err != nil {
				return err
			}
			if kind == "" {
				f.explainPending(runID, pending)
				return codedExit{ExitWaiting}
			}
		}
		f.decided[a.ID] = true
		if _, err := api.NewApprovalsAPI(f.core).Decide(backend.Decision{ApprovalID: a.ID, ToolCallID: a.ToolCallID,
			Kind: kind, SubjectHash: a.SubjectHash, Reason: reason}); err != nil {
			return err
		}
	}
	return nil
}

// explainPending says how to decide later; it goes to stderr-like output
// only in human mode, so --json output stays pure NDJSON.
func (f *follower) explainPending(runID string, pending []backend.ApprovalRequest) {
	w := f.out
	if f.json {
		w = f.prompt.err
	}
	fmt.Fprintf(w, "\nRun %s is waiting for approval. It stays pending; decide later with:\n", runID)
	for _, a := range pending {
		fmt.Fprintf(w, "  agenthub approve %s    # %s\n", a.ID, a.Title)
	}
	fmt.Fprintf(w, "  (or agenthub reject ID [--reason TEXT] [--stop]; agenthub approvals list shows them all)\n")
}
