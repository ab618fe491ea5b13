package acp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/backend/scrub"
	"agenthub/workspace"
)

// client is AgentHub's side of ACP, called by the SDK on its own
// goroutines. File reads are served at once from the workspace's rooted
// file API (paths outside it, and secret files, are refused); everything
// else waits for the engine: a permission request or a write becomes a
// call the gate decides.
type client struct{ s *session }

var _ sdk.Client = client{}

// ACP error codes AgentHub answers with.
const (
	codeNotFound = -32002 // resource not found (Gemini CLI turns it into ENOENT)
	codeRefused  = -32603
)

func refused(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: codeRefused, Message: "AgentHub: " + fmt.Sprintf(format, args...)}
}

// ReadTextFile serves a read of a workspace file, recorded as
// run.file.read. Line and limit select lines, 1-based, as ACP says.
func (c client) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	s := c.s
	rel, err := s.resolve(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	w, err := workspace.Open(s.Root)
	if err != nil {
		return sdk.ReadTextFileResponse{}, refused("the workspace cannot be opened")
	}
	defer w.Close()
	data, err := w.ReadFile(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return sdk.ReadTextFileResponse{}, &sdk.RequestError{Code: codeNotFound, Message: "Resource not found: " + rel}
	case err != nil:
		return sdk.ReadTextFileResponse{}, refused("%s cannot be read: %s", rel, s.Scrub(err.Error()))
	}
	s.event(backend.EvFileRead, map[string]any{"tool": ToolRead, "path": rel, "runtime": s.cfg.name()})
	return sdk.ReadTextFileResponse{Content: lines(string(data), p.Line, p.Limit)}, nil
}

// holds reports whether rel already has exactly this content.
func (s *session) holds(rel, content string) bool {
	w, err := workspace.Open(s.Root)
	if err != nil {
		return false
	}
	defer w.Close()
	data, err := w.ReadFile(rel)
	return err == nil && string(data) == content
}

// lines cuts text to limit lines from line (1-based); nil means all.
func lines(text string, line, limit *int) string {
	if line == nil && limit == nil {
		return text
	}
	all := strings.SplitAfter(text, "\n")
	from := 0
	if line != nil && *line > 1 {
		from = min(*line-1, len(all))
	}
	to := len(all)
	if limit != nil && *limit >= 0 {
		to = min(from+*limit, len(all))
	}
	return strings.Join(all[from:to], "")
}

// WriteTextFile applies a write through the gate: a write the reviewer
// already approved (as the change of a permission request) is applied at
// once, exactly as approved; any other write is shown as a staged patch
// and waits for its decision.
func (c client) WriteTextFile(ctx context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	s := c.s
	rel, err := s.resolve(p.Path)
	if err != nil {
		return sdk.WriteTextFileResponse{}, err
	}
	if pl := s.takePlan(rel, p.Content); pl != nil {
		return sdk.WriteTextFileResponse{}, s.applyPlan(pl)
	}
	if s.holds(rel, p.Content) {
		return sdk.WriteTextFileResponse{}, nil // nothing to change, nothing to approve
	}
	wr := s.newWrite(rel, p.Content)
	select {
	case err := <-wr.answer:
		return sdk.WriteTextFileResponse{}, err
	case <-ctx.Done():
		wr.cancel()
		return sdk.WriteTextFileResponse{}, refused("the write was cancelled")
	}
}

// RequestPermission puts the request through the gate and answers with the
// option the reviewer's decision maps to.
func (c client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	pm := c.s.newPermission(p)
	select {
	case out := <-pm.answer:
		return sdk.RequestPermissionResponse{Outcome: out}, nil
	case <-ctx.Done():
		pm.cancel()
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
}

// SessionUpdate streams the agent's text as deltas and its tool calls as
// events; other updates (commands, modes, plans, thoughts) are kept only in
// the raw output.
func (c client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	s := c.s
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil && t.Text != "" {
			s.Mu.Lock()
			s.Push(item{kind: itemDelta, text: t.Text})
			s.Mu.Unlock()
		}
	case u.ToolCall != nil:
		tc := u.ToolCall
		s.toolCall(string(tc.ToolCallId), tc.Status, tc.Title, string(tc.Kind), tc.Content, tc.Locations, true)
	case u.ToolCallUpdate != nil:
		tc := u.ToolCallUpdate
		var status sdk.ToolCallStatus
		if tc.Status != nil {
			status = *tc.Status
		}
		title, kind := "", ""
		if tc.Title != nil {
			title = *tc.Title
		}
		if tc.Kind != nil {
			kind = string(*tc.Kind)
		}
		s.toolCall(string(tc.ToolCallId), status, title, kind, tc.Content, tc.Locations, false)
	}
	return nil
}

