package acptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
)

// AgentArg is the first argument that turns a test binary into the
// scripted ACP agent: tests start `<test binary> acp-agent <script file>`
// and call [MaybeServeAgent] first thing in the process.
const AgentArg = "acp-agent"

// Script is what the scripted agent does with its one prompt, step by
// step. It reports what came back from the client as agent text ("allowed
// proceed_once", "write ok", "read error: …"), so tests can check what an
// agent would have seen.
type Script struct {
	Name    string `json:"name"`    // agentInfo.name; default "agenthub-test-agent"
	Version string `json:"version"` // agentInfo.version; default "1.0.0"
	Steps   []Step `json:"steps"`
	// CancelMarker, when set, is a file the agent creates when it receives
	// session/cancel, so a test can see the cancel arrived.
	CancelMarker string `json:"cancelMarker,omitempty"`
	// NewSessionError makes session/new fail with this code and message.
	NewSessionError *sdk.RequestError `json:"newSessionError,omitempty"`
}

// Step is one action of the agent. Paths are relative to the session's
// working directory unless absolute.
type Step struct {
	Say string `json:"say,omitempty"`
	// Permission asks for permission; with Write set, an allowed request
	// is followed by that write, as Gemini CLI does.
	Permission *Permission `json:"permission,omitempty"`
	Write      *File       `json:"write,omitempty"`
	Read       string      `json:"read,omitempty"`
	// Terminal runs a command in a client terminal: terminal/create, then
	// (unless Kill) wait_for_exit, output and release, reporting
	// "terminal: <exit> output: <output>" or "terminal: <error>".
	Terminal *Terminal `json:"terminal,omitempty"`
	Raw      string    `json:"raw,omitempty"` // a line printed as it is
	Stderr   string    `json:"stderr,omitempty"`
	Exit     *int      `json:"exit,omitempty"`
	Hang     bool      `json:"hang,omitempty"` // wait until session/cancel
	// Dump writes what a hostile agent can learn of its own environment
	// to this file: its /proc/self/environ, then the environment every
	// command it starts inherits (what `env` would print; only backend/proc
	// starts processes, so the agent does not run it).
	Dump string `json:"dump,omitempty"`
}

// Permission is a session/request_permission.
type Permission struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	Title   string   `json:"title"`
	Diff    *File    `json:"diff,omitempty"` // a whole-file diff
	Paths   []string `json:"paths,omitempty"`
	Options []string `json:"options,omitempty"` // option kinds; default allow_always, allow_once, reject_once
	Write   *File    `json:"write,omitempty"`
}

// Terminal is a terminal/create and what the agent does with it.
type Terminal struct {
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	Cwd     string   `json:"cwd,omitempty"` // relative to the session's directory unless absolute
	Env     []string `json:"env,omitempty"` // NAME=value
	Limit   int      `json:"limit,omitempty"`
	// Kill kills the command at once instead of waiting for it, then
	// waits and reports how it ended.
	Kill bool `json:"kill,omitempty"`
}

// File is a path and a content.
type File struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// WriteScript stores a script for the agent and returns its command line.
func WriteScript(dir, testBinary string, s Script) ([]string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	p := filepath.Join(dir, "acp-script.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		return nil, err
	}
	return []string{testBinary, AgentArg, p}, nil
}

// MaybeServeAgent runs the scripted agent on stdin and stdout, and exits,
// when the process was started as one; otherwise it returns at once.
func MaybeServeAgent() {
	if len(os.Args) < 3 || os.Args[1] != AgentArg {
		return
	}
	b, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "acp-agent:", err)
		os.Exit(2)
	}
	var s Script
	if err := json.Unmarshal(b, &s); err != nil {
		fmt.Fprintln(os.Stderr, "acp-agent:", err)
		os.Exit(2)
	}
	out := &lockedWriter{w: os.Stdout}
	a := &agent{script: s, out: out, cancelled: make(chan struct{})}
	a.conn = sdk.NewAgentSideConnection(a, out, os.Stdin)
	<-a.conn.Done()
	os.Exit(0)
}

