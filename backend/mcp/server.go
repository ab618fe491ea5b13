package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agenthub/backend/proc"
)

// Config is one MCP server of a profile: a child process over stdio
// (Command) or a Streamable HTTP endpoint (URL), never both.
type Config struct {
	// Name identifies the server in tool names: lower case letters, digits
	// and '-' (profile validation enforces it).
	Name string
	// Command is an absolute path, or a program name looked up on the login
	// shell's PATH.
	Command string
	// URL is the Streamable HTTP endpoint of a server that is already
	// running (e.g. "http://127.0.0.1:8931/mcp"); nothing is started.
	URL string
	// Headers are sent with every HTTP request; their values are read from
	// the environment or the OS keychain when the session starts.
	Headers []Header
	Args    []string
	// Env names the environment variables passed to the server from
	// AgentHub's own environment; PATH is always passed. Values never
	// appear in profiles, events or logs.
	Env []string
	// StateDir is the stdio server's own directory (its HOME): with the
	// private temp dir and the directories its arguments name, the only
	// place it may write (confine.go). Empty means none.
	StateDir string
	// Network lets the stdio server open TCP connections (the profile's
	// network = true); without it, it may open none.
	Network bool
	// AllowReadOnly lets tools the server annotates readOnlyHint run without
	// an approval.
	AllowReadOnly bool
	// CallTimeout bounds one tool call; zero means DefaultCallTimeout.
	CallTimeout time.Duration
	// StartTimeout bounds starting the server and listing its tools; zero
	// means DefaultStartTimeout.
	StartTimeout time.Duration
}

// Defaults for [Config].
const (
	DefaultCallTimeout  = 2 * time.Minute
	DefaultStartTimeout = 20 * time.Second
)

// retryAfter is how long a server that failed to start is left alone
// before the next attempt, so a broken command does not slow every step.
const retryAfter = 30 * time.Second

// stopGrace is how long a server has to exit after its stdin closes, and
// then after SIGTERM, before its process group is killed.
const stopGrace = 2 * time.Second

// maxStderr is what is kept of a server's standard error, for the message
// when it fails to start or crashes.
const maxStderr = 16 << 10

// server is one MCP server process and its session, started on first use
// and again after it stopped.
type server struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	sess     *sdk.ClientSession
	p        *proc.Process   // stdio only
	done     <-chan struct{} // closed when the process exits or the session ends
	tools    []*sdk.Tool
	failedAt time.Time
	failure  error
	closed   bool

	// stale is set by notifications/tools/list_changed; the next use of the
	// session lists the tools again. Atomic because the notification arrives
	// on the session's reader, which must never wait for mu.
	stale atomic.Bool
}

// errClosed: the set was closed; nothing starts again.
var errClosed = errors.New("the MCP servers were shut down")

// live returns the running session, starting the server when it is not
// running. A start that failed recently is not retried before retryAfter.
func (s *server) live(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.sess != nil && !s.exited() {
		if s.stale.Swap(false) {
			s.relistLocked(ctx)
		}
		return s.sess, nil
	}
	if s.sess != nil {
		s.stopLocked() // it exited: reap it before starting anew
	}
	if s.failure != nil && time.Since(s.failedAt) < retryAfter {
		return nil, s.failure
	}
	if err := s.startLocked(ctx); err != nil {
		s.failure, s.failedAt = err, time.Now()
		s.log.Warn("mcp server unavailable", "server", s.cfg.Name, "retry_in", retryAfter, "err", err)
		return nil, err
	}
	s.failure = nil
	return s.sess, nil
}

func (s *server) exited() bool {
	if s.done == nil {
		return true
	}
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// startLocked connects (starting the process for stdio), initialises the
// session and lists the tools, all within the start timeout.
func (s *server) startLocked(ctx context.Context) error {
	timeout := s.cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var sess *sdk.ClientSession
	var err error
	if s.cfg.URL != "" {
		sess, err = s.connectHTTP(ctx) // http.go
	} else {
		sess, err = s.connectStdio(ctx)
	}
	if err != nil {
		return err
	}
	s.sess = sess
	s.stale.Store(false)
	tools, err := s.list(ctx)
	if err != nil {
		s.stopLocked()
		return s.startError("list the tools of", err)
	}
	s.tools = tools
	s.log.Info("mcp server started", "server", s.cfg.Name, "pid", s.pid0(), "tools", len(tools))
	return nil
}

// connectStdio starts the process and initialises the session over its
// stdin and stdout.
func (s *server) connectStdio(ctx context.Context) (*sdk.ClientSession, error) {
	path, err := s.resolve(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.prepareState(); err != nil {
		return nil, err
	}
	env := s.env(ctx)
	rules := s.confinement(path, env) // confine.go
	// The process outlives this call: it is bound to the set, not to ctx.
	p, err := proc.Start(context.WithoutCancel(ctx), proc.Spec{Path: path, Args: s.cfg.Args, Env: env, Dir: s.cfg.StateDir,
		Stdin: true, StdoutPipe: true, MaxOutput: maxStderr, Confine: &rules})
	if err != nil {
		return nil, fmt.Errorf("start MCP server %s: %w", s.cfg.Name, err)
	}
	s.p, s.done = p, p.Done()
	sess, err := s.client().Connect(ctx, &sdk.IOTransport{Reader: p.Stdout(), Writer: p.Stdin()}, nil)
	if err != nil {
		s.stopLocked()
		return nil, s.startError("initialise", err)
	}
	return sess, nil
}

// client is the MCP client of one session: it marks the tool list stale
// when the server says it changed.
func (s *server) client() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "agenthub", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.stale.Store(true) },
	})
}

