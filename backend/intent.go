package backend

// Intent before effect (docs/RELIABILITY.md): a tool that changes workspace
// files announces the change through ToolEnv.Intents, and the engine commits
// it before the first byte is written. These types mirror the workspace
// package's, which this vocabulary package cannot import.

// Intent is one effect on a workspace, announced before it happens.
type Intent struct {
	ID      string // the effect's checkpoint id
	Op      string // "write" or "undo"
	Undoes  string // for an undo, the checkpoint it restores
	Files   []IntentFile
	Staging []string // workspace-relative staging files the effect may leave
}

// IntentFile is one file of an intent with its content hash before and after
// (SHA-256 hex, or "absent").
type IntentFile struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// IntentJournal records intents. Intend returns once the intent is
// committed (an error stops the effect before anything is written); Abandon
// records an effect that failed after its intent with what the disk holds
// (verdict "applied", "not_applied" or "conflict").
type IntentJournal interface {
	Intend(Intent) error
	Abandon(id, verdict string, cause error)
}

// IntentCommit is the Op of a git commit's intent: Files[0] is "HEAD" with
// the base commit as Before, the others the committed paths with their
// blob hashes as After ("" for a deleted path). Recovery asks the
// repository whether the commit landed (workspace/git.Landed).
const IntentCommit = "commit"

// IntentCloser is a journal that records an effect's success itself, for
// effects no patch.applied event closes (a commit). A journal without it
// leaves the intent open, and the next start reconciles it.
type IntentCloser interface {
	Applied(id, outcome string) error
}

// EvWorkspaceConflict records an effect whose files, found after a crash,
// hold neither what they held before nor what the effect wrote (or disagree
// with each other). Nothing is changed: the user resolves it. Payload
// [WorkspaceConflict].
const EvWorkspaceConflict EventType = "run.workspace.conflict"

// CodeWorkspaceConflict is the stable code of a [WorkspaceConflict].
const CodeWorkspaceConflict = "workspace_conflict"

// WorkspaceConflict is the payload of [EvWorkspaceConflict].
type WorkspaceConflict struct {
	Code         string         `json:"code"` // CodeWorkspaceConflict
	IntentID     string         `json:"intentId"`
	CheckpointID string         `json:"checkpointId"`
	ToolCallID   string         `json:"toolCallId,omitempty"`
	Files        []ConflictFile `json:"files"`
	Message      string         `json:"message"`
	Next         string         `json:"next"`
}

// ConflictFile is one file of a conflict: what the effect expected before
// and after, and what was found.
type ConflictFile struct {
	IntentFile
	Found string `json:"found"` // SHA-256 hex, "absent", or "unreadable: …"
}

// EvWorkspaceConflictResolved records the user's resolution of a
// [WorkspaceConflict]: "keep" leaves the disk as found, "restore" put back
// each file's content from before the change. It may follow the run's end:
// the conflict outlives the run that left it. Payload
// [WorkspaceConflictResolved].
const EvWorkspaceConflictResolved EventType = "run.workspace.conflict_resolved"

// Conflict resolutions.
const (
	ConflictKeep    = "keep"
	ConflictRestore = "restore"
)

// WorkspaceConflictResolved is the payload of [EvWorkspaceConflictResolved].
type WorkspaceConflictResolved struct {
	IntentID string         `json:"intentId"`
	Choice   string         `json:"choice"` // ConflictKeep | ConflictRestore
	Files    []ConflictFile `json:"files"`  // Found: what each file holds after the resolution
	// RestoreCheckpointID is the checkpoint of a restore, so it can be
	// undone in turn; empty for keep.
	RestoreCheckpointID string  `json:"restoreCheckpointId,omitempty"`
	Actor               string  `json:"actor"`
	Surface             Surface `json:"surface"`
}
