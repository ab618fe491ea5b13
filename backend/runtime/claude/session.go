package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"agenthub/backend"
	"agenthub/backend/proc"
	"agenthub/backend/redact"
	"agenthub/backend/runtime/agentbin"
	"agenthub/backend/runtime/agentproc"
	"agenthub/backend/runtime/keyproxy"
	"agenthub/backend/runtime/rawlog"
)

// session is one Claude Code process serving one run. The model's Stream
// and the proxy tools meet here: the reader (proc's output goroutine) turns
// stdout lines into queued items and tool results; Stream consumes the
// queue; a proxy tool's Execute answers a permission request and waits for
// its tool result.
type session struct {
	agentproc.Session[item]
	cfg Config

	wmu sync.Mutex // one writer on stdin at a time

	// Under Mu, besides the shared core's state:
	results map[string]toolResult  // by tool_use_id
	perms   map[string]*permission // by call id
	init    initInfo
}

// itemKind is what Stream takes from the queue.
type itemKind int

const (
	itemDelta itemKind = iota
	itemText
	itemPermission
	itemResult
	itemExit
	itemFail // the session could not start
)

type item struct {
	kind   itemKind
	text   string
	perm   *permission
	result result
	err    error
}

// permission is one can_use_tool request, proxied to the engine as a call.
type permission struct {
	callID    string
	requestID string
	tool      string
	toolUseID string
	input     json.RawMessage // as Claude Code sent it: absolute paths
	sent      bool            // handed to the engine as a call
	answered  bool
}

func newSession(cfg Config, bin agentbin.Info, task string) *session {
	s := &session{cfg: cfg, results: map[string]toolResult{}, perms: map[string]*permission{}}
	s.Init("cc", "claude", bin, task)
	return s
}

// startCallID is the id of the call that starts the session.
func (s *session) startCallID() string { return "claude-" + s.ID + "-start" }

// start launches the CLI in the workspace root and sends the task. The
// process lives until the turn's result, a cancel (through Track) or stop.
func (s *session) start(env backend.ToolEnv) error {
	if err := s.SetRoot(env); err != nil {
		return err
	}
	path := proc.LoginPath(context.Background())
	ep, err := s.endpoint()
	if err != nil {
		return err
	}
	environ := s.cfg.environ(path, ep)
	s.Red = redact.NewFromEnviron(environ, "ANTHROPIC_API_KEY")
	s.Red.Add(s.cfg.APIKey)
	if s.Keys != nil {
		// The token opens only this proxy, but echoed it still must not
		// be stored: every redactor masks it.
		redact.Register(s.Keys.Token())
	}
	raw, err := rawlog.Open(s.cfg.rawDir(), s.ID)
	if err != nil {
		s.Keys.Close()
		return err
	}
	s.Raw = raw
	p, err := agentproc.Start(agentproc.Spec{Label: "Claude Code", Path: s.Bin.Path, Args: s.cfg.args(), Dir: s.Root,
		Env: environ, Stdin: true, Raw: raw, Lines: s.onLine})
	if err != nil {
		s.Keys.Close()
		return err
	}
	s.P = p
	if env.Track != nil {
		env.Track(stopper{s})
	}
	go s.WatchExit(item{kind: itemExit}, nil)
	init := map[string]any{"type": "control_request", "request_id": "agenthub_init",
		"request": map[string]any{"subtype": "initialize", "hooks": nil}}
	user := map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": s.Task}}}}
	if err := s.write(init); err != nil {
		return err
	}
	return s.write(user)
}

// endpoint starts the session's key proxy when the profile has a key: the
// CLI gets the proxy's address and a token, never the key.
func (s *session) endpoint() (endpoint, error) {
	if s.cfg.APIKey == "" {
		return s.cfg.direct(), nil
	}
	kp, err := keyproxy.Start(s.cfg.upstream(), s.cfg.APIKey, keyproxy.AnthropicKey)
	if err != nil {
		return endpoint{}, &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "key_proxy",
			Message: "AgentHub could not start the key proxy for Claude Code", Err: err,
			Next: "Check the profile's base_url: it must be an http or https URL."}
	}
	s.Keys = kp
	return endpoint{url: kp.URL(), key: kp.Token()}, nil
}

// write sends one JSON line to the CLI.
func (s *session) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode a message for Claude Code: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.P.Stdin().Write(append(b, '\n')); err != nil {
		return &backend.Error{Code: backend.FailRuntimeUnavailable, Message: "Claude Code stopped reading its input", Err: err}
	}
	return nil
}

