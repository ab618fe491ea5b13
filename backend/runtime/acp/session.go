package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"agenthub/backend"
	"agenthub/backend/proc"
	"agenthub/backend/redact"
	"agenthub/backend/runtime/agentbin"
	"agenthub/backend/runtime/agentproc"
	"agenthub/backend/runtime/keyproxy"
	"agenthub/backend/runtime/rawlog"
	"agenthub/backend/scrub"
	"agenthub/workspace"
)

// ClientVersion is what AgentHub reports as the ACP client's version.
const ClientVersion = "0.1.0"

// startTimeout bounds initialize and session/new: Gemini CLI answers
// initialize after about 3 s.
const startTimeout = 90 * time.Second

// session is one agent process serving one run. The model's Stream, the
// proxy tools and the ACP client methods (called by the SDK on its own
// goroutines) meet here: a client method that needs a decision queues an
// item and waits; Stream turns the item into a call the engine gates; the
// tool's Execute answers.
type session struct {
	agentproc.Session[item]
	cfg Config

	// Set once by start, before the agent can call back.
	emit        func(backend.EventType, any)
	conn        *sdk.ClientSideConnection
	out         *io.PipeWriter // the lines the SDK reads
	sid         sdk.SessionId
	agent       agentInfo
	checkpoints *workspace.CheckpointStore

	// Under Mu, besides the shared core's state:
	perms     map[string]*permission // by call id
	writes    map[string]*writeReq   // by call id
	terms     map[string]*termReq    // terminal/create requests, by call id
	terminals map[string]*terminal   // started terminals, by terminal id
	plans     []*plan                // approved edits not yet written
	calls     map[string]*agentCall  // the agent's tool calls, by its id
	reqSeq    int
	ended     bool // the prompt turn returned
	closing   bool // stop or finish began
	stopping  bool // stop began; stopDone closes when it is over
	stopDone  chan struct{}
}

// agentInfo is what the agent says about itself in initialize.
type agentInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// itemKind is what Stream takes from the queue.
type itemKind int

const (
	itemDelta itemKind = iota
	itemEvent          // an event to record (tool-call updates, diagnostics)
	itemPermission
	itemWrite
	itemTerminal // a terminal/create for the gate
	itemEnd      // the prompt turn returned
	itemExit     // the process exited
	itemFail     // the session could not start
)

type item struct {
	kind    itemKind
	text    string
	evType  backend.EventType
	payload any
	perm    *permission
	write   *writeReq
	term    *termReq
	resp    sdk.PromptResponse
	err     error
}

// agentCall is the latest state of one of the agent's tool calls.
type agentCall struct {
	status  sdk.ToolCallStatus
	text    string // its content as text, scrubbed
	changed chan struct{}
}

func newSession(cfg Config, bin agentbin.Info, task string) *session {
	s := &session{cfg: cfg, stopDone: make(chan struct{}), perms: map[string]*permission{}, writes: map[string]*writeReq{},
		terms: map[string]*termReq{}, terminals: map[string]*terminal{}, calls: map[string]*agentCall{}}
	s.Init("acp", cfg.name(), bin, task)
	s.ScrubDirs = []string{cfg.Dir}
	return s
}

// startCallID is the id of the call that starts the session.
func (s *session) startCallID() string { return "acp-" + s.ID + "-start" }

// endpoint starts the session's key proxy when Gemini CLI's profile has a
// key: the CLI gets the proxy's address and a token, never the key.
func (s *session) endpoint() (endpoint, error) {
	if !s.cfg.Gemini {
		return s.genericEndpoint() // keyenv.go
	}
	if s.cfg.APIKey == "" {
		return s.cfg.direct(), nil
	}
	kp, err := keyproxy.Start(s.cfg.upstream(), s.cfg.APIKey, keyproxy.GoogleKey)
	if err != nil {
		return endpoint{}, &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "key_proxy",
			Message: "AgentHub could not start the key proxy for Gemini CLI", Err: err,
			Next: "Check the profile's base_url: it must be an http or https URL."}
	}
	s.Keys = kp
	redact.Register(kp.Token()) // it opens only this proxy, but must not be stored either
	return endpoint{url: kp.URL(), key: kp.Token()}, nil
}

