package backend

import "slices"

// CallStatus is a tool call's state (run-model.md §2.1).
type CallStatus string

const (
	CallNew       CallStatus = "New"
	CallRunning   CallStatus = "Running"
	CallSuspended CallStatus = "Suspended"
	CallResuming  CallStatus = "Resuming"
	CallSucceeded CallStatus = "Succeeded"
	CallFailed    CallStatus = "Failed"
	CallCancelled CallStatus = "Cancelled"
)

// AllCallStatuses lists every call status.
var AllCallStatuses = []CallStatus{CallNew, CallRunning, CallSuspended, CallResuming,
	CallSucceeded, CallFailed, CallCancelled}

var callTransitions = map[CallStatus][]CallStatus{
	CallNew:       {CallRunning, CallSuspended, CallSucceeded, CallFailed, CallCancelled},
	CallRunning:   {CallSucceeded, CallFailed, CallCancelled, CallSuspended},
	CallSuspended: {CallResuming, CallCancelled},
	CallResuming:  {CallRunning, CallSucceeded, CallFailed, CallCancelled, CallSuspended},
}

// Terminal reports whether the call can no longer change.
func (s CallStatus) Terminal() bool {
	return s == CallSucceeded || s == CallFailed || s == CallCancelled
}

// CheckCallTransition returns nil when from → to is allowed (TC1); X → X is a no-op.
func CheckCallTransition(from, to CallStatus) error {
	if from == to && slices.Contains(AllCallStatuses, from) {
		return nil
	}
	if slices.Contains(callTransitions[from], to) {
		return nil
	}
	return &TransitionError{Machine: "call", From: string(from), To: string(to)}
}

// ResumeMode says how a suspended call continues (SR6).
type ResumeMode string

const (
	ResumeReplayToolCall          ResumeMode = "replay_tool_call"
	ResumeUseDecisionAsToolResult ResumeMode = "use_decision_as_tool_result"
	ResumePassDecisionToTool      ResumeMode = "pass_decision_to_tool"
)