// tell sends the agent a note as a user message; the CLI adds it to the
// conversation at its next request.
func (s *session) tell(text string) {
	_ = s.write(map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}}})
}

// onLine is the reader: it runs on proc's output goroutine, in line order.
func (s *session) onLine(b []byte, cut bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Lines++
	if cut {
		s.CutLine()
		return
	}
	l := parseLine(b)
	switch l.Kind {
	case kindInvalid, kindUnknown:
		s.Problem(l.Problem, b)
	case kindInit:
		s.init = l.Init
	case kindDelta:
		if !l.Sub {
			s.Queue = append(s.Queue, item{kind: itemDelta, text: l.Delta})
		}
	case kindAssistant:
		for _, t := range l.Texts {
			if !l.Sub && t != "" {
				s.Queue = append(s.Queue, item{kind: itemText, text: t})
			}
		}
	case kindToolResult:
		for _, r := range l.Results {
			s.results[r.ToolUseID] = r
		}
	case kindControl:
		s.control(l.Control)
	case kindResult:
		s.Queue = append(s.Queue, item{kind: itemResult, result: l.Result})
	}
	s.Signal()
}

// control handles a control_request; s.Mu is held. Only can_use_tool is
// served; every other request is answered with an error, as the protocol
// allows, so the CLI never waits on it.
func (s *session) control(c control) {
	if c.Subtype != "can_use_tool" {
		reply := map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error",
			"request_id": c.RequestID, "error": "AgentHub does not serve " + c.Subtype}}
		go func() { _ = s.write(reply) }()
		return
	}
	p := &permission{callID: "claude-" + c.RequestID, requestID: c.RequestID, tool: c.ToolName,
		toolUseID: c.ToolUseID, input: c.Input}
	s.perms[p.callID] = p
	live.AddCall(p.callID, s)
	s.Queue = append(s.Queue, item{kind: itemPermission, perm: p})
}

func (s *session) pendingDiags() bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return len(s.Diags) > 0
}

// emitDiags records pending problems as schema.validation_failed events.
func (s *session) emitDiags(env backend.ToolEnv) { s.takeDiagsFor(env) }

// permission returns the request a call proxies.
func (s *session) permission(callID string) (*permission, bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	p, ok := s.perms[callID]
	return p, ok
}

// answer sends the one answer a permission request gets. Only once-scoped
// answers exist: no permission update is ever sent (AP14).
func (s *session) answer(p *permission, response map[string]any) error {
	s.Mu.Lock()
	if p.answered {
		s.Mu.Unlock()
		return errors.New("this Claude Code request was already answered")
	}
	p.answered = true
	s.Mu.Unlock()
	return s.write(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success",
		"request_id": p.requestID, "response": response}})
}

func (s *session) allow(p *permission, input json.RawMessage) error {
	return s.answer(p, map[string]any{"behavior": "allow", "updatedInput": input})
}

func (s *session) deny(p *permission, message string) error {
	return s.answer(p, map[string]any{"behavior": "deny", "message": message})
}

// waitResult waits for the tool result of a tool use the CLI ran.
func (s *session) waitResult(ctx context.Context, toolUseID string) (toolResult, error) {
	for {
		s.Mu.Lock()
		r, ok := s.results[toolUseID]
		exited, wait := s.Exited, s.Changed
		s.Mu.Unlock()
		switch {
		case ok:
			return r, nil
		case exited:
			return toolResult{}, errors.New("Claude Code exited before it reported the tool's result")
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return toolResult{}, ctx.Err()
		}
	}
}

// closeGrace bounds how long a finished CLI may take to exit after its
// input is closed.
const closeGrace = 10 * time.Second

// finish ends a session whose turn is over: the CLI exits when its input
// closes; one that does not is stopped.
func (s *session) finish() {
	agentproc.Finish(s.P, &s.wmu, closeGrace)
	s.drop()
}

// stop ends the session at once (cancel, failure).
func (s *session) stop() {
	if s.P != nil {
		_ = s.P.Stop(2 * time.Second)
	}
	s.drop()
}

// stopper is what the run tracks: a cancel, the hard timeout or shutdown
// stops the whole process group and forgets the session.
type stopper struct{ s *session }

func (st stopper) Stop(grace time.Duration) error {
	defer st.s.drop()
	return st.s.P.Stop(grace)
}

// drop forgets the session and closes its key proxy.
func (s *session) drop() {
	live.Remove(s.ID, s)
	s.Keys.Close()
}