// lockedWriter keeps raw lines and the SDK's lines whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type agent struct {
	script    Script
	out       *lockedWriter
	conn      *sdk.AgentSideConnection
	cwd       string
	once      sync.Once
	cancelled chan struct{}
}

func (a *agent) Initialize(context.Context, sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	name, version := a.script.Name, a.script.Version
	if name == "" {
		name = "agenthub-test-agent"
	}
	if version == "" {
		version = "1.0.0"
	}
	return sdk.InitializeResponse{ProtocolVersion: sdk.ProtocolVersionNumber, AuthMethods: []sdk.AuthMethod{},
		AgentInfo: &sdk.Implementation{Name: name, Version: version}}, nil
}

func (a *agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

func (a *agent) NewSession(_ context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if e := a.script.NewSessionError; e != nil {
		return sdk.NewSessionResponse{}, e
	}
	a.cwd = p.Cwd
	return sdk.NewSessionResponse{SessionId: "sess_test"}, nil
}

func (a *agent) Cancel(context.Context, sdk.CancelNotification) error {
	a.markCancelled()
	a.once.Do(func() { close(a.cancelled) })
	return nil
}

// markCancelled records that session/cancel arrived, before the turn's
// answer, so the file exists by the time the client stops the process.
func (a *agent) markCancelled() {
	if a.script.CancelMarker != "" {
		_ = os.WriteFile(a.script.CancelMarker, []byte("cancelled\n"), 0o600)
	}
}

func (a *agent) CloseSession(context.Context, sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, nil
}

func (a *agent) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, nil
}

func (a *agent) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, nil
}

func (a *agent) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, nil
}

func (a *agent) SetSessionMode(context.Context, sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, nil
}

func (a *agent) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.cwd, p)
}

func (a *agent) say(ctx context.Context, sid sdk.SessionId, text string) {
	_ = a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.UpdateAgentMessageText(text)})
}

func (a *agent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	for _, st := range a.script.Steps {
		switch {
		case st.Say != "":
			a.say(ctx, p.SessionId, st.Say)
		case st.Permission != nil:
			a.permission(ctx, p.SessionId, *st.Permission)
		case st.Write != nil:
			a.write(ctx, p.SessionId, *st.Write)
		case st.Read != "":
			r, err := a.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: p.SessionId, Path: a.abs(st.Read)})
			if err != nil {
				a.say(ctx, p.SessionId, "read error: "+errText(err)+"\n")
			} else {
				a.say(ctx, p.SessionId, "read: "+r.Content+"\n")
			}
		case st.Terminal != nil:
			a.say(ctx, p.SessionId, "terminal: "+a.terminal(ctx, p.SessionId, *st.Terminal)+"\n")
		case st.Dump != "":
			a.say(ctx, p.SessionId, "dump: "+dump(a.abs(st.Dump))+"\n")
		case st.Raw != "":
			_, _ = a.out.Write([]byte(st.Raw + "\n"))
		case st.Stderr != "":
			fmt.Fprintln(os.Stderr, st.Stderr)
		case st.Exit != nil:
			os.Exit(*st.Exit)
		case st.Hang:
			select {
			case <-a.cancelled:
			case <-ctx.Done(): // the SDK cancels the prompt on session/cancel
			}
			a.markCancelled()
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		}
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

