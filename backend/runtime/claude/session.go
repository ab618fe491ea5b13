package claude

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"agenthub/backend"
	"agenthub/backend/proc"
	"agenthub/backend/redact"
	"agenthub/backend/runtime/agentbin"
	"agenthub/backend/runtime/agentproc"
	"agenthub/backend/runtime/keyproxy"
	"agenthub/backend/runtime/rawlog"
	"agenthub/backend/scrub"
)

// session is one Claude Code process serving one run. The model's Stream
// and the proxy tools meet here: the reader (proc's output goroutine) turns
// stdout lines into queued items and tool results; Stream consumes the
// queue; a proxy tool's Execute answers a permission request and waits for
// its tool result.
type session struct {
	id   string
	cfg  Config
	bin  agentbin.Info
	task string

	// Set once by start, before any line is read.
	root, realRoot string // absolute; never shown
	runID          string
	p              *proc.Process
	raw            *rawlog.Log
	red            *redact.Redactor
	keys           *keyproxy.Proxy // nil without a key

	wmu sync.Mutex // one writer on stdin at a time

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change
	queue    []item
	results  map[string]toolResult  // by tool_use_id
	perms    map[string]*permission // by call id
	diags    []agentproc.Diag       // problems not yet emitted as events
	invalid  int                    // lines that could not be used, in all
	lines    int
	init     initInfo
	exited   bool
	exitCode int
	stderr   string // scrubbed and redacted tail, once exited
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
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &session{id: "cc" + hex.EncodeToString(b[:]), cfg: cfg, bin: bin, task: task,
		changed: make(chan struct{}), results: map[string]toolResult{}, perms: map[string]*permission{}}
}

// startCallID is the id of the call that starts the session.
func (s *session) startCallID() string { return "claude-" + s.id + "-start" }

// start launches the CLI in the workspace root and sends the task. The
// process lives until the turn's result, a cancel (through Track) or stop.
func (s *session) start(env backend.ToolEnv) error {
	if env.WorkspaceRoot == "" {
		return errors.New("the run has no workspace root")
	}
	s.root, s.runID = env.WorkspaceRoot, env.RunID
	s.realRoot, _ = filepath.EvalSymlinks(env.WorkspaceRoot)
	path := proc.LoginPath(context.Background())
	ep, err := s.endpoint()
	if err != nil {
		return err
	}
	environ := s.cfg.environ(path, ep)
	s.red = redact.NewFromEnviron(environ, "ANTHROPIC_API_KEY")
	s.red.Add(s.cfg.APIKey)
	if s.keys != nil {
		// The token opens only this proxy, but echoed it still must not
		// be stored: every redactor masks it.
		redact.Register(s.keys.Token())
	}
	raw, err := rawlog.Open(s.cfg.rawDir(), s.id)
	if err != nil {
		s.keys.Close()
		return err
	}
	s.raw = raw
	p, err := agentproc.Start(agentproc.Spec{Label: "Claude Code", Path: s.bin.Path, Args: s.cfg.args(), Dir: s.root,
		Env: environ, Stdin: true, Raw: raw, Lines: s.onLine})
	if err != nil {
		s.keys.Close()
		return err
	}
	s.p = p
	if env.Track != nil {
		env.Track(stopper{s})
	}
	go s.watchExit()
	init := map[string]any{"type": "control_request", "request_id": "agenthub_init",
		"request": map[string]any{"subtype": "initialize", "hooks": nil}}
	user := map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": s.task}}}}
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
	s.keys = kp
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
	if _, err := s.p.Stdin().Write(append(b, '\n')); err != nil {
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

// watchExit records the end of the process and wakes every waiter.
func (s *session) watchExit() {
	res, _ := s.p.Wait()
	tail := agentproc.Tail(res.Stderr)
	s.mu.Lock()
	s.exited, s.exitCode = true, res.ExitCode
	s.stderr = s.scrub(tail)
	s.queue = append(s.queue, item{kind: itemExit})
	s.signal()
	s.mu.Unlock()
	s.raw.Close()
}

// signal wakes waiters; s.mu is held.
func (s *session) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// onLine is the reader: it runs on proc's output goroutine, in line order.
func (s *session) onLine(b []byte, cut bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines++
	if cut {
		s.problem(fmt.Sprintf("a line longer than %d bytes was cut", proc.DefaultMaxLine), nil)
		return
	}
	l := parseLine(b)
	switch l.Kind {
	case kindInvalid, kindUnknown:
		s.problem(l.Problem, b)
	case kindInit:
		s.init = l.Init
	case kindDelta:
		if !l.Sub {
			s.queue = append(s.queue, item{kind: itemDelta, text: l.Delta})
		}
	case kindAssistant:
		for _, t := range l.Texts {
			if !l.Sub && t != "" {
				s.queue = append(s.queue, item{kind: itemText, text: t})
			}
		}
	case kindToolResult:
		for _, r := range l.Results {
			s.results[r.ToolUseID] = r
		}
	case kindControl:
		s.control(l.Control)
	case kindResult:
		s.queue = append(s.queue, item{kind: itemResult, result: l.Result})
	}
	s.signal()
}

// problem records an unusable line; s.mu is held.
func (s *session) problem(why string, b []byte) {
	s.invalid++
	d := agentproc.Diag{Runtime: "claude", Line: s.lines, Problem: why}
	if b != nil {
		d.Excerpt = scrub.Clip(s.scrub(string(b)), 200)
	}
	if len(s.diags) < agentproc.MaxDiags {
		s.diags = append(s.diags, d)
	}
	agentproc.Lost(s.p, s.invalid)
}

// control handles a control_request; s.mu is held. Only can_use_tool is
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
	s.queue = append(s.queue, item{kind: itemPermission, perm: p})
}

// scrub removes machine paths and secrets from text the CLI produced.
func (s *session) scrub(text string) string {
	return scrub.Session{Root: s.root, RealRoot: s.realRoot, Red: s.red}.String(text)
}

// pop takes the next queued item, or returns the channel that closes when
// there may be one.
func (s *session) pop() (item, bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return item{}, false, s.changed
	}
	it := s.queue[0]
	s.queue = s.queue[1:]
	return it, true, nil
}

