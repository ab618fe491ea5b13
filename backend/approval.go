package backend

import "encoding/json"

// ActionKind classifies a gated action (seed 004, run-model.md §9).
type ActionKind string

const (
	ActionRead    ActionKind = "read"
	ActionWrite   ActionKind = "write"
	ActionPatch   ActionKind = "patch"
	ActionShell   ActionKind = "shell"
	ActionNetwork ActionKind = "network"
	ActionCommit  ActionKind = "commit"
	ActionPush    ActionKind = "push"
	ActionPublish ActionKind = "publish"
	ActionDeploy  ActionKind = "deploy"
	ActionSecret  ActionKind = "secret"
	// ActionMCP is a call of a tool of an MCP server (mcp__<server>__<tool>).
	ActionMCP ActionKind = "mcp"
)

// AlwaysAsks reports whether no grant or rule may switch off the gate for k (AP6).
func (k ActionKind) AlwaysAsks() bool {
	return k == ActionPush || k == ActionPublish || k == ActionDeploy
}

// Verdict is a policy outcome. Precedence: Deny > Allow > Ask (AP1).
type Verdict string

const (
	Allow Verdict = "allow"
	Ask   Verdict = "ask"
	Deny  Verdict = "deny"
)

// Risk is the risk level shown with an approval.
type Risk string

const (
	RiskLow    Risk = "low"
	RiskMedium Risk = "medium"
	RiskHigh   Risk = "high"
)

// DecisionKind is what the reviewer chose (run-model.md §9.3).
type DecisionKind string

const (
	ApproveOnce          DecisionKind = "approve_once"
	ApproveForRun        DecisionKind = "approve_for_run"
	AlwaysAllowWorkspace DecisionKind = "always_allow_workspace"
	RejectAndTell        DecisionKind = "reject_and_tell"
	RejectAndStop        DecisionKind = "reject_and_stop"
)

// Approves reports whether d lets the call proceed.
func (d DecisionKind) Approves() bool {
	return d == ApproveOnce || d == ApproveForRun || d == AlwaysAllowWorkspace
}

// Surface is where a decision or audit fact came from (AU2).
type Surface string

const (
	SurfaceWindow  Surface = "window"
	SurfaceBrowser Surface = "browser"
	SurfaceCLI     Surface = "cli"
	SurfaceEngine  Surface = "engine"
)

// TraceStep is one rule evaluated by the policy, in order.
type TraceStep struct {
	Rule    string  `json:"rule"`    // rule id or "default:<kind>"
	Pattern string  `json:"pattern"` // the glob, argv pattern or host matched against
	Matched bool    `json:"matched"`
	Verdict Verdict `json:"verdict,omitempty"`
}

// PolicyResult is a policy evaluation with its trace.
type PolicyResult struct {
	Verdict Verdict     `json:"verdict"`
	Kind    ActionKind  `json:"kind"`
	RuleID  string      `json:"ruleId,omitempty"`
	Reason  string      `json:"reason"`
	Trace   []TraceStep `json:"trace"`
}

// ApprovalRequest is the durable ticket of a suspended gated call (AP4).
type ApprovalRequest struct {
	ID               string          `json:"approvalId"`
	RunID            string          `json:"runId"`
	ToolCallID       string          `json:"toolCallId"`
	Kind             ActionKind      `json:"kind"`
	Title            string          `json:"title"`
	Preview          json.RawMessage `json:"preview"`
	Risk             Risk            `json:"risk"`
	Subject          json.RawMessage `json:"subject"`
	SubjectHash      string          `json:"subjectHash"`
	BaseCommit       string          `json:"baseCommit,omitempty"`
	PolicyTrace      []TraceStep     `json:"policyTrace"`
	Enforcement      string          `json:"enforcement"` // enforced | advisory
	DecisionsOffered []DecisionKind  `json:"decisionsOffered"`
	GrantPreview     string          `json:"grantPreview,omitempty"`
	Status           string          `json:"status"` // pending | resolved
	CreatedAt        string          `json:"createdAt"`
	// MergedApprovalIDs are other pending requests of the run that ask for
	// exactly the same thing; one decision resolves them all (AP13).
	MergedApprovalIDs []string `json:"mergedApprovalIds,omitempty"`

	// TitleMessage and RulePreview are Title and GrantPreview as message
	// keys with arguments, which the UI localises (issue 21); RuleLocation
	// is where "always allow in this workspace" writes its rule: the
	// setting when the request was made, and the decision writes there.
	TitleMessage *Text         `json:"titleMessage,omitempty"`
	RulePreview  *Text         `json:"rule_preview,omitempty"`
	RuleLocation *RuleLocation `json:"rule_location,omitempty"`
	// RiskMessage says why the risk is what it is when the policy's class
	// decided it (risk_read_only: a command that only reads).
	RiskMessage *Text `json:"riskMessage,omitempty"`
}

// Decision is a reviewer's resolution of a ticket (§9.3). The key is
// (ToolCallID, DecisionID): the same key again has no second effect (AP7).
type Decision struct {
	DecisionID  string       `json:"decisionId"`
	ApprovalID  string       `json:"approvalId"`
	ToolCallID  string       `json:"toolCallId,omitempty"`
	Kind        DecisionKind `json:"decision"`
	SubjectHash string       `json:"subjectHash"` // what the reviewer saw (AP9)
	Reason      string       `json:"reason,omitempty"`
	Hunks       []HunkRef    `json:"hunks,omitempty"` // per-hunk selection for patches (AP5)
	Actor       string       `json:"actor"`
	Surface     Surface      `json:"surface"`
}

// HunkRef selects one hunk of one file of a patch, or some of its lines:
// Lines are indexes (from 0) into the hunk's lines of the added and deleted
// lines to apply, as `git add -p`'s split does; absent means the whole hunk.
// A deleted line left out stays in the file, an added one is not written.
type HunkRef struct {
	Path  string `json:"path"`
	Index int    `json:"index"`
	Lines []int  `json:"lines,omitempty"`
}
