package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"agenthub/backend"
	"agenthub/backend/patch"
	"agenthub/backend/proc"
	"agenthub/backend/redact"
	"agenthub/backend/runtime/agentbin"
	"agenthub/backend/runtime/agentproc"
	"agenthub/backend/runtime/keyproxy"
	"agenthub/backend/runtime/rawlog"
	"agenthub/backend/scrub"
)

// session is one Codex process serving one run. The model's Stream and
// the proxy tools meet here: the reader (proc's output goroutine) turns
// stdout lines into queued events and item states; Stream consumes the
// queue; a proxy tool's Execute answers an approval request and waits for
// the item it approved to complete.
type session struct {
	agentproc.Session[event]
	cfg Config

	wmu sync.Mutex // one writer on stdin at a time

	// Under Mu, besides the shared core's state:
	pending      map[string]chan line  // AgentHub's requests by id; nil channel: answer ignored
	nextID       int                   // of AgentHub's requests
	items        map[string]*itemState // by item id
	reqs         map[string]*request   // by call id
	thread       string
	execThread   string   // exec: the thread id, naming its rollout file
	execSeen     execSeen // exec: the actions the stream reported this turn
	turn         string
	turnDone     bool
	degraded     bool // a problem was recorded; runtime.degraded is emitted once
	nextObserved int
	usage        tokenTotals
	reported     tokenTotals // usage already handed to the engine
	lastErr      *turnError
}

// eventKind is what Stream takes from the queue.
type eventKind int

const (
	evDelta    eventKind = iota // agent text as it streams
	evText                      // a completed agent message
	evApproval                  // an approval request to put to the gate
	evObserved                  // a command or file change Codex made without asking
	evTurnDone                  // the turn ended
	evExit                      // the process exited
	evFail                      // the session could not start
)

type event struct {
	kind  eventKind
	text  string
	shown bool // evText: its deltas were streamed already
	req   *request
	item  threadItem
	turn  turn
	err   error
}

// itemState is what is known of one item of the turn.
type itemState struct {
	started threadItem
	done    *threadItem
	asked   bool // an approval request named it
}

// request is one approval request of Codex, proxied to the engine as one
// call (a command) or one call per file (a file change).
type request struct {
	rpcID    json.RawMessage // as Codex sent it
	key      string          // its text, in call ids and arguments
	method   string
	itemID   string
	cmd      commandApproval
	files    []fileArgs // file change: one per call, workspace-relative
	calls    []string
	approved map[int]patch.Proposal // file change: the approved proposal of each call
	sent     bool                   // handed to the engine as calls
	answered bool
	decision string
}

// handshakeTimeout bounds each request of the start-up handshake.
const handshakeTimeout = 2 * time.Minute

func newSession(cfg Config, bin agentbin.Info, task string) *session {
	s := &session{cfg: cfg, pending: map[string]chan line{}, items: map[string]*itemState{},
		reqs: map[string]*request{}}
	s.Init("cx", "codex", bin, task)
	return s
}

// startCallID is the id of the call that starts the session.
func (s *session) startCallID() string { return "codex-" + s.ID + "-start" }

// launch starts the CLI in the workspace root; the process lives until the
// turn ends, a cancel (through Track) or stop.
func (s *session) launch(env backend.ToolEnv, args []string, stdin bool, onLine func([]byte, bool)) error {
	if err := s.SetRoot(env); err != nil {
		return err
	}
	path := proc.LoginPath(context.Background())
	ep, err := s.endpoint()
	if err != nil {
		return err
	}
	environ := s.cfg.environ(path, ep)
	s.Red = redact.NewFromEnviron(environ, keyEnv)
	s.Red.Add(s.cfg.APIKey)
	if err := s.cfg.prepareHome(s.Bin.Path); err != nil {
		s.Keys.Close()
		return err
	}
	raw, err := rawlog.Open(s.cfg.rawDir(), s.ID)
	if err != nil {
		s.Keys.Close()
		return err
	}
	args = append(endpointArgs(ep), args...)
	s.Raw = raw
	p, err := agentproc.Start(agentproc.Spec{Label: "the Codex CLI", Path: s.Bin.Path, Args: args, Dir: s.Root,
		Env: environ, Stdin: stdin, Raw: raw, Lines: onLine, ModelURL: ep.url})
	if err != nil {
		s.Keys.Close()
		return err
	}
	s.P = p
	if env.Track != nil {
		env.Track(stopper{s})
	}
	go s.WatchExit(event{kind: evExit}, nil)
	return nil
}