// start launches the agent in the workspace root, opens an ACP session
// there and sends the task. The process lives until the turn ends, a cancel
// (through Track) or stop.
func (s *session) start(env backend.ToolEnv) error {
	if err := s.SetRoot(env); err != nil {
		return err
	}
	s.emit = env.Emit
	if err := s.cfg.prepareHome(); err != nil {
		return err
	}
	path := proc.LoginPath(context.Background())
	ep, err := s.endpoint()
	if err != nil {
		return err
	}
	environ := s.cfg.environ(path, ep)
	s.Red = redact.NewFromEnviron(environ, "GEMINI_API_KEY", s.cfg.KeyEnv)
	s.Red.Add(s.cfg.APIKey)
	raw, err := rawlog.Open(s.cfg.rawDir(), s.ID)
	if err != nil {
		s.Keys.Close()
		return err
	}
	s.Raw = raw
	in, out := io.Pipe()
	s.out = out
	p, err := agentproc.Start(agentproc.Spec{Label: s.cfg.label(), Path: s.Bin.Path, Args: s.cfg.args(), Dir: s.Root,
		Env: environ, Stdin: true, Raw: raw, Lines: s.onLine})
	if err != nil {
		s.Keys.Close()
		return err
	}
	s.P = p
	if env.Track != nil {
		env.Track(stopper{s})
	}
	conn := sdk.NewClientSideConnection(client{s}, p.Stdin(), in)
	conn.SetLogger(slog.New(slog.DiscardHandler)) // it would log raw lines
	s.Mu.Lock()                                   // a cancel may already be stopping the session
	s.conn = conn
	s.Mu.Unlock()
	go s.WatchExit(item{kind: itemExit}, func() { _ = s.out.Close() })
	return s.open()
}

// open runs initialize and session/new, then sends the task.
func (s *session) open() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	init, err := s.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: s.cfg.servesReads(),
			WriteTextFile: true}, Terminal: true},
		ClientInfo: &sdk.Implementation{Name: "agenthub", Version: ClientVersion}})
	if err != nil {
		return s.startError("initialize", err)
	}
	if init.AgentInfo != nil {
		s.agent = agentInfo{Name: init.AgentInfo.Name, Version: init.AgentInfo.Version}
	}
	ns, err := s.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: s.Root, McpServers: []sdk.McpServer{}})
	if err != nil {
		return s.startError("session/new", err)
	}
	s.Mu.Lock()
	s.sid = ns.SessionId
	s.Mu.Unlock()
	go s.prompt()
	return nil
}

// prompt runs the one turn of the run; its answer ends the turn.
func (s *session) prompt() {
	resp, err := s.conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: s.sid,
		Prompt: []sdk.ContentBlock{sdk.TextBlock(s.Task)}})
	s.Mu.Lock()
	s.ended = true
	s.Push(item{kind: itemEnd, resp: resp, err: err})
	s.Mu.Unlock()
}

// startError is the failure of a session that could not be opened: the
// process exited (its stderr tells why), the agent wants a login or a key,
// or it did not answer.
func (s *session) startError(step string, err error) error {
	var re *sdk.RequestError
	if errors.As(err, &re) && re.Code == -32000 {
		return s.authError(re.Message)
	}
	if errors.As(err, &re) {
		return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "protocol",
			Message: fmt.Sprintf("%s refused %s: %s", s.cfg.label(), step, scrub.Clip(s.Scrub(re.Message), 300)), Err: err}
	}
	select {
	case <-s.P.Done():
		<-s.exitRecorded()
		return s.exitError()
	case <-time.After(3 * time.Second):
	}
	return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "no_answer",
		Message: fmt.Sprintf("%s did not answer %s over ACP", s.cfg.label(), step), Err: err}
}

// authError says which step logs the agent in: the failure's next step.
func (s *session) authError(msg string) error {
	next := "log the agent in, or set key_env in the profile to the variable that holds its API key, with " +
		`model_protocol = "openai" or "anthropic" (the agent then reaches its model through AgentHub's key proxy)`
	if s.cfg.Gemini {
		next = "set key_env in the profile to the variable that holds the Gemini API key (and base_url for a local server)"
	}
	return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "auth", Next: next,
		Message: fmt.Sprintf("%s is not logged in or its API key was refused (%s)", s.cfg.label(),
			scrub.Clip(s.Scrub(apiMessage(msg)), 300))}
}

