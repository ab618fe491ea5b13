package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/backend/proc"
	"agenthub/backend/scrub"
	"agenthub/backend/tools"
)

// This file is the agent's terminals (terminal/*). A terminal/create is a
// command run exactly as the built-in run_shell runs one (tools.Shell):
// it is proxied to the engine as a call to [ToolTerminal], gated as a
// shell action with the same subject, and started only once approved. The
// call's Execute answers the agent with the terminal's id and then waits
// for the command to end, so its output is the call's result, recorded as
// run_shell's is. terminal/output, wait_for_exit, kill and release are
// served at once from the session; a stop of the session kills every
// terminal it has.

// termReq is one terminal/create waiting for the gate.
type termReq struct {
	callID   string
	args     termArgs
	answer   chan termAnswer
	sent     bool
	answered bool
	s        *session
}

type termAnswer struct {
	id  string
	err error
}

// termArgs are the arguments of a [ToolTerminal] call.
type termArgs struct {
	Session string            `json:"session"`
	Request string            `json:"request"`
	Command string            `json:"command"`         // the command line /bin/sh -c runs
	Cwd     string            `json:"cwd,omitempty"`   // workspace-relative
	Env     map[string]string `json:"env,omitempty"`   // allow-listed variables the agent set
	Limit   int               `json:"limit,omitempty"` // outputByteLimit; 0 means defaultTermLimit
}

// shell is the command as run_shell runs one, with the longest timeout:
// the agent watches a terminal and kills it when done (a test suite, a
// build), where the model's own run_shell call waits for its result.
func (a termArgs) shell() tools.Shell {
	return tools.Shell{Command: a.Command, Dir: a.Cwd, Env: a.Env, TimeoutSeconds: tools.MaxShellTimeout}
}

