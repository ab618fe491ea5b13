package api

import (
	"errors"
	"regexp"

	"agenthub/backend"
	"agenthub/workspace"
)

// ErrorBody is what every surface shows for a failed call: a stable code, a
// message safe to show, the next step, and whether retrying may help.
type ErrorBody struct {
	Code      backend.FailureCode `json:"code"`
	Message   string              `json:"message"`
	Next      string              `json:"next"`
	Retryable bool                `json:"retryable"`
	// NextSpecific says Next came from the error itself rather than the
	// code's default recovery, so a client must show it instead of its own
	// localised default for the code.
	NextSpecific bool `json:"nextSpecific,omitempty"`
}

func (e ErrorBody) Error() string { return string(e.Code) + ": " + e.Message }

// ErrorOf maps any error to its body. Internal causes never leak: only the
// safe message of a *backend.Error is shown.
func ErrorOf(err error) ErrorBody {
	var body ErrorBody
	if errors.As(err, &body) {
		return body
	}
	var be *backend.Error
	var missing *backend.NotFound
	switch {
	case errors.As(err, &be):
		body = ErrorBody{Code: be.Code, Message: be.Message, Next: be.Next}
	case errors.Is(err, workspace.ErrOutsideRoot), errors.Is(err, backend.ErrOutsideAllowlist):
		body = ErrorBody{Code: backend.FailOutsideAllowlist, Message: "the path is outside the workspace"}
	case errors.As(err, &missing):
		body = ErrorBody{Code: backend.CodeNotFound, Message: notFoundMessage(missing)}
	case errors.Is(err, backend.ErrNotFound):
		body = ErrorBody{Code: backend.CodeNotFound, Message: "no such item"}
	default:
		body = ErrorBody{Code: backend.FailInternal, Message: "an internal error occurred", Retryable: true}
	}
	body.NextSpecific = body.Next != ""
	if body.Next == "" {
		body.Next = backend.Recovery[body.Code]
	}
	return body
}

// notFoundMessage says what is missing, with the id only when it looks
// like one of ours: it is the caller's input and may be anything (a path).
func notFoundMessage(nf *backend.NotFound) string {
	if idShape.MatchString(nf.ID) {
		return "no " + nf.Kind + " " + nf.ID
	}
	return "no such " + nf.Kind
}

var idShape = regexp.MustCompile(`^[a-z]{2,4}_[0-9a-z]{8,40}$`)

// HTTPStatus is the status code an error body travels with over HTTP.
func (e ErrorBody) HTTPStatus() int {
	switch e.Code {
	case backend.CodeNotFound:
		return 404
	case backend.CodeInvalidInput, backend.FailOutsideAllowlist:
		return 400
	case backend.CodeUnauthorized:
		return 401
	case backend.FailPermissionDenied:
		return 403
	case backend.CodeWorkspaceExists:
		return 409
	case backend.CodeConflict, backend.CodeActiveRunExists, backend.CodeApprovalAlreadyResolved,
		backend.CodeApprovalStale, backend.CodeWorktreeUnsaved, backend.CodeWorkspaceMissing:
		return 409
	}
	return 500
}
