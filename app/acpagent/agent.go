package acpagent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/workspace"
)

// Config is what an ACP connection serves.
type Config struct {
	// Core is the engine's core (a view of it when the command runs inside
	// the engine): every run starts, streams and is decided there.
	Core *api.Core
	// Profile runs each prompt; "" is the default profile.
	Profile string
	Version string
	Log     *slog.Logger
	// CancelWait bounds how long a cancelled prompt waits for its run to
	// end before it answers anyway; 0 = 60 s.
	CancelWait time.Duration
}

// Agent is one ACP connection's agent: its sessions and their runs.
type Agent struct {
	cfg  Config
	conn *acp.AgentSideConnection

	mu       sync.Mutex
	sessions map[string]*session
}

// session is an ACP session: an AgentHub session on one workspace, created
// with the first run of the session; each prompt is one run of it.
type session struct {
	id   string
	root string // the cwd the editor gave, the workspace's directory
	ws   backend.Workspace

	mu      sync.Mutex // one prompt at a time
	hubID   string     // the AgentHub session, once a run started it
	running bool
}

var (
	_ acp.Agent       = (*Agent)(nil)
	_ acp.AgentLoader = (*Agent)(nil)
)

// Serve speaks ACP on in and out until the editor closes its end or ctx
// ends. Runs a prompt started go on in the engine when the editor goes away
// mid-run: only session/cancel cancels a run.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.CancelWait == 0 {
		cfg.CancelWait = 60 * time.Second
	}
	a := &Agent{cfg: cfg, sessions: map[string]*session{}}
	// The connection starts reading as it is made, before a.conn and its
	// logger are set; nothing is read until they are (the race detector
	// saw a handler read both while they were written).
	gate := &gatedReader{r: in, open: make(chan struct{})}
	a.conn = acp.NewAgentSideConnection(a, out, gate)
	a.conn.SetLogger(cfg.Log)
	close(gate.open)
	select {
	case <-a.conn.Done():
		return nil
	case <-ctx.Done():
		return nil
	}
}