// commandLine is the one line a terminal runs: the command as it is when
// it has no arguments (a shell line, as agents send it), else the program
// and its arguments quoted for /bin/sh.
func commandLine(command string, args []string) string {
	if len(args) == 0 {
		return command
	}
	parts := []string{shellQuote(command)}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '+' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// newTerminalRequest checks a terminal/create and queues it for the gate.
// A directory outside the workspace or a variable off the allow-list is
// refused at once: nothing is asked and nothing runs.
func (s *session) newTerminalRequest(p sdk.CreateTerminalRequest) (*termReq, error) {
	a := termArgs{Session: s.ID, Command: commandLine(p.Command, p.Args)}
	if strings.TrimSpace(a.Command) == "" {
		return nil, refused("the command is empty")
	}
	if p.Cwd != nil && *p.Cwd != "" {
		rel, err := s.resolve(*p.Cwd)
		if err != nil {
			return nil, err
		}
		if rel != "." {
			a.Cwd = filepath.ToSlash(rel)
		}
		if err := s.checkDir(a.Cwd); err != nil {
			return nil, err
		}
	}
	allowed := tools.ShellEnvNames()
	for _, v := range p.Env {
		if !slices.Contains(allowed, v.Name) {
			return nil, refused("the environment variable %s is not allowed; a command gets only %s", v.Name,
				strings.Join(allowed, ", "))
		}
		if a.Env == nil {
			a.Env = map[string]string{}
		}
		a.Env[v.Name] = v.Value
	}
	if p.OutputByteLimit != nil && *p.OutputByteLimit > 0 {
		a.Limit = *p.OutputByteLimit
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.reqSeq++
	r := &termReq{callID: fmt.Sprintf("acp-%s-term-%d", s.ID, s.reqSeq), args: a, answer: make(chan termAnswer, 1), s: s}
	r.args.Request = r.callID
	s.terms[r.callID] = r
	live.AddCall(r.callID, s)
	if s.closing {
		r.answered = true
		r.answer <- termAnswer{err: refused("the run is ending; the command was not run")}
		return r, nil
	}
	s.Push(item{kind: itemTerminal, term: r})
	return r, nil
}

// checkDir refuses a working directory that is not a directory inside the
// workspace once symlinks are followed (the command would start there).
func (s *session) checkDir(rel string) error {
	real, err := filepath.EvalSymlinks(filepath.Join(s.Root, filepath.FromSlash(rel)))
	if err != nil {
		return refused("the directory %s does not exist", scrub.Clip(rel, 200))
	}
	if _, ok := agentpath.Rel([]string{s.Root, s.RealRoot}, real); !ok {
		return refused("the path is outside the workspace; only paths inside it can be used")
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return refused("%s is not a directory", scrub.Clip(rel, 200))
	}
	return nil
}

// respond sends the one answer a terminal/create gets.
func (r *termReq) respond(a termAnswer) bool {
	r.s.Mu.Lock()
	defer r.s.Mu.Unlock()
	if r.answered {
		return false
	}
	r.answered = true
	r.answer <- a
	return true
}

func (r *termReq) cancel() {
	r.respond(termAnswer{err: refused("the run was cancelled; the command was not run")})
}

// settleTerminals answers the terminal/create requests the engine decided
// without executing the call (a rejection, a policy denial): the command
// never ran, and the agent gets the reason the transcript's tool message
// gives.
func (s *session) settleTerminals(told map[string]string) {
	s.Mu.Lock()
	var terms []*termReq
	for _, r := range s.terms {
		if r.sent && !r.answered {
			terms = append(terms, r)
		}
	}
	s.Mu.Unlock()
	for _, r := range terms {
		why := told[r.callID]
		if why == "" {
			why = "AgentHub did not run this command."
		}
		r.respond(termAnswer{err: refused("the command was not run: %s", scrub.Clip(why, 500))})
	}
}

// terminalCall is the engine's call for a terminal/create.
func (s *session) terminalCall(r *termReq) (backend.ToolCallRequest, error) {
	args, err := json.Marshal(r.args)
	if err != nil {
		return backend.ToolCallRequest{}, fmt.Errorf("encode a terminal call: %w", err)
	}
	return backend.ToolCallRequest{ID: r.callID, Name: ToolTerminal, Arguments: args}, nil
}

// terminal is a started command of the agent.
type terminal struct {
	id    string
	p     *proc.Process
	limit int
	done  chan struct{} // closed once the exit is recorded

	mu        sync.Mutex
	out       []byte // the latest output, at most limit bytes
	truncated bool
	exit      *sdk.TerminalExitStatus
}

// Write keeps the latest output: past the limit the oldest bytes go, cut at
// a character boundary.
func (t *terminal) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out = append(t.out, b...)
	if len(t.out) > t.limit {
		cut := len(t.out) - t.limit
		for cut < len(t.out) && !utf8.RuneStart(t.out[cut]) {
			cut++
		}
		t.out = append(t.out[:0], t.out[cut:]...)
		t.truncated = true
	}
	return len(b), nil
}

// defaultTermLimit bounds what a terminal keeps for terminal/output: when
// the agent sets no limit, and over a larger one.
const defaultTermLimit = 1 << 20

// termTool runs an agent's terminal/create once approved.
type termTool struct{}

func (termTool) Spec() backend.ToolSpec {
	return spec(ToolTerminal, "A command the ACP agent asked to run in a terminal, run like run_shell after approval.")
}

func decodeTerm(raw json.RawMessage) (termArgs, error) {
	var a termArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.Session == "" || a.Request == "" || a.Command == "" {
		return a, errors.New("not an ACP terminal request")
	}
	return a, nil
}

// Action is the command exactly as run_shell would show it.
func (termTool) Action(_ context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decodeTerm(raw)
	if err != nil {
		return nil, err
	}
	sh := a.shell()
	sh.Root = env.WorkspaceRoot // binds the workspace files the command executes
	return sh.Action()
}

// Execute starts the approved command, answers the agent with its terminal
// id and waits for it to end; the output is the call's result.
func (termTool) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decodeTerm(in.Arguments)
	if err != nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", ToolTerminal, err), nil
	}
	s, ok := live.ByID(a.Session)
	if !ok {
		return scrub.Failure(env.WorkspaceRoot, "%s: %v", ToolTerminal, errGone), nil
	}
	s.Mu.Lock()
	r := s.terms[a.Request]
	s.Mu.Unlock()
	if r == nil {
		return scrub.Failure(env.WorkspaceRoot, "%s: the agent made no such request", ToolTerminal), nil
	}
	if err := s.checkDir(a.Cwd); err != nil { // it may have changed since the request
		r.respond(termAnswer{err: err})
		return scrub.Failure(env.WorkspaceRoot, "%s: %s", ToolTerminal, reqErrText(err)), nil
	}
	sh := a.shell()
	t := &terminal{id: r.callID, limit: defaultTermLimit, done: make(chan struct{})}
	if a.Limit > 0 {
		t.limit = min(a.Limit, defaultTermLimit)
	}
	var tee io.Writer = t
	live := tools.NewShellStream(env, in.CallID)
	if live != nil {
		tee = io.MultiWriter(t, live)
	}
	p, err := sh.Start(ctx, env.WorkspaceRoot, tee)
	if err != nil {
		r.respond(termAnswer{err: refused("the command could not be started: %s", s.Scrub(err.Error()))})
		return scrub.Failure(env.WorkspaceRoot, "%v", err), nil
	}
	t.p = p
	if env.Track != nil {
		env.Track(p)
	}
	go t.watch()
	if !s.addTerminal(t) || !r.respond(termAnswer{id: t.id}) {
		_ = p.Stop(time.Second)
	}
	res := sh.Finish(env.WorkspaceRoot, p)
	if live != nil {
		live.Close()
	}
	return res, nil
}

