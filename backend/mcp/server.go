package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agenthub/backend/proc"
)

// Config is one MCP server of a profile.
type Config struct {
	// Name identifies the server in tool names: lower case letters, digits
	// and '-' (profile validation enforces it).
	Name string
	// Command is an absolute path, or a program name looked up on the login
	// shell's PATH.
	Command string
	Args    []string
	// Env names the environment variables passed to the server from
	// AgentHub's own environment; PATH is always passed. Values never
	// appear in profiles, events or logs.
	Env []string
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
	p        *proc.Process
	tools    []*sdk.Tool
	failedAt time.Time
	failure  error
	closed   bool
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
	select {
	case <-s.p.Done():
		return true
	default:
		return false
	}
}

// startLocked starts the process, initialises the session and lists the
// tools, all within the start timeout.
func (s *server) startLocked(ctx context.Context) error {
	timeout := s.cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	path, err := s.resolve(ctx)
	if err != nil {
		return err
	}
	// The process outlives this call: it is bound to the set, not to ctx.
	p, err := proc.Start(context.WithoutCancel(ctx), proc.Spec{Path: path, Args: s.cfg.Args, Env: s.env(ctx),
		Stdin: true, StdoutPipe: true, MaxOutput: maxStderr})
	if err != nil {
		return fmt.Errorf("start MCP server %s: %w", s.cfg.Name, err)
	}
	s.p = p
	client := sdk.NewClient(&sdk.Implementation{Name: "agenthub", Version: "1"}, &sdk.ClientOptions{})
	sess, err := client.Connect(ctx, &sdk.IOTransport{Reader: p.Stdout(), Writer: p.Stdin()}, nil)
	if err != nil {
		s.stopLocked()
		return s.startError("initialise", err)
	}
	s.sess = sess
	var tools []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			s.stopLocked()
			return s.startError("list the tools of", err)
		}
		tools = append(tools, t)
	}
	s.tools = tools
	s.log.Info("mcp server started", "server", s.cfg.Name, "pid", p.Pid(), "tools", len(tools))
	return nil
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

// env is the allow-listed environment: PATH, then the named variables
// that are set.
func (s *server) env(ctx context.Context) []string {
	env := []string{"PATH=" + proc.LoginPath(ctx)}
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
	s.p = nil
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
	if s.p == nil || s.exited() {
		return 0
	}
	return s.p.Pid()
}
