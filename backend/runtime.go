package backend

import "context"

// Enforcement says whether a runtime's gating is enforced by AgentHub or only
// advisory (AD2).
type Enforcement string

const (
	Enforced Enforcement = "enforced"
	Advisory Enforcement = "advisory"
)

// Capabilities is what a runtime declares about itself (AD2). The UI shows it
// and the engine refuses a run whose policy the runtime cannot enforce.
type Capabilities struct {
	Gating              map[ActionKind]Enforcement `json:"gating"`
	Streaming           bool                       `json:"streaming"`
	Steer               bool                       `json:"steer"`
	DurableContinuation bool                       `json:"durableContinuation"`
	PartialApply        bool                       `json:"partialApply"`
	Usage               bool                       `json:"usage"`
	Scripted            bool                       `json:"scripted"` // a playbook, never an AI model
}

// Sink receives committed events, in sequence order per run. Implementations
// must never block the engine (EV7).
type Sink interface {
	Publish(ev Event)
}

// Canceler is anything that can be cancelled idempotently (CC7, LC8).
type Canceler interface {
	Cancel(ctx context.Context, reason string) error
}