// list reads the server's whole tool list.
func (s *server) list(ctx context.Context) ([]*sdk.Tool, error) {
	var tools []*sdk.Tool
	for t, err := range s.sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// relistLocked reads the tool list again after notifications/tools/list_changed.
// On failure the previous list stays and the next use tries again.
func (s *server) relistLocked(ctx context.Context) {
	timeout := s.cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tools, err := s.list(ctx)
	if err != nil {
		s.stale.Store(true)
		s.log.Warn("relist mcp tools", "server", s.cfg.Name, "err", err)
		return
	}
	s.tools = tools
	s.log.Info("mcp tool list changed", "server", s.cfg.Name, "tools", len(tools))
}

// startError names the server and adds the end of its stderr, which is
// where a server says why it cannot start.
func (s *server) startError(what string, err error) error {
	msg := fmt.Sprintf("%s MCP server %s: %v", what, s.cfg.Name, err)
	if tail := s.stderrTail(); tail != "" {
		msg += "; it said: " + tail
	}
	return errors.New(msg)
}

func (s *server) stderrTail() string {
	if s.p == nil {
		return ""
	}
	select {
	case <-s.p.Done():
	case <-time.After(200 * time.Millisecond):
		return ""
	}
	res, _ := s.p.Wait()
	t := strings.TrimSpace(string(res.Stderr))
	if len(t) > 500 {
		t = "…" + t[len(t)-500:]
	}
	return t
}

func (s *server) resolve(ctx context.Context) (string, error) {
	if filepath.IsAbs(s.cfg.Command) {
		return s.cfg.Command, nil
	}
	path, err := proc.Look(s.cfg.Command, proc.LoginPath(ctx))
	if err != nil {
		return "", fmt.Errorf("MCP server %s: command %q is not on the login shell's PATH: %w",
			s.cfg.Name, s.cfg.Command, err)
	}
	return path, nil
}

// env is the allow-listed environment: PATH, HOME (the state dir, the
// one place it may keep things, unless the profile names HOME), then the
// named variables that are set.
func (s *server) env(ctx context.Context) []string {
	env := []string{"PATH=" + proc.LoginPath(ctx)}
	if s.cfg.StateDir != "" && !slices.Contains(s.cfg.Env, "HOME") {
		env = append(env, "HOME="+s.cfg.StateDir)
	}
	for _, name := range s.cfg.Env {
		if v, ok := os.LookupEnv(name); ok && name != "PATH" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// stopLocked closes the session (the server sees EOF on stdin), then stops
// the process group if it does not exit within the grace period.
func (s *server) stopLocked() {
	if s.sess != nil {
		_ = s.sess.Close()
		s.sess = nil
	}
	if s.p == nil {
		s.done = nil
		return
	}
	select {
	case <-s.p.Done():
	case <-time.After(stopGrace):
		if err := s.p.Stop(stopGrace); err != nil {
			s.log.Warn("stop mcp server", "server", s.cfg.Name, "err", err)
		}
	}
	// A server that exits on EOF may leave children in its group.
	if err := s.p.KillGroup(); err != nil {
		s.log.Warn("stop mcp server", "server", s.cfg.Name, "err", err)
	}
	s.p, s.done = nil, nil
}

func (s *server) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.stopLocked()
}

// listed returns the tools of the last successful start.
func (s *server) listed() []*sdk.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// pid is the running server's process id, or 0.
func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited() {
		return 0
	}
	return s.pid0()
}

// pid0 is the process id of a stdio server, 0 for HTTP.
func (s *server) pid0() int {
	if s.p == nil {
		return 0
	}
	return s.p.Pid()
}
