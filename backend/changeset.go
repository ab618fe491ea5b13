package backend

import "encoding/json"

// The change set's event payloads (issue 18): what a run proposes and what
// its turns and the whole run changed, so that a surface other than the
// approval dialog (the Changes view, an export, a CLI) can show them.

// PatchProposed is the payload of run.patch.proposed: one proposal of a
// change to the workspace, emitted when it is put to the reviewer (with the
// approval id) or approved by a rule or grant without asking (no approval
// id). The diff itself is in the approval's preview; a proposal approved
// without asking carries it here instead (Preview), since no approval holds it.
type PatchProposed struct {
	ToolCallID  string          `json:"toolCallId"`
	ApprovalID  string          `json:"approvalId,omitempty"`
	Tool        string          `json:"tool"`
	Resolver    string          `json:"resolver"` // reviewer | policy
	Files       []ProposedFile  `json:"files"`
	SubjectHash string          `json:"subjectHash"`
	Preview     json.RawMessage `json:"preview,omitempty"` // JSON of the preview, policy-approved proposals only
}

// ProposedFile is one file of a proposal, bound by its pre-image hash (the
// content the diff was computed on; "absent" for a new file).
type ProposedFile struct {
	Path      string `json:"path"` // workspace-relative
	Operation string `json:"operation,omitempty"`
	Preimage  string `json:"preimage"`
	Postimage string `json:"postimage,omitempty"`
}

// DiffScope says what a run.diff.ready compares.
type DiffScope string

const (
	// DiffTurn is one step: the files its applied patches changed.
	DiffTurn DiffScope = "turn"
	// DiffRun is the whole run so far.
	DiffRun DiffScope = "run"
	// DiffBranch is a worktree run's branch against its base commit.
	DiffBranch DiffScope = "branch"
)

// DiffReady is the payload of run.diff.ready. Base is what the files are
// compared with: for turn and run, the pre-images of the first apply of each
// file (in Checkpoints); for branch, the base commit. Target is "workspace"
// (the files as they are when the event is written) or "worktree".
type DiffReady struct {
	Scope       DiffScope     `json:"scope"`
	Step        int           `json:"step,omitempty"` // the turn's step
	Base        string        `json:"base"`
	Target      string        `json:"target"`
	Checkpoints []string      `json:"checkpoints,omitempty"`
	Files       []ChangedFile `json:"files"`
	Summary     DiffSummary   `json:"summary"`
	LeftOut     []LeftOutFile `json:"leftOut,omitempty"`
}

// ChangedFile is one changed file of a diff.ready, workspace-relative.
type ChangedFile struct {
	Path      string `json:"path"`
	Operation string `json:"operation"` // create | modify | delete
	Before    string `json:"before"`    // SHA-256 or "absent"
	After     string `json:"after"`
	Added     int    `json:"added"`
	Removed   int    `json:"removed"`
}

// DiffSummary totals a diff.ready.
type DiffSummary struct {
	Files   int `json:"files"`
	Added   int `json:"added"`
	Removed int `json:"removed"`
}

// LeftOutFile is a changed file whose lines are not counted: binary, too
// large, or unreadable.
type LeftOutFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"` // binary | too_large | unreadable
}

// PrefixComment is the id prefix of a review comment.
const PrefixComment = "cmt"

// ReviewComment is a reviewer's comment on a line or a range of lines of a
// proposed change (ApprovalID) or an applied one (CheckpointID). A
// proposal's comments go back to the agent with the decision on it
// (DeliveredIn is then that decision's id).
type ReviewComment struct {
	ID           string  `json:"id"`
	RunID        string  `json:"runId"`
	ApprovalID   string  `json:"approvalId,omitempty"`
	CheckpointID string  `json:"checkpointId,omitempty"`
	Path         string  `json:"path"` // workspace-relative
	StartLine    int     `json:"startLine"`
	EndLine      int     `json:"endLine"`
	Side         string  `json:"side"` // new | old: the line numbers' side of the diff
	Body         string  `json:"body"`
	Actor        string  `json:"actor"`
	Surface      Surface `json:"surface"`
	CreatedAt    string  `json:"createdAt"`
	DeliveredIn  string  `json:"deliveredIn,omitempty"`
}