func (a *agent) permission(ctx context.Context, sid sdk.SessionId, pm Permission) {
	tc := sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(pm.ID), Title: sdk.Ptr(pm.Title),
		Kind: sdk.Ptr(sdk.ToolKind(pm.Kind)), Status: sdk.Ptr(sdk.ToolCallStatusPending)}
	for _, p := range pm.Paths {
		tc.Locations = append(tc.Locations, sdk.ToolCallLocation{Path: a.abs(p)})
	}
	if pm.Diff != nil {
		tc.Content = append(tc.Content, sdk.ToolDiffContent(a.abs(pm.Diff.Path), pm.Diff.Content))
		tc.Locations = append(tc.Locations, sdk.ToolCallLocation{Path: a.abs(pm.Diff.Path)})
	}
	kinds := pm.Options
	if len(kinds) == 0 {
		kinds = []string{"allow_always", "allow_once", "reject_once"}
	}
	var opts []sdk.PermissionOption
	for _, k := range kinds {
		opts = append(opts, sdk.PermissionOption{Kind: sdk.PermissionOptionKind(k), Name: k, OptionId: sdk.PermissionOptionId("opt_" + k)})
	}
	resp, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sid, ToolCall: tc, Options: opts})
	status := sdk.ToolCallStatusFailed
	switch {
	case err != nil:
		a.say(ctx, sid, "permission error: "+errText(err)+"\n")
	case resp.Outcome.Cancelled != nil:
		a.say(ctx, sid, "permission cancelled\n")
	case resp.Outcome.Selected != nil && strings.HasPrefix(string(resp.Outcome.Selected.OptionId), "opt_allow"):
		a.say(ctx, sid, "allowed "+string(resp.Outcome.Selected.OptionId)+"\n")
		status = sdk.ToolCallStatusCompleted
		if pm.Write != nil && !a.write(ctx, sid, *pm.Write) {
			status = sdk.ToolCallStatusFailed
		}
	case resp.Outcome.Selected != nil:
		a.say(ctx, sid, "rejected "+string(resp.Outcome.Selected.OptionId)+"\n")
	}
	_ = a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid,
		Update: sdk.UpdateToolCall(sdk.ToolCallId(pm.ID), sdk.WithUpdateStatus(status))})
}

func (a *agent) write(ctx context.Context, sid sdk.SessionId, f File) bool {
	_, err := a.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sid, Path: a.abs(f.Path), Content: f.Content})
	if err != nil {
		a.say(ctx, sid, "write error: "+errText(err)+"\n")
		return false
	}
	a.say(ctx, sid, "write ok\n")
	return true
}

// terminal runs one command in a client terminal and describes the outcome.
func (a *agent) terminal(ctx context.Context, sid sdk.SessionId, t Terminal) string {
	req := sdk.CreateTerminalRequest{SessionId: sid, Command: t.Command, Args: t.Args}
	if t.Cwd != "" {
		cwd := a.abs(t.Cwd)
		req.Cwd = &cwd
	}
	for _, kv := range t.Env {
		name, value, _ := strings.Cut(kv, "=")
		req.Env = append(req.Env, sdk.EnvVariable{Name: name, Value: value})
	}
	if t.Limit > 0 {
		req.OutputByteLimit = &t.Limit
	}
	created, err := a.conn.CreateTerminal(ctx, req)
	if err != nil {
		return errText(err)
	}
	id := created.TerminalId
	if t.Kill {
		if _, err := a.conn.KillTerminal(ctx, sdk.KillTerminalRequest{SessionId: sid, TerminalId: id}); err != nil {
			return "kill: " + errText(err)
		}
	}
	exit, err := a.conn.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: id})
	if err != nil {
		return "wait: " + errText(err)
	}
	out, err := a.conn.TerminalOutput(ctx, sdk.TerminalOutputRequest{SessionId: sid, TerminalId: id})
	if err != nil {
		return "output: " + errText(err)
	}
	if _, err := a.conn.ReleaseTerminal(ctx, sdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: id}); err != nil {
		return "release: " + errText(err)
	}
	ended := "signal " + deref(exit.Signal)
	if exit.ExitCode != nil {
		ended = fmt.Sprintf("exit %d", *exit.ExitCode)
	}
	return fmt.Sprintf("%s truncated %v output: %s", ended, out.Truncated, out.Output)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// errText is the message of a JSON-RPC error, or "ok".
func errText(err error) string {
	if err == nil {
		return "ok"
	}
	var re *sdk.RequestError
	if e, ok := err.(*sdk.RequestError); ok {
		re = e
	}
	if re != nil {
		return re.Message
	}
	return err.Error()
}

// dump writes the agent's environment as the kernel and a child see it.
func dump(path string) string {
	environ, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return "environ: " + err.Error()
	}
	text := strings.ReplaceAll(string(environ), "\x00", "\n") + "\n--- env\n" + strings.Join(os.Environ(), "\n") + "\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return err.Error()
	}
	return "ok"
}