// apiMessage is the message of a Google API error body, or msg itself.
func apiMessage(msg string) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if i := strings.Index(msg, "{"); i >= 0 && json.Unmarshal([]byte(msg[i:]), &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	return msg
}

// exitRecorded is closed once watchExit has recorded the exit.
func (s *session) exitRecorded() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for {
			s.Mu.Lock()
			done, wait := s.Exited, s.Changed
			s.Mu.Unlock()
			if done {
				return
			}
			<-wait
		}
	}()
	return ch
}

// wait blocks until the session changes, ctx ends or the session closes.
func (s *session) wait(ctx context.Context, wait <-chan struct{}) error {
	select {
	case <-wait:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// exitError is the failure of an agent that exited before its turn ended.
func (s *session) exitError() error {
	s.Mu.Lock()
	code, tail, invalid, lines := s.ExitCode, s.Stderr, s.Invalid, s.Lines
	s.Mu.Unlock()
	return agentproc.ExitError(s.cfg.label(), code, scrub.LastLines(tail, 8), invalid, lines)
}

// closeGrace bounds how long a finished agent may take to exit after its
// input is closed.
const closeGrace = 5 * time.Second

// finish ends a session whose turn is over: the agent exits when its input
// closes; one that does not is stopped.
func (s *session) finish() {
	s.Mu.Lock()
	s.closing = true
	s.Mu.Unlock()
	s.killTerminals()
	agentproc.Finish(s.P, nil, closeGrace)
	s.drop()
}

// stop ends the session: session/cancel first, so the agent can stop its
// turn (and every pending request is answered "cancelled", as ACP asks),
// then a graceful stop of the whole process group, then a kill. A cancel
// reaches it twice (the model's context and the run's tracked stopper): the
// second caller waits for the first instead of killing at once.
func (s *session) stop(grace time.Duration) error {
	s.Mu.Lock()
	first := !s.stopping
	s.stopping, s.closing = true, true
	pending := s.unanswered()
	conn, sid, exited := s.conn, s.sid, s.Exited
	s.Mu.Unlock()
	defer s.drop()
	if s.P == nil {
		return nil
	}
	if !first {
		select {
		case <-s.stopDone:
		case <-time.After(grace + 5*time.Second):
		}
		return s.P.Stop(grace) // nothing left to do when the first one finished
	}
	defer close(s.stopDone)
	for _, p := range pending {
		p.cancel()
	}
	defer s.killTerminals()
	if conn != nil && sid != "" && !exited {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = conn.Cancel(ctx, sdk.CancelNotification{SessionId: sid})
		cancel()
		select {
		case <-s.P.Done():
		case <-s.turnEnded():
		case <-time.After(min(grace/2, 2*time.Second)):
		}
	}
	return s.P.Stop(grace)
}

// turnEnded is closed once the prompt turn has returned.
func (s *session) turnEnded() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for {
			s.Mu.Lock()
			done, wait := s.ended || s.Exited, s.Changed
			s.Mu.Unlock()
			if done {
				return
			}
			<-wait
		}
	}()
	return ch
}

// unanswered lists the requests still waiting for an answer; s.Mu is held.
func (s *session) unanswered() []canceler {
	var out []canceler
	for _, p := range s.perms {
		if !p.answered {
			out = append(out, p)
		}
	}
	for _, w := range s.writes {
		if !w.answered {
			out = append(out, w)
		}
	}
	for _, r := range s.terms {
		if !r.answered {
			out = append(out, r)
		}
	}
	return out
}

// canceler is a pending request that a stop answers.
type canceler interface{ cancel() }

// stopper is what the run tracks: a cancel, the hard timeout or shutdown
// stops the agent and forgets the session.
type stopper struct{ s *session }

func (st stopper) Stop(grace time.Duration) error { return st.s.stop(grace) }

// drop forgets the session.
func (s *session) drop() {
	live.Remove(s.ID, s)
	s.Keys.Close()
}