// pushFront puts an item back to be taken first.
func (s *session) pushFront(it item) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append([]item{it}, s.queue...)
}

// takeDiags returns the problems not yet emitted.
func (s *session) takeDiags() []agentproc.Diag {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.diags
	s.diags = nil
	return d
}

func (s *session) pendingDiags() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.diags) > 0
}

// emitDiags records pending problems as schema.validation_failed events.
func (s *session) emitDiags(env backend.ToolEnv) { s.takeDiagsFor(env) }

// permission returns the request a call proxies.
func (s *session) permission(callID string) (*permission, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.perms[callID]
	return p, ok
}

// answer sends the one answer a permission request gets. Only once-scoped
// answers exist: no permission update is ever sent (AP14).
func (s *session) answer(p *permission, response map[string]any) error {
	s.mu.Lock()
	if p.answered {
		s.mu.Unlock()
		return errors.New("this Claude Code request was already answered")
	}
	p.answered = true
	s.mu.Unlock()
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
		s.mu.Lock()
		r, ok := s.results[toolUseID]
		exited, wait := s.exited, s.changed
		s.mu.Unlock()
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
	agentproc.Finish(s.p, &s.wmu, closeGrace)
	s.drop()
}

// stop ends the session at once (cancel, failure).
func (s *session) stop() {
	if s.p != nil {
		_ = s.p.Stop(2 * time.Second)
	}
	s.drop()
}

// stopper is what the run tracks: a cancel, the hard timeout or shutdown
// stops the whole process group and forgets the session.
type stopper struct{ s *session }

func (st stopper) Stop(grace time.Duration) error {
	defer st.s.drop()
	return st.s.p.Stop(grace)
}

// drop forgets the session and closes its key proxy.
func (s *session) drop() {
	live.Remove(s.id, s)
	s.keys.Close()
}