// gatedReader reads nothing until open is closed.
type gatedReader struct {
	r    io.Reader
	open chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

// Initialize says what this agent does: sessions (loadable again once they
// ran a prompt) and prompts of text and resource links; no authentication
// (the engine is the user's own).
func (a *Agent) Initialize(ctx context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{
		ProtocolVersion:   acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{LoadSession: true},
		AgentInfo:         &acp.Implementation{Name: "agenthub", Title: acp.Ptr("AgentHub"), Version: a.cfg.Version},
		AuthMethods:       []acp.AuthMethod{},
	}, nil
}

// Authenticate has nothing to do: the engine is the user's own.
func (a *Agent) Authenticate(ctx context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

// NewSession opens a session on the allowlisted workspace the editor's cwd
// names; any other directory is refused with workspace_outside_allowlist
// and the command that adds it. The editor's MCP servers are not used: a
// run's tools are those of its AgentHub profile.
func (a *Agent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	ws, err := a.workspaceOf(p.Cwd)
	if err != nil {
		return acp.NewSessionResponse{}, requestError(err)
	}
	s := &session{id: "acp_" + randomHex(12), root: filepath.Clean(p.Cwd), ws: ws}
	a.mu.Lock()
	a.sessions[s.id] = s
	a.mu.Unlock()
	return acp.NewSessionResponse{SessionId: acp.SessionId(s.id)}, nil
}

// workspaceOf finds the allowlisted workspace whose directory is cwd.
func (a *Agent) workspaceOf(cwd string) (backend.Workspace, error) {
	if !filepath.IsAbs(cwd) {
		return backend.Workspace{}, &backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("cwd %q is not an absolute path", cwd),
			Next:    "Open the session with the absolute path of an allowlisted workspace as cwd."}
	}
	list, err := api.NewWorkspacesAPI(a.cfg.Core).List()
	if err != nil {
		return backend.Workspace{}, err
	}
	canon, _ := workspace.Canonical(cwd)
	for _, w := range list {
		if canon != "" && w.Path == canon {
			return w, nil
		}
	}
	next := "Add it to the allowlist first: agenthub workspace add " + cwd
	if len(list) == 0 {
		next = "The allowlist is empty, so every session is refused. " + next
	}
	return backend.Workspace{}, &backend.Error{Code: backend.FailOutsideAllowlist,
		Message: fmt.Sprintf("%s is not an allowlisted workspace", cwd), Next: next}
}

// Prompt runs the prompt as one AgentHub run of the session and streams it
// until it ends. A cancelled prompt cancels the run and answers
// "cancelled" once the run has ended.
func (a *Agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	s := a.session(string(p.SessionId))
	if s == nil {
		return acp.PromptResponse{}, requestError(&backend.Error{Code: backend.CodeNotFound,
			Message: fmt.Sprintf("no session %q on this connection", p.SessionId), Next: "Open one with session/new."})
	}
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return acp.PromptResponse{}, requestError(&backend.Error{Code: backend.CodeActiveRunExists,
			Message: "this session is already running a prompt", Next: "Wait for it to end, or cancel it."})
	}
	s.running = true
	hubID := s.hubID
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.running = false; s.mu.Unlock() }()

	run, err := api.NewRunsAPI(a.cfg.Core).Start(api.StartRun{WorkspaceID: s.ws.ID, SessionID: hubID,
		Profile: a.cfg.Profile, Task: promptText(s.root, p.Prompt)})
	if err != nil {
		return acp.PromptResponse{}, requestError(err)
	}
	s.mu.Lock()
	first := s.hubID == ""
	s.hubID = run.SessionID
	s.mu.Unlock()
	if first {
		if err := a.saveLink(s, run.SessionID); err != nil {
			a.cfg.Log.Warn("ACP session not kept: it cannot be loaded again", "session", s.id, "err", err)
		}
	}
	t := &turn{a: a, s: s, runID: run.ID, m: newMapper(s.root), asks: map[string]context.CancelFunc{}}
	resp, err := t.follow(ctx)
	if err == nil {
		// The run behind the turn, for an editor that links to it
		// (agenthub runs show RUN, the window).
		resp.Meta = map[string]any{"agenthub": map[string]string{"runId": run.ID, "sessionId": run.SessionID}}
	}
	return resp, err
}

// Cancel needs nothing more: the connection cancels the prompt's context,
// and the prompt cancels its run.
func (a *Agent) Cancel(ctx context.Context, p acp.CancelNotification) error { return nil }

// The methods below belong to capabilities this agent does not advertise
// (closing, listing, resuming, modes and config options of sessions).

func (a *Agent) CloseSession(ctx context.Context, p acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
}