func reqErrText(err error) string {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}

// watch records the exit status once the command has ended.
func (t *terminal) watch() {
	res, _ := t.p.Wait()
	st := &sdk.TerminalExitStatus{}
	if res.Signal != "" {
		st.Signal = &res.Signal
	} else {
		st.ExitCode = &res.ExitCode
	}
	t.mu.Lock()
	t.exit = st
	t.mu.Unlock()
	close(t.done)
}

// addTerminal registers a started terminal; false when the session is
// already closing (the caller stops it).
func (s *session) addTerminal(t *terminal) bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.closing {
		return false
	}
	s.terminals[t.id] = t
	return true
}

// terminal finds a terminal of this session by id.
func (s *session) terminal(id string) (*terminal, error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	t, ok := s.terminals[id]
	if !ok {
		return nil, &sdk.RequestError{Code: codeNotFound, Message: "Resource not found: terminal " + scrub.Clip(id, 100)}
	}
	return t, nil
}

// killTerminals stops every terminal of the session (its end, a cancel).
func (s *session) killTerminals() {
	s.Mu.Lock()
	var all []*terminal
	for _, t := range s.terminals {
		all = append(all, t)
	}
	s.Mu.Unlock()
	for _, t := range all {
		_ = t.p.Stop(time.Second)
	}
}

// output is what terminal/output answers, scrubbed as run_shell's output is.
func (s *session) output(t *terminal) sdk.TerminalOutputResponse {
	t.mu.Lock()
	defer t.mu.Unlock()
	return sdk.TerminalOutputResponse{Output: s.Scrub(string(t.out)), Truncated: t.truncated, ExitStatus: t.exit}
}

// CreateTerminal puts the command through the gate; an approved command
// starts and its terminal id is the answer, a rejected one never runs and
// the agent gets the reviewer's reason.
func (c client) CreateTerminal(ctx context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	r, err := c.s.newTerminalRequest(p)
	if err != nil {
		return sdk.CreateTerminalResponse{}, err
	}
	select {
	case a := <-r.answer:
		return sdk.CreateTerminalResponse{TerminalId: a.id}, a.err
	case <-ctx.Done():
		r.cancel()
		return sdk.CreateTerminalResponse{}, refused("the request was cancelled; the command was not run")
	}
}

func (c client) TerminalOutput(_ context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	t, err := c.s.terminal(p.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	return c.s.output(t), nil
}

func (c client) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	t, err := c.s.terminal(p.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, refused("the wait was cancelled")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return sdk.WaitForTerminalExitResponse{ExitCode: t.exit.ExitCode, Signal: t.exit.Signal}, nil
}

// KillTerminal stops the command and everything it started; the terminal
// stays until it is released.
func (c client) KillTerminal(_ context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	t, err := c.s.terminal(p.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	_ = t.p.Stop(time.Second)
	<-t.done
	return sdk.KillTerminalResponse{}, nil
}

// ReleaseTerminal kills the command if it still runs and forgets it.
func (c client) ReleaseTerminal(_ context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	t, err := c.s.terminal(p.TerminalId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	_ = t.p.Stop(time.Second)
	<-t.done
	c.s.Mu.Lock()
	delete(c.s.terminals, t.id)
	c.s.Mu.Unlock()
	return sdk.ReleaseTerminalResponse{}, nil
}
