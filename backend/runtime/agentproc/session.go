package agentproc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"agenthub/backend"
	"agenthub/backend/proc"
	"agenthub/backend/redact"
	"agenthub/backend/runtime/agentbin"
	"agenthub/backend/runtime/keyproxy"
	"agenthub/backend/runtime/rawlog"
	"agenthub/backend/scrub"
)

// Session is the core every agent CLI session shares, embedded by each
// adapter's own session type: one process serving one run, a queue of the
// adapter's items T that its model's Stream consumes, and the problems
// found in the CLI's output. The reader (proc's output goroutine) and the
// proxy tools change it under Mu and call Signal; waiters hold Changed,
// which is closed and replaced on every change.
type Session[T any] struct {
	ID      string
	Runtime string // names the runtime in diagnostics: "claude"
	Bin     agentbin.Info
	Task    string

	// Set once when the session starts, before any line is read.
	Root, RealRoot string // absolute; never shown
	RunID          string
	P              *proc.Process
	Raw            *rawlog.Log
	Red            *redact.Redactor
	Keys           *keyproxy.Proxy // nil without a key
	// ScrubDirs are more directories whose paths never leave the session
	// (an adapter's own data directory).
	ScrubDirs []string

	Mu       sync.Mutex
	Changed  chan struct{} // closed and replaced on every change
	Queue    []T
	Diags    []Diag // problems not yet emitted as events
	Invalid  int    // lines that could not be used, in all
	Lines    int
	Exited   bool
	ExitCode int
	Stderr   string // scrubbed and redacted tail, once exited
}

// Init names a new session: prefix and a random id ("cc1f…"), the runtime
// its diagnostics name, the CLI and the task.
func (s *Session[T]) Init(prefix, runtime string, bin agentbin.Info, task string) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	s.ID, s.Runtime, s.Bin, s.Task = prefix+hex.EncodeToString(b[:]), runtime, bin, task
	s.Changed = make(chan struct{})
}

// SetRoot takes the run's workspace root (the CLI runs there) and id.
func (s *Session[T]) SetRoot(env backend.ToolEnv) error {
	if env.WorkspaceRoot == "" {
		return errors.New("the run has no workspace root")
	}
	s.Root, s.RunID = env.WorkspaceRoot, env.RunID
	s.RealRoot, _ = filepath.EvalSymlinks(env.WorkspaceRoot)
	return nil
}

// Signal wakes waiters; Mu is held.
func (s *Session[T]) Signal() {
	close(s.Changed)
	s.Changed = make(chan struct{})
}

// Push queues an item and wakes waiters; Mu is held.
func (s *Session[T]) Push(it T) {
	s.Queue = append(s.Queue, it)
	s.Signal()
}

// Pop takes the next queued item, or returns the channel that closes when
// there may be one.
func (s *Session[T]) Pop() (T, bool, <-chan struct{}) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if len(s.Queue) == 0 {
		var zero T
		return zero, false, s.Changed
	}
	it := s.Queue[0]
	s.Queue = s.Queue[1:]
	return it, true, nil
}

// PushFront puts an item back to be taken first.
func (s *Session[T]) PushFront(it T) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Queue = append([]T{it}, s.Queue...)
}

// Scrub removes machine paths and secrets from text the CLI produced.
func (s *Session[T]) Scrub(text string) string {
	return scrub.Session{Root: s.Root, RealRoot: s.RealRoot, Dirs: s.ScrubDirs, Red: s.Red}.String(text)
}

// Problem records an unusable line (b, when given, is kept as a scrubbed
// excerpt); Mu is held. Too many of them stop the process (Lost).
func (s *Session[T]) Problem(why string, b []byte) {
	s.Invalid++
	d := Diag{Runtime: s.Runtime, Line: s.Lines, Problem: why}
	if b != nil {
		d.Excerpt = scrub.Clip(s.Scrub(string(b)), 200)
	}
	if len(s.Diags) < MaxDiags {
		s.Diags = append(s.Diags, d)
	}
	Lost(s.P, s.Invalid)
}

// CutLine records a line longer than proc reads; Mu is held.
func (s *Session[T]) CutLine() {
	s.Problem(fmt.Sprintf("a line longer than %d bytes was cut", proc.DefaultMaxLine), nil)
}

// TakeDiags returns the problems not yet emitted.
func (s *Session[T]) TakeDiags() []Diag {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	d := s.Diags
	s.Diags = nil
	return d
}

// WatchExit waits for the process, records its exit code and scrubbed
// stderr tail, queues exit (the adapter's exit item) and wakes every
// waiter. before runs first, outside Mu (closing a pipe the process fed).
func (s *Session[T]) WatchExit(exit T, before func()) {
	res, _ := s.P.Wait()
	tail := Tail(res.Stderr)
	if before != nil {
		before()
	}
	s.Mu.Lock()
	s.Exited, s.ExitCode = true, res.ExitCode
	s.Stderr = s.Scrub(tail)
	s.Push(exit)
	s.Mu.Unlock()
	s.Raw.Close()
}
