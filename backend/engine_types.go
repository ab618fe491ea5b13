package backend

import (
	"context"
	"encoding/json"
	"time"
)

// This file is the engine's vocabulary: the interfaces a model, a tool and a
// policy gate implement to plug into the run loop (run-model.md §3–§9), and
// the summaries the engine returns.

// Role is a transcript message role.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one model-visible transcript entry.
type Message struct {
	ID         string            `json:"id,omitempty"`
	Role       Role              `json:"role"`
	Text       string            `json:"text,omitempty"`
	Calls      []ToolCallRequest `json:"calls,omitempty"`      // assistant
	ToolCallID string            `json:"toolCallId,omitempty"` // tool
	IsError    bool              `json:"isError,omitempty"`    // tool
	Steer      bool              `json:"steer,omitempty"`      // user
}

// ToolCallRequest is one call as the model produced it; Arguments are never
// rewritten (TC2).
type ToolCallRequest struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSpec is what the model is told about a tool.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"` // JSON Schema of the arguments
}

// Usage counts tokens of one inference.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// ModelRequest is one inference request.
type ModelRequest struct {
	Step     int        `json:"step"`
	Messages []Message  `json:"messages"`
	Tools    []ToolSpec `json:"tools"`
	// Context is text BeforeInference hooks add to this request only: a
	// model appends it to its system text, after the profile's system
	// prompt. It is never part of the transcript.
	Context []string `json:"context,omitempty"`
}

// ModelResponse is a complete inference result.
type ModelResponse struct {
	Text  string            `json:"text"`
	Calls []ToolCallRequest `json:"calls"`
	Usage Usage             `json:"usage"`
}

// Model runs one streaming inference per step. Stream calls delta for each
// text fragment as it arrives and returns the complete response. A scripted
// playbook and real LLM providers both implement it.
type Model interface {
	Stream(ctx context.Context, req ModelRequest, delta func(text string)) (ModelResponse, error)
}

// GatedAction describes a side effect for the approval gate (AP4, AP9).
// Subject is exactly what the reviewer is shown; its canonical hash binds the
// decision.
type GatedAction struct {
	Kind    ActionKind      `json:"kind"`
	Title   string          `json:"title"`
	Risk    Risk            `json:"risk"`
	Preview json.RawMessage `json:"preview"`
	Subject json.RawMessage `json:"subject"`

	// TitleMessage is Title as a message key for the UI (optional).
	TitleMessage *Text `json:"titleMessage,omitempty"`
}

// ToolEnv is what a tool sees of its run.
type ToolEnv struct {
	RunID         string
	SessionID     string
	WorkspaceID   string
	WorkspaceRoot string // absolute; never put it in results or events
	// Track registers a process group (or anything stoppable) that cancel and
	// the hard timeout must stop after the grace period (CC7).
	Track func(Stopper)
	// Emit records an extra event of the run (e.g. run.file.read), committed
	// before anyone sees it.
	Emit func(typ EventType, payload any)
	// Intents, when set, records every change to workspace files before it
	// is made (intent before effect, backend/intent.go).
	Intents IntentJournal
	// Artifacts, when set, stores an artifact of the run and announces it
	// (backend/artifact.go); nil where a surface keeps none.
	Artifacts ArtifactSink
}

// Stopper is an external resource a cancel must end: Stop signals, waits at
// most grace, then kills.
type Stopper interface {
	Stop(grace time.Duration) error
}

// ToolInput is one execution of a call.
type ToolInput struct {
	CallID      string
	Arguments   json.RawMessage
	ResumeInput json.RawMessage // the decision payload on replay (SR5), else nil
}

// ToolResult is what a tool returns. Content is what the model sees. A tool
// that needs the user sets Suspend instead (SR1).
type ToolResult struct {
	Content string
	IsError bool
	Suspend *Suspension
}

// Suspension is a tool's request to wait for the user (an input ticket).
type Suspension struct {
	Reason     string
	Title      string
	Preview    json.RawMessage
	ResumeMode ResumeMode
}

// Tool is one callable tool. Action returns nil for calls that need no
// gate (pure reads); it is computed again right before an approved call
// executes, so a changed subject is caught (AP10). Action must be free of
// side effects.
type Tool interface {
	Spec() ToolSpec
	Action(ctx context.Context, env ToolEnv, args json.RawMessage) (*GatedAction, error)
	Execute(ctx context.Context, env ToolEnv, in ToolInput) (ToolResult, error)
}

// GateRequest is one proposed action put to the policy.
type GateRequest struct {
	RunID       string
	WorkspaceID string
	Tool        string
	Action      GatedAction
}

// Gate evaluates a proposed action: Allow, Ask or Deny (run-model §9).
type Gate interface {
	Evaluate(ctx context.Context, req GateRequest) PolicyResult
}

// KindGate is a Gate that can tell before a run starts whether its policy,
// in a workspace, asks or denies some action of a kind: a runtime whose
// gating of that kind is only advisory cannot enforce it (AD2). A Gate
// that does not implement it is taken to gate every kind.
type KindGate interface {
	Gates(workspaceID string, kind ActionKind) bool
}

// Failure is the failure of a Failed run (FC1). Next is the failure's own
// next step when it has one, else the code's default ([Recovery]).
type Failure struct {
	Code    FailureCode `json:"code"`
	Message string      `json:"message"`
	Next    string      `json:"next"`
}

// RunSummary is a run as lists and the API show it.
type RunSummary struct {
	ID               string   `json:"id"`
	SessionID        string   `json:"sessionId"`
	WorkspaceID      string   `json:"workspaceId"`
	Profile          string   `json:"profile"`
	Task             string   `json:"task"`
	State            RunState `json:"state"`
	Coarse           Coarse   `json:"coarse"`
	Queued           bool     `json:"queued"`
	DoneReason       string   `json:"doneReason,omitempty"`
	Failure          *Failure `json:"failure,omitempty"`
	CreatedAt        string   `json:"createdAt"`
	LastEventAt      string   `json:"lastEventAt"`
	LastSequence     int64    `json:"lastSequence"`
	PendingApprovals int      `json:"pendingApprovals"`
	Scripted         bool     `json:"scripted"`
	// Resumable: the run was interrupted and its runtime can resume from
	// the last checkpoint (Engine.Resume).
	Resumable bool `json:"resumable"`
	// ResumedFrom is the run this one continues; ResumedBy the run that
	// continues this one. A run is resumed once (issue 16).
	ResumedFrom string `json:"resumedFrom,omitempty"`
	ResumedBy   string `json:"resumedBy,omitempty"`
}
