package backend

import "context"

// Hook is a plugin on the native run loop (run-model §3). A hook is any
// value with a name that implements one or more of the phase interfaces
// below ([RunStartHook] … [RunEndHook]); the engine calls each implemented
// method at its phase, in registration order. Hooks run on the run's own
// goroutine, must return promptly, and must not panic.
//
// Views passed to hooks are copies: changing them changes nothing. A hook
// acts only through its return value, and only where §3 allows it to.
// A hook can never decide an approval on the user's behalf: the policy
// gate's Deny and Ask always stand (see [ToolGateHook]).
type Hook interface {
	HookName() string
}

// RunView is what a hook sees of a run.
type RunView struct {
	RunID       string
	SessionID   string
	WorkspaceID string
	Profile     string
	// Recovered is true for the activation that continues a run waiting
	// for a decision after a restart (PH1).
	Recovered bool
}

// StepView is what a hook sees of a step.
type StepView struct {
	RunID    string
	Step     int
	Messages []Message // the run's transcript so far (a copy)
	Tools    []string  // the tools offered to the model this step
}

// CallView is one tool call of a step.
type CallView struct {
	RunID string
	Step  int
	Index int
	Call  ToolCallRequest
}

// ResultView is an executed call's result.
type ResultView struct {
	Status  CallStatus
	Content string
	IsError bool
}

// RunEndView is a run's terminal state.
type RunEndView struct {
	RunID string
	State RunState
	Code  FailureCode // set when State is Failed
}

// RunStartHook observes each activation, before the first step: once for a
// fresh run and once for each continuation after a restart (PH1).
type RunStartHook interface {
	RunStart(ctx context.Context, r RunView)
}

// StepStartHook observes the start of each step, before inference.
type StepStartHook interface {
	StepStart(ctx context.Context, s StepView)
}

// BeforeInference is what a BeforeInferenceHook may change about the
// request: tools removed for this step, and context added to it. A removed
// tool is left out of the request, and a call the model makes to it anyway
// fails "not found". Each Context text is appended to the request's system
// text (after the profile's system prompt, in hook registration order) for
// this request only: it is never stored in the transcript, and the next
// step's request carries only what the hooks add then ([ModelRequest.Context]).
type BeforeInference struct {
	RemoveTools []string
	Context     []string
}

// BeforeInferenceHook runs last before the request is sent.
type BeforeInferenceHook interface {
	BeforeInference(ctx context.Context, s StepView) BeforeInference
}

// AfterInference is what an AfterInferenceHook may change about a
// response: calls dropped (by call id; they are never recorded or run),
// and termination requested: the run then ends Completed
// (behavior_requested) after the step, and none of its calls run. A hook
// may also annotate the response: its annotations are recorded as one
// run.inference.annotated event ([InferenceAnnotated]), committed with the
// response; they change nothing the model or the tools see.
type AfterInference struct {
	DropCalls   []string
	Terminate   bool
	Annotations []Annotation
}

// Annotation is a note a hook attaches to a model response: a label, a
// text, and optionally the call of the response it is about.
type Annotation struct {
	Label      string `json:"label"`
	Text       string `json:"text"`
	ToolCallID string `json:"toolCallId,omitempty"`
}

// InferenceView is a complete model response.
type InferenceView struct {
	RunID string
	Step  int
	Text  string
	Calls []ToolCallRequest
	Usage Usage
}

// AfterInferenceHook runs when a response is complete, before its calls
// are recorded.
type AfterInferenceHook interface {
	AfterInference(ctx context.Context, r InferenceView) AfterInference
}

// GateOutcome is a ToolGate hook's answer. The zero value allows.
type GateOutcome int

// Gate outcomes, weakest first: when several hooks answer for one call,
// the strongest wins (GT2: Block > Suspend > SetResult > Allow), and the
// first registered at equal rank.
const (
	GateAllow GateOutcome = iota
	GateSetResult
	GateSuspend
	GateBlock
)

// GateDecision is a ToolGate hook's decision for one call.
type GateDecision struct {
	Outcome GateOutcome
	Reason  string      // Block: shown to the model after "permission_denied: "
	Result  string      // SetResult: the call's result; the tool is not executed
	Ticket  *Suspension // Suspend: the ticket the reviewer sees (Title, Preview, Reason)
}

// ToolGateHook gates one call (GT1). It must have no side effects. Hooks
// compose with the policy gate so that they can only make a call stricter:
// a Block fails the call and ends the run Failed(permission_denied) (GT4)
// whatever the policy says; the policy's Deny or Ask stands over a hook's
// Suspend, SetResult or Allow; a hook's Suspend creates a ticket that only
// a reviewer resolves; SetResult records the result without executing the
// tool; Allow only lets the policy gate decide.
type ToolGateHook interface {
	ToolGate(ctx context.Context, c CallView) GateDecision
}

// BeforeToolExecuteHook observes a call that is about to execute (once).
type BeforeToolExecuteHook interface {
	BeforeToolExecute(ctx context.Context, c CallView)
}

// AfterToolExecuteHook observes an executed call's result (once).
type AfterToolExecuteHook interface {
	AfterToolExecute(ctx context.Context, c CallView, r ResultView)
}

// StepEndHook observes a completed step, after its checkpoint.
type StepEndHook interface {
	StepEnd(ctx context.Context, s StepView)
}

// RunEndHook observes a run's terminal state, exactly once per run.
type RunEndHook interface {
	RunEnd(ctx context.Context, r RunEndView)
}

// AllowCall lets the policy gate decide.
func AllowCall() GateDecision { return GateDecision{} }

// BlockCall blocks a call with a reason.
func BlockCall(reason string) GateDecision { return GateDecision{Outcome: GateBlock, Reason: reason} }

// SuspendCall suspends a call with a ticket.
func SuspendCall(t Suspension) GateDecision { return GateDecision{Outcome: GateSuspend, Ticket: &t} }

// SetCallResult gives a call its result without executing it.
func SetCallResult(result string) GateDecision {
	return GateDecision{Outcome: GateSetResult, Result: result}
}