// endpoint starts the session's key proxy when the profile has a key:
// Codex gets the proxy's address and a token, never the key.
func (s *session) endpoint() (endpoint, error) {
	if s.cfg.APIKey == "" {
		return s.cfg.direct(), nil
	}
	kp, err := keyproxy.Start(s.cfg.BaseURL, s.cfg.APIKey, keyproxy.Bearer)
	if err != nil {
		return endpoint{}, &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "key_proxy",
			Message: "AgentHub could not start the key proxy for the Codex CLI", Err: err,
			Next: "Check the profile's base_url: it must be an http or https URL."}
	}
	s.Keys = kp
	redact.Register(kp.Token()) // it opens only this proxy, but must not be stored either
	return endpoint{url: kp.URL(), key: kp.Token()}, nil
}

// start launches `codex app-server`, checks the thread's approval settings
// and starts the turn with the task.
func (s *session) start(ctx context.Context, env backend.ToolEnv) error {
	if err := s.launch(env, s.cfg.appServerArgs(), true, s.onLine); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if _, err := s.call(ctx, "initialize", map[string]any{"clientInfo": map[string]any{"name": "agenthub",
		"title": "AgentHub", "version": "0.1.0"}}); err != nil {
		return err
	}
	if err := s.send(map[string]any{"method": "initialized"}); err != nil {
		return err
	}
	res, err := s.call(ctx, "thread/start", s.cfg.threadParams(s.Root))
	if err != nil {
		return err
	}
	thread, err := checkThread(res, s.cfg.sandbox())
	if err != nil {
		return err
	}
	s.Mu.Lock()
	s.thread = thread
	s.Mu.Unlock()
	res, err = s.call(ctx, "turn/start", map[string]any{"threadId": thread,
		"input": []any{map[string]any{"type": "text", "text": s.Task}}})
	if err != nil {
		return err
	}
	var t struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	if json.Unmarshal(res, &t) != nil || t.Turn.ID == "" {
		return schemaError("turn/start answered without a turn id")
	}
	s.Mu.Lock()
	s.turn = t.Turn.ID
	s.Mu.Unlock()
	return nil
}

// sandboxTypes maps the sandbox modes to how thread/start reports them.
var sandboxTypes = map[string]string{SandboxReadOnly: "readOnly", SandboxWorkspaceWrite: "workspaceWrite"}

