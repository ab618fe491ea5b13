package backend

import (
	"encoding/json"
	"time"
)

// SchemaVersion is the envelope and payload schema version (§13.1).
const SchemaVersion = 1

// TimeFormat is RFC 3339 UTC with milliseconds, the envelope's timestamp format.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Event is the envelope every run event travels in (run-model.md §13.1).
// Sequence is per run, starts at 1, has no holes and is assigned at commit.
type Event struct {
	SchemaVersion int             `json:"schemaVersion"`
	ID            string          `json:"id"`
	Sequence      int64           `json:"sequence"`
	Type          EventType       `json:"type"`
	RunID         string          `json:"runId"`
	SessionID     string          `json:"sessionId"`
	AgentID       string          `json:"agentId"`
	Timestamp     string          `json:"timestamp"`
	Payload       json.RawMessage `json:"payload"`
}

// Stamp formats t as an envelope timestamp.
func Stamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// EventType is a stable dotted event name (§13.2). Unknown types are kept and
// replayed unchanged (EV13), so this is an open set.
type EventType string

const (
	EvRunCreated       EventType = "run.created"
	EvRunStarted       EventType = "run.started"
	EvRunCompleted     EventType = "run.completed"
	EvRunFailed        EventType = "run.failed"
	EvRunCancelled     EventType = "run.cancelled"
	EvRunStatusChanged EventType = "run.status.changed"

	EvMessageDelta     EventType = "run.message.delta"
	EvMessageCompleted EventType = "run.message.completed"

	EvToolCall   EventType = "run.tool.call"
	EvToolDelta  EventType = "run.tool.delta"
	EvToolResult EventType = "run.tool.result"

	EvFileRead      EventType = "run.file.read"
	EvDiffReady     EventType = "run.diff.ready"
	EvPatchProposed EventType = "run.patch.proposed"
	EvPatchApplied  EventType = "run.patch.applied"
	EvPatchRejected EventType = "run.patch.rejected"

	EvArtifactReady EventType = "run.artifact.ready"
	EvPreviewReady  EventType = "run.preview.ready"

	EvApprovalRequested EventType = "run.approval.requested"
	EvApprovalResolved  EventType = "run.approval.resolved"

	EvCheckpointCreated EventType = "run.checkpoint.created"
	EvContextCompacted  EventType = "run.context.compacted"
	// EvInferenceAnnotated records the annotations one AfterInference hook
	// attached to a model response. Payload [InferenceAnnotated].
	EvInferenceAnnotated EventType = "run.inference.annotated"

	EvRuntimeUnavailable EventType = "runtime.unavailable"
	EvRuntimeTimeout     EventType = "runtime.timeout"
	// An external agent CLI's runtime adapter records the CLI that ran
	// (version, binary hash) and warns when its version is not the one the
	// adapter was tested with (AD4).
	EvRuntimeStarted   EventType = "runtime.started"
	EvVersionDrift     EventType = "runtime.version_drift"
	EvSchemaValidation EventType = "schema.validation_failed"
	// EvGatingAdvisory records, at Preparing, the action kinds the run's
	// policy gates but its runtime only advises on, which the profile
	// accepted (AD2): AgentHub records those actions and cannot stop them.
	// Payload [GatingAdvisory].
	EvGatingAdvisory EventType = "runtime.gating_advisory"

	// EvSystemGap is synthesised per subscriber and never persisted (EV10).
	EvSystemGap EventType = "system.gap"
)

// Terminal reports whether t ends a run.
func (t EventType) Terminal() bool {
	return t == EvRunCompleted || t == EvRunFailed || t == EvRunCancelled
}

// StatusChanged is the payload of run.status.changed.
type StatusChanged struct {
	From   RunState `json:"from"`
	To     RunState `json:"to"`
	Reason string   `json:"reason,omitempty"`
}

// RunEnded is the payload of the terminal events. Recovery is the code's
// default next step ([Recovery], which the UI localises by code); Next is
// the failure's own next step when the error named one ([Error.Next]), and
// then is what a reader shows instead.
type RunEnded struct {
	From       RunState    `json:"from"`
	DoneReason string      `json:"doneReason"`
	Code       FailureCode `json:"code,omitempty"`
	Message    string      `json:"message,omitempty"`
	Recovery   string      `json:"recovery,omitempty"`
	Next       string      `json:"next,omitempty"`
}

// GatingAdvisory is the payload of runtime.gating_advisory.
type GatingAdvisory struct {
	Runtime    string       `json:"runtime"`
	Profile    string       `json:"profile"`
	Kinds      []ActionKind `json:"kinds"`
	AcceptedBy string       `json:"acceptedBy"` // the profile setting that accepts it
}

// InferenceAnnotated is the payload of run.inference.annotated.
type InferenceAnnotated struct {
	MessageID   string       `json:"messageId"` // the assistant message of the response
	Step        int          `json:"step"`
	Hook        string       `json:"hook"` // the hook's HookName
	Annotations []Annotation `json:"annotations"`
}

// Gap is the payload of system.gap.
type Gap struct {
	RunID        string `json:"runId"`
	FromSequence int64  `json:"fromSequence"`
	ToSequence   int64  `json:"toSequence"`
	Reason       string `json:"reason"` // subscriber_overflow | pruned
}