func (a *Agent) ListSessions(ctx context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (a *Agent) ResumeSession(ctx context.Context, p acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (a *Agent) SetSessionConfigOption(ctx context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

func (a *Agent) SetSessionMode(ctx context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetMode)
}

func (a *Agent) session(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// turn follows one prompt's run.
type turn struct {
	a     *Agent
	s     *session
	runID string
	m     *mapper

	mu        sync.Mutex
	asks      map[string]context.CancelFunc // open permission requests by approval id
	cancelled bool                          // the run was cancelled from here
	failure   error                         // a decision the engine refused
}

// follow streams the run's events to the editor until the run ends.
func (t *turn) follow(ctx context.Context) (acp.PromptResponse, error) {
	// The subscription outlives a cancelled prompt: the run's last events
	// (its cancellation) still go to the editor before the answer.
	subCtx, stop := context.WithCancel(context.Background())
	defer stop()
	defer t.closeAsks()
	core := t.a.cfg.Core
	events, err := core.Subscribe(subCtx, t.runID, 0)
	if err != nil {
		return acp.PromptResponse{}, requestError(err)
	}
	done := ctx.Done()
	var deadline <-chan time.Time
	for {
		select {
		case ev, open := <-events:
			if !open {
				return acp.PromptResponse{}, requestError(fmt.Errorf("follow run %s: the event stream ended early", t.runID))
			}
			batch := []backend.Event{ev}
			if ev.Type == backend.EvSystemGap {
				if batch, err = t.refill(ev); err != nil {
					return acp.PromptResponse{}, requestError(err)
				}
			}
			for _, ev := range batch {
				if resp, end, err := t.handle(ctx, ev); end {
					return resp, err
				}
			}
		case <-done:
			done = nil
			select {
			case <-t.a.conn.Done():
				// The editor went away: the run goes on in the engine,
				// where its approvals wait for the window or the CLI.
				t.a.cfg.Log.Info("ACP client disconnected; the run goes on", "run", t.runID)
				return acp.PromptResponse{}, ctx.Err()
			default:
			}
			t.cancelRun()
			deadline = time.After(t.a.cfg.CancelWait)
		case <-deadline:
			return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		}
	}
}

// handle sends one event's updates and reacts to it; end is true with the
// prompt's answer once the run has ended.
func (t *turn) handle(ctx context.Context, ev backend.Event) (acp.PromptResponse, bool, error) {
	for _, u := range t.m.updates(ev) {
		t.send(u)
	}
	switch ev.Type {
	case backend.EvApprovalRequested:
		var a backend.ApprovalRequest
		if json.Unmarshal(ev.Payload, &a) == nil && a.ID != "" && ctx.Err() == nil {
			t.ask(ctx, a)
		}
	case backend.EvApprovalResolved:
		var p resolvedPayload
		if json.Unmarshal(ev.Payload, &p) == nil {
			t.closeAsk(p.ApprovalID) // decided elsewhere (the window): withdraw the question
		}
	case backend.EvRunCompleted:
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, true, nil
	case backend.EvRunCancelled:
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, true, nil
	case backend.EvRunFailed:
		t.mu.Lock()
		cancelled, failure := t.cancelled, t.failure
		t.mu.Unlock()
		if cancelled {
			return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, true, nil
		}
		var p backend.RunEnded
		_ = json.Unmarshal(ev.Payload, &p)
		if failure != nil {
			return acp.PromptResponse{}, true, requestError(failure)
		}
		return acp.PromptResponse{}, true, requestError(&backend.Error{Code: p.Code, Message: fmt.Sprintf("run %s failed: %s", t.runID, p.Message),
			Next: firstOf(p.Next, p.Recovery)})
	}
	return acp.PromptResponse{}, false, nil
}

// ask puts one approval to the editor without blocking the event stream:
// the run may go on with other calls, and a decision taken in the window
// withdraws the question.
func (t *turn) ask(ctx context.Context, a backend.ApprovalRequest) {
	t.mu.Lock()
	if _, open := t.asks[a.ID]; open {
		t.mu.Unlock()
		return
	}
	askCtx, cancel := context.WithCancel(ctx)
	t.asks[a.ID] = cancel
	t.mu.Unlock()
	req := acp.RequestPermissionRequest{SessionId: acp.SessionId(t.s.id), ToolCall: t.m.approvalToolCall(a),
		Options: permissionOptions(a)}
	go func() {
		defer t.closeAsk(a.ID)
		// An answer that is not one of the options is asked again: a
		// buggy client must not leave the run waiting unseen.
		for attempt := 1; ; attempt++ {
			resp, err := t.a.conn.RequestPermission(askCtx, req)
			if err != nil {
				if askCtx.Err() == nil {
					t.a.cfg.Log.Warn("ACP permission request failed; the approval stays pending", "approval", a.ID, "err", err)
				}
				return
			}
			d, cancelled, err := decision(a, resp.Outcome)
			if cancelled {
				// ACP answers "cancelled" only for a cancelled prompt turn.
				t.cancelRun()
				return
			}
			if err != nil && attempt < maxAsks {
				t.refused(a, err)
				continue
			}
			if err == nil {
				_, err = api.NewApprovalsAPI(t.a.cfg.Core).Decide(d)
			}
			if err != nil && api.ErrorOf(err).Code != backend.CodeApprovalAlreadyResolved {
				t.a.cfg.Log.Warn("ACP decision refused", "approval", a.ID, "err", err)
				t.mu.Lock()
				t.failure = err
				t.mu.Unlock()
				t.refused(a, err)
			}
			return
		}
	}()
}

// maxAsks bounds how often one approval is put to the editor again after
// an answer that was not one of its options.
const maxAsks = 3

// refused tells the editor why its answer changed nothing.
func (t *turn) refused(a backend.ApprovalRequest, err error) {
	body := api.ErrorOf(err)
	t.send(acp.UpdateAgentMessageText(fmt.Sprintf("\n\nAgentHub refused the decision on %q: %s (%s)\nNext: %s",
		a.Title, body.Message, body.Code, body.Next)))
}

func (t *turn) closeAsk(id string) {
	t.mu.Lock()
	cancel := t.asks[id]
	delete(t.asks, id)
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (t *turn) closeAsks() {
	t.mu.Lock()
	asks := t.asks
	t.asks = map[string]context.CancelFunc{}
	t.mu.Unlock()
	for _, cancel := range asks {
		cancel()
	}
}

// cancelRun cancels the run once, through the engine's cancel (so it is
// audited like any other).
func (t *turn) cancelRun() {
	t.mu.Lock()
	already := t.cancelled
	t.cancelled = true
	t.mu.Unlock()
	if already {
		return
	}
	if _, err := api.NewRunsAPI(t.a.cfg.Core).Cancel(t.runID); err != nil {
		t.a.cfg.Log.Warn("ACP cancel: the run could not be cancelled", "run", t.runID, "err", err)
	}
}

// send delivers one update; a failure means the editor went away, which
// the prompt's context reports.
func (t *turn) send(u acp.SessionUpdate) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := t.a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: acp.SessionId(t.s.id), Update: u}); err != nil {
		t.a.cfg.Log.Debug("ACP session/update not delivered", "err", err)
	}
}

// refill reads back, in order, the committed events a slow follower
// missed (a system.gap).
func (t *turn) refill(gap backend.Event) ([]backend.Event, error) {
	var g backend.Gap
	if err := json.Unmarshal(gap.Payload, &g); err != nil {
		return nil, fmt.Errorf("read a gap event: %w", err)
	}
	return api.NewRunsAPI(t.a.cfg.Core).Events(t.runID, g.FromSequence-1, int(g.ToSequence-g.FromSequence+1))
}

// promptText is the run's task: the prompt's text, with each resource the
// editor linked or embedded named (and embedded text included), since a
// run reads the workspace through its own tools. Editors link files by
// absolute file:// URIs; the task names them relative to the workspace
// root (a file outside it by its link's name), so no machine path is
// stored with the run.
func promptText(root string, blocks []acp.ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			parts = append(parts, "@"+resourceName(root, b.ResourceLink.Uri, b.ResourceLink.Name))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("@%s:\n%s", resourceName(root, r.Uri, path.Base(r.Uri)), fence(r.Text)))
		}
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// resourceName is how the task names a linked resource: a file in the
// workspace by its relative path, another file by name, anything else
// (an https link) as it is.
func resourceName(root, uri, name string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return uri
	}
	if rel, err := filepath.Rel(root, filepath.Clean(u.Path)); err == nil && rel != ".." &&
		!strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel) {
		return rel
	}
	if name == "" || strings.Contains(name, "/") {
		name = path.Base(u.Path)
	}
	return name
}

// requestError is an AgentHub error as a JSON-RPC error: the message says
// what failed and its code, data carries the stable code and the next step.
func requestError(err error) *acp.RequestError {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return re
	}
	body := api.ErrorOf(err)
	code := -32603 // internal error
	switch body.Code {
	case backend.CodeInvalidInput, backend.FailOutsideAllowlist, backend.CodeNotFound:
		code = -32602 // invalid params
	}
	msg := fmt.Sprintf("%s (%s)", body.Message, body.Code)
	if body.Next != "" {
		msg += ". Next: " + body.Next
	}
	return &acp.RequestError{Code: code, Message: msg,
		Data: map[string]string{"code": string(body.Code), "message": body.Message, "next": body.Next}}
}

func firstOf(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