// checkThread reads thread/start's answer and fails closed unless Codex
// took AgentHub's settings: every command and patch asks ("untrusted"),
// the user (AgentHub) reviews, and the sandbox is the one asked for.
func checkThread(res json.RawMessage, sandbox string) (string, error) {
	var r struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
		Policy   json.RawMessage `json:"approvalPolicy"`
		Reviewer string          `json:"approvalsReviewer"`
		Sandbox  struct {
			Type string `json:"type"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.Thread.ID == "" {
		return "", schemaError("thread/start answered without a thread id")
	}
	if string(r.Policy) != `"untrusted"` || r.Reviewer != "user" || r.Sandbox.Type != sandboxTypes[sandbox] {
		return "", &backend.Error{Code: backend.FailPermissionDenied, Detail: "codex_settings",
			Message: fmt.Sprintf("Codex did not take AgentHub's approval settings (policy %s, reviewer %q, sandbox %q); "+
				"the run is refused rather than left ungated", scrub.Clip(string(r.Policy), 40), scrub.Clip(r.Reviewer, 20),
				scrub.Clip(r.Sandbox.Type, 30))}
	}
	return r.Thread.ID, nil
}

func schemaError(msg string) error {
	return &backend.Error{Code: backend.FailSchemaValidation, Message: "Codex: " + msg}
}

// send writes one JSON message to the CLI.
func (s *session) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode a message for Codex: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	in := s.P.Stdin()
	if in == nil {
		return errors.New("the Codex CLI takes no input in this mode")
	}
	if _, err := in.Write(append(b, '\n')); err != nil {
		return &backend.Error{Code: backend.FailRuntimeUnavailable, Message: "the Codex CLI stopped reading its input", Err: err}
	}
	return nil
}

// request sends one of AgentHub's requests; wait says whether its answer
// is wanted.
func (s *session) request(method string, params any, wait bool) (string, chan line, error) {
	s.Mu.Lock()
	s.nextID++
	n := s.nextID
	id := strconv.Itoa(n)
	var ch chan line
	if wait {
		ch = make(chan line, 1)
	}
	s.pending[id] = ch
	s.Mu.Unlock()
	err := s.send(map[string]any{"id": n, "method": method, "params": params})
	return id, ch, err
}

// call sends a request and waits for its answer.
func (s *session) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id, ch, err := s.request(method, params, true)
	if err != nil {
		return nil, err
	}
	select {
	case l := <-ch:
		if l.Error != nil {
			return nil, &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "rpc",
				Message: fmt.Sprintf("Codex refused %s: %s", method, s.Scrub(scrub.Clip(l.Error.Message, 300)))}
		}
		return l.Result, nil
	case <-s.P.Done():
		s.waitExited()
		return nil, s.exitError()
	case <-ctx.Done():
		s.Mu.Lock()
		delete(s.pending, id)
		s.Mu.Unlock()
		return nil, &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "handshake",
			Message: "the Codex CLI did not answer " + method, Err: ctx.Err()}
	}
}

// steerWait bounds how long decline waits for Codex to take a steer.
const steerWait = 5 * time.Second

// steer tells the agent something in the running turn (turn/steer): it
// reaches the model with its next request. It waits (at most steerWait)
// until Codex has queued it, so that what follows (an answer) comes after.
func (s *session) steer(text string) {
	s.Mu.Lock()
	thread, turn, done := s.thread, s.turn, s.turnDone
	s.Mu.Unlock()
	if thread == "" || done {
		return
	}
	id, ch, err := s.request("turn/steer", map[string]any{"threadId": thread, "expectedTurnId": turn,
		"input": []any{map[string]any{"type": "text", "text": text}}}, true)
	if err != nil {
		return
	}
	timer := time.NewTimer(steerWait)
	defer timer.Stop()
	select {
	case <-ch:
	case <-s.P.Done():
	case <-timer.C:
		s.Mu.Lock()
		delete(s.pending, id)
		s.Mu.Unlock()
	}
}

// answer sends the one answer an approval request gets: "accept" or
// "decline" ("cancel" while the run stops). Never acceptForSession or a
// policy amendment: grants stay with AgentHub (AP14).
func (s *session) answer(r *request, decision string) error {
	s.Mu.Lock()
	if r.answered {
		s.Mu.Unlock()
		return errors.New("this Codex request was already answered")
	}
	r.answered, r.decision = true, decision
	s.Mu.Unlock()
	return s.send(map[string]any{"id": r.rpcID, "result": map[string]any{"decision": decision}})
}

// decline turns a request down and tells the agent why, first, so that
// the reason reaches the model with Codex's own "rejected by user".
func (s *session) decline(r *request, why string) {
	s.Mu.Lock()
	answered := r.answered
	s.Mu.Unlock()
	if answered {
		return
	}
	s.steer("AgentHub: " + why)
	_ = s.answer(r, "decline")
}

// waitItem waits for an item to complete.
func (s *session) waitItem(ctx context.Context, id string) (threadItem, error) {
	for {
		s.Mu.Lock()
		var done *threadItem
		if st := s.items[id]; st != nil && st.done != nil {
			it := *st.done
			done = &it
		}
		exited, wait := s.Exited, s.Changed
		s.Mu.Unlock()
		switch {
		case done != nil:
			return *done, nil
		case exited:
			return threadItem{}, errors.New("the Codex CLI exited before it reported the result")
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return threadItem{}, ctx.Err()
		}
	}
}

// takeUsage is the usage not yet handed to the engine.
func (s *session) takeUsage() backend.Usage {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	u := backend.Usage{InputTokens: s.usage.Input - s.reported.Input, OutputTokens: s.usage.Output - s.reported.Output}
	s.reported = s.usage
	return u
}

// fail makes the next Stream end the run with err, before anything else
// queued (the exit of a process stopped because of err, for one).
func (s *session) fail(err error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Queue = append([]event{{kind: evFail, err: err}}, s.Queue...)
	s.Signal()
}

// drop forgets the session and closes its key proxy.
func (s *session) drop() {
	live.Remove(s.ID, s)
	s.Keys.Close()
}
