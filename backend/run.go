package backend

import (
	"fmt"
	"slices"
)

// RunState is a state of the run lifecycle (run-model.md §1.1).
type RunState string

const (
	RunCreated       RunState = "Created"
	RunPlanned       RunState = "Planned"
	RunAccepted      RunState = "Accepted"
	RunPreparing     RunState = "Preparing"
	RunRunning       RunState = "Running"
	RunNeedsApproval RunState = "NeedsApproval"
	RunApplying      RunState = "Applying"
	RunCompleted     RunState = "Completed"
	RunFailed        RunState = "Failed"
	RunCancelled     RunState = "Cancelled"
)

// AllRunStates lists every state in lifecycle order.
var AllRunStates = []RunState{RunCreated, RunPlanned, RunAccepted, RunPreparing, RunRunning,
	RunNeedsApproval, RunApplying, RunCompleted, RunFailed, RunCancelled}

// runTransitions is run-model.md §1.2 as data: the only allowed moves.
var runTransitions = map[RunState][]RunState{
	RunCreated:       {RunPlanned, RunFailed, RunCancelled},
	RunPlanned:       {RunAccepted, RunFailed, RunCancelled},
	RunAccepted:      {RunPreparing, RunFailed, RunCancelled},
	RunPreparing:     {RunRunning, RunFailed, RunCancelled},
	RunRunning:       {RunNeedsApproval, RunApplying, RunCompleted, RunFailed, RunCancelled},
	RunNeedsApproval: {RunRunning, RunCancelled, RunFailed},
	RunApplying:      {RunRunning, RunFailed, RunCancelled},
}

// Terminal reports whether no transition may leave s (LC2).
func (s RunState) Terminal() bool {
	return s == RunCompleted || s == RunFailed || s == RunCancelled
}

// Valid reports whether s is a known state.
func (s RunState) Valid() bool { return slices.Contains(AllRunStates, s) }

// Coarse is the status lanes, the registry and encoders use (LC7).
type Coarse string

const (
	CoarseCreated Coarse = "created"
	CoarseRunning Coarse = "running"
	CoarseWaiting Coarse = "waiting"
	CoarseDone    Coarse = "done"
)

// Coarse maps a state to its coarse status.
func (s RunState) Coarse() Coarse {
	switch s {
	case RunRunning, RunApplying:
		return CoarseRunning
	case RunNeedsApproval:
		return CoarseWaiting
	case RunCompleted, RunFailed, RunCancelled:
		return CoarseDone
	}
	return CoarseCreated
}

// TransitionError is returned for a move outside the table (LC1, TC1).
type TransitionError struct {
	Machine  string // "run" or "call"
	From, To string
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("illegal %s transition %s -> %s", e.Machine, e.From, e.To)
}

// Is lets errors.Is(err, ErrIllegalTransition) match any TransitionError.
func (e *TransitionError) Is(target error) bool { return target == ErrIllegalTransition }

// CheckRunTransition returns nil when from → to is allowed. X → X is reported
// by the caller as a no-op; here it is an error only if X is unknown.
func CheckRunTransition(from, to RunState) error {
	if from == to && from.Valid() {
		return nil
	}
	if slices.Contains(runTransitions[from], to) {
		return nil
	}
	return &TransitionError{Machine: "run", From: string(from), To: string(to)}
}

// DoneReason values for Completed and Cancelled runs (LC5); Failed runs use a FailureCode.
const (
	DoneNatural           = "natural"
	DoneBehaviorRequested = "behavior_requested"
	DoneUserCancelled     = "user_cancelled"
	DoneApprovalRejected  = "approval_rejected"
	DoneParentCancelled   = "parent_cancelled"
)

// DoneStopped is the done reason of a run ended by a stop condition.
func DoneStopped(code string) string { return "stopped:" + code }