// resolve turns a path the agent sent into a workspace-relative one. Paths
// outside the workspace and secret files are refused.
func (s *session) resolve(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", refused("paths must be absolute (ACP); %q is not", scrub.Clip(filepath.Base(p), 100))
	}
	rel, ok := agentpath.Rel([]string{s.Root, s.RealRoot}, p)
	if !ok {
		return "", refused("the path is outside the workspace; only paths inside it can be used")
	}
	w, err := workspace.Open(s.Root)
	if err != nil {
		return "", refused("the workspace cannot be opened")
	}
	defer w.Close()
	rel, err = w.Resolve(rel)
	if err != nil {
		return "", refused("%s", s.Scrub(err.Error()))
	}
	if ok, pat := agentpath.Secret(s.Root, rel); ok {
		return "", refused("%s is a secret file (%s); agents never access secret files", rel, pat)
	}
	return rel, nil
}

// event queues an event for Stream to record.
func (s *session) event(typ backend.EventType, payload any) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Push(item{kind: itemEvent, evType: typ, payload: payload})
}

// toolCall records the state of one of the agent's tool calls and queues
// an event when it starts or its status changes.
func (s *session) toolCall(id string, status sdk.ToolCallStatus, title, kind string, content []sdk.ToolCallContent,
	locs []sdk.ToolCallLocation, first bool) {
	text := s.contentText(content)
	s.Mu.Lock()
	defer s.Mu.Unlock()
	c, ok := s.calls[id]
	if !ok {
		c = &agentCall{changed: make(chan struct{})}
		s.calls[id] = c
	}
	changed := first || (status != "" && status != c.status)
	if status != "" {
		c.status = status
	}
	if text != "" {
		c.text = text
	}
	close(c.changed)
	c.changed = make(chan struct{})
	if !changed {
		return
	}
	payload := map[string]any{"runtime": s.cfg.name(), "toolCallId": id, "status": string(c.status)}
	if title != "" {
		payload["title"] = scrub.Clip(s.Scrub(title), 200)
	}
	if kind != "" {
		payload["kind"] = kind
	}
	if paths := s.locations(locs); len(paths) > 0 {
		payload["paths"] = paths
	}
	if text != "" {
		payload["text"] = scrub.Clip(text, 2000)
	}
	s.Push(item{kind: itemEvent, evType: EvToolCall, payload: payload})
}

// contentText is a tool call's content as text: text blocks as they are,
// diffs named by their path.
func (s *session) contentText(content []sdk.ToolCallContent) string {
	var parts []string
	for _, c := range content {
		switch {
		case c.Content != nil && c.Content.Content.Text != nil:
			parts = append(parts, c.Content.Content.Text.Text)
		case c.Diff != nil:
			rel, ok := agentpath.Rel([]string{s.Root, s.RealRoot}, c.Diff.Path)
			if !ok {
				rel = "(outside the workspace)"
			}
			parts = append(parts, "diff of "+rel)
		}
	}
	return s.Scrub(strings.Join(parts, "\n"))
}

// locations are the workspace-relative paths of a tool call's locations;
// one outside the workspace is named so, never by its path.
func (s *session) locations(locs []sdk.ToolCallLocation) []string {
	var out []string
	for _, l := range locs {
		if rel, ok := agentpath.Rel([]string{s.Root, s.RealRoot}, l.Path); ok {
			out = append(out, rel)
		} else {
			out = append(out, "(outside the workspace)")
		}
	}
	return out
}
