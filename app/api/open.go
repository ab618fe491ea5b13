package api

import (
	"strings"
	"sync"
)

// OpenRequest is what the window was asked to show: a pending approval
// (`agenthub window --approval ID`, or the same from a second launch while
// the window runs). Empty when there is nothing to show.
type OpenRequest struct {
	ApprovalID string `json:"approvalId,omitempty"`
	// ArtifactsRunID: show this run's artifacts (`agenthub window
	// --artifacts RUN`, issue 18).
	ArtifactsRunID string `json:"artifactsRunId,omitempty"`
}

// opener holds the latest open request until the frontend takes it.
type opener struct {
	mu  sync.Mutex
	req OpenRequest
}

// RequestOpen asks the frontend to show an approval; the window then tells
// the page to take it (TakeOpen).
func (c *Core) RequestOpen(r OpenRequest) {
	c.openReq.mu.Lock()
	c.openReq.req = r
	c.openReq.mu.Unlock()
}

// TakeOpen returns the pending open request once, and clears it: the page
// asks at start and whenever the window says a new one arrived.
func (s *SystemAPI) TakeOpen() (OpenRequest, error) {
	s.core.openReq.mu.Lock()
	defer s.core.openReq.mu.Unlock()
	r := s.core.openReq.req
	s.core.openReq.req = OpenRequest{}
	return r, nil
}

// OpenRequestFromArgs reads an open request from a launch's arguments
// (--approval ID or --approval=ID), as a second launch forwards them.
func OpenRequestFromArgs(args []string) (OpenRequest, bool) {
	for i, a := range args {
		switch {
		case a == "--approval" || a == "-approval":
			if i+1 < len(args) {
				return OpenRequest{ApprovalID: args[i+1]}, true
			}
		case strings.HasPrefix(a, "--approval="), strings.HasPrefix(a, "-approval="):
			return OpenRequest{ApprovalID: a[strings.Index(a, "=")+1:]}, true
		case a == "--artifacts" || a == "-artifacts":
			if i+1 < len(args) {
				return OpenRequest{ArtifactsRunID: args[i+1]}, true
			}
		case strings.HasPrefix(a, "--artifacts="), strings.HasPrefix(a, "-artifacts="):
			return OpenRequest{ArtifactsRunID: a[strings.Index(a, "=")+1:]}, true
		}
	}
	return OpenRequest{}, false
}
