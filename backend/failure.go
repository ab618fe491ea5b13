package backend

import (
	"errors"
	"fmt"
)

// FailureCode is a stable failure code (run-model.md §14).
type FailureCode string

const (
	FailRuntimeUnavailable FailureCode = "runtime_unavailable"
	FailOutsideAllowlist   FailureCode = "workspace_outside_allowlist"
	FailPermissionDenied   FailureCode = "permission_denied"
	FailApprovalRejected   FailureCode = "approval_rejected"
	FailRunTimeout         FailureCode = "run_timeout"
	FailSchemaValidation   FailureCode = "schema_validation_failed"
	FailTargetOffline      FailureCode = "target_offline"
	FailRunInterrupted     FailureCode = "run_interrupted"
	FailContextOverflow    FailureCode = "context_overflow"
	FailInternal           FailureCode = "internal_error"
)

// API error codes that are not run failures.
const (
	CodeNotFound                FailureCode = "not_found"
	CodeInvalidInput            FailureCode = "invalid_input"
	CodeActiveRunExists         FailureCode = "active_run_exists"
	CodeApprovalAlreadyResolved FailureCode = "approval_already_resolved"
	CodeApprovalStale           FailureCode = "approval_stale"
	CodeUnauthorized            FailureCode = "unauthorized"
	CodeConflict                FailureCode = "conflict"
	CodeNotReady                FailureCode = "not_ready"
	// CodeEngineUnavailable: the data directory's engine could not be
	// started or reached (issue 16).
	CodeEngineUnavailable FailureCode = "engine_unavailable"
	// CodeRunAlreadyResumed: a run can be resumed once; the message names
	// the run that continues it.
	CodeRunAlreadyResumed FailureCode = "run_already_resumed"
	// CodeWindowUnavailable: `agenthub window` found no window binary
	// (agenthub-window) beside the CLI binary, or could not start it.
	CodeWindowUnavailable FailureCode = "window_unavailable"
)

// Storage error codes: the database or its directory cannot do what was asked.
const (
	CodeStorageFull         FailureCode = "storage_full"           // the disk (or a quota) is full
	CodeStorageReadOnly     FailureCode = "storage_read_only"      // the file, directory or filesystem is read-only
	CodeStoreCorrupt        FailureCode = "store_corrupt"          // the database or one of its rows is damaged
	CodeStoreTooNew         FailureCode = "store_too_new"          // written by a newer AgentHub
	CodeStoreMigration      FailureCode = "store_migration_failed" // a schema migration failed and was undone
	CodeAuditKeyUnavailable FailureCode = "audit_key_unavailable"  // the audit chain's key cannot be read
)

// Issue 21: codes for failures that were told under another code's words.
const (
	// CodeWorkspaceExists: the folder is already on the allowlist.
	CodeWorkspaceExists FailureCode = "workspace_exists"
	// FailPlaybookExpectation: a playbook step's expect was not met (the
	// playbook, not a runtime, is what to fix).
	FailPlaybookExpectation FailureCode = "playbook_expectation_failed"
)

// CodeWorktreeUnsaved: a run's worktree holds work that exists nowhere else
// and its removal was not confirmed for exactly that work.
const CodeWorktreeUnsaved FailureCode = "worktree_unsaved"

// CodeWorkspaceMissing: the workspace's directory is gone from disk
// (deleted, moved or unmounted); no run may start in it.
const CodeWorkspaceMissing FailureCode = "workspace_missing"

// Recovery is the first recovery action for each code (FC1), in English; the
// UI localises by code.
var Recovery = map[FailureCode]string{
	FailRuntimeUnavailable:      "Check the runtime CLI's installation and authentication.",
	FailOutsideAllowlist:        "Add the folder to the allowlist or choose another workspace.",
	FailPermissionDenied:        "Adjust the policy, or request an explicit approval.",
	FailApprovalRejected:        "Change the task or instructions and start a new run.",
	FailRunTimeout:              "Narrow the task or raise the timeout in the profile.",
	FailSchemaValidation:        "Fix the adapter mapping (or pin the tested CLI version) before trusting the run.",
	FailTargetOffline:           "Reconnect the target, or use local mode.",
	FailRunInterrupted:          "Review the transcript and workspace checkpoint, then start a new run.",
	FailContextOverflow:         "Start a new session, or narrow the task.",
	FailInternal:                "Retry; if it repeats, export diagnostics and report it.",
	CodeNotFound:                "Check the id; list the items to see what exists.",
	CodeWorkspaceExists:         "Nothing to add: open the workspace from the list, or choose another folder.",
	FailPlaybookExpectation:     "Fix the playbook's expect, or check that the workspace holds what it expects.",
	CodeInvalidInput:            "Correct the input and try again.",
	CodeActiveRunExists:         "Wait for the running run to end, or allow queueing.",
	CodeApprovalAlreadyResolved: "Nothing to do: the first decision stands.",
	CodeApprovalStale:           "Reload the approval and decide on what is shown now.",
	CodeUnauthorized:            "Open the URL printed by `agenthub serve`, which carries the token.",
	CodeConflict:                "Reload and try again.",
	CodeNotReady:                "Wait a moment for AgentHub to finish starting; if it persists, restart it.",
	CodeEngineUnavailable:       "Check the engine with agenthub engine status and its log engine.log in the data directory; start it with agenthub engine start.",
	CodeRunAlreadyResumed:       "Follow the run that continues it (agenthub runs show RUN names it), or start a new run.",
	CodeWindowUnavailable:       "Build it beside agenthub with `make build`, or use browser mode: `agenthub serve`.",
	CodeStorageFull:             "Free disk space where the data directory is, then try again.",
	CodeStorageReadOnly:         "Make the data directory and its files writable, or pass --home DIR.",
	CodeStoreCorrupt:            "Run `agenthub doctor`; restore the database from its newest backup in the data directory.",
	CodeStoreTooNew:             "Install the newer AgentHub that wrote this data directory, or pass --home DIR.",
	CodeStoreMigration:          "The database was restored from its backup; report the error, then install a fixed version.",
	CodeAuditKeyUnavailable:     "Restore the audit key (or unlock the OS keychain) and start AgentHub again.",
	CodeWorktreeUnsaved:         "Keep the worktree as a branch or merge it; to discard it, confirm the listed work with its token.",
	CodeWorkspaceMissing:        "Restore the folder, or remove the workspace from the allowlist and add the folder where it is now.",
}

// Error carries a stable code and a message safe to show (no secrets, no
// absolute paths), apart from the wrapped internal cause.
type Error struct {
	Code    FailureCode
	Message string // safe to show
	Detail  string // optional stable sub-code, e.g. "approval_drift"
	Next    string // optional: overrides the code's default recovery step
	Err     error  // internal cause; never shown
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted safe message.
func Errorf(code FailureCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of the first *Error in err's chain, or internal_error.
func CodeOf(err error) FailureCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, ErrNotFound) {
		return CodeNotFound
	}
	if errors.Is(err, ErrOutsideAllowlist) {
		return FailOutsideAllowlist
	}
	return FailInternal
}

// NotFound is an ErrNotFound that names what is missing: its kind, in the
// user's words ("run", "workspace", "approval"), and the id asked for.
type NotFound struct{ Kind, ID string }

func (e *NotFound) Error() string { return e.Kind + " " + e.ID + ": not found" }

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *NotFound) Is(target error) bool { return target == ErrNotFound }

// Sentinel errors for branching.
var (
	ErrIllegalTransition = errors.New("illegal transition")
	ErrNotFound          = errors.New("not found")
	ErrOutsideAllowlist  = errors.New("outside the workspace allowlist")
)
