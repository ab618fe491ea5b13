// Package engine owns the run loop: the lifecycle state machine, the phases
// of each step, stop conditions, suspension and resume, lanes, the
// active-run registry, cancel and timeouts, and startup recovery.
//
// Invariants: every state change is committed through the store, with its
// event, before anyone sees it (EV6); a session runs one run at a time and
// the global lane caps concurrency (CC1, CC2); RunEnd runs exactly once per
// run and its cleanup runs on every exit path (CC6). This package must not
// import app code, a UI toolkit, or os/exec: external processes are reached
// through [backend.Stopper].
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/store"
)

// Profile is an agent profile: which model drives the run, how it stops.
type Profile struct {
	Name       string
	Runtime    string // "native" or "script"
	Model      backend.Model
	Tools      []string   // tool names offered; empty = every configured tool
	Source     ToolSource // the profile's own tools (MCP servers), offered besides Tools
	Stop       StopConfig
	RunTimeout time.Duration // hard timeout on active time (CC8); 0 = 30 minutes
	Scripted   bool          // a playbook, never an AI model
	StateKeys  []string      // state keys a sub-agent of this profile registers (delegate.go)
	Executor   Executor      // how a step's calls execute (EX1, executor.go); empty = sequential
	// Policy holds the profile's policy overrides, which may only tighten
	// the workspace gate (overrides.go); nil = none.
	Policy *approval.Policy

	// Hooks run after Config.Hooks at every phase (hooks.go, docs/HOOKS.md).
	Hooks []backend.Hook

	// Capabilities is what an external runtime declares (AD2); nil for the
	// built-in loop and playbooks, which enforce every gate themselves. A
	// run whose policy the runtime cannot enforce is refused at Preparing
	// (gating.go) unless AcceptAdvisory names the kinds; AcceptedBy names
	// the profile setting that accepted them, for the record.
	Capabilities   *backend.Capabilities
	AcceptAdvisory []backend.ActionKind
	AcceptedBy     string
}

// Config wires an engine.
type Config struct {
	Store       *store.Store
	Gate        backend.Gate            // nil = DefaultGate (run-model §9.1)
	Tools       map[string]backend.Tool // by name
	Profiles    map[string]Profile      // by name
	Default     string                  // profile used when a request names none
	GlobalLimit int                     // concurrent runs; default 4
	Grace       time.Duration           // cancel grace before kill; default 5 s
	Sink        backend.Sink            // optional extra subscriber (the window)
	Roots       func(workspaceID string) (string, error)
	// Rules says where "always allow in this workspace" writes its rule
	// (nil: the repository's .agenthub/policy.toml).
	Rules *approval.Rules
	// RunRoots, when set, resolves the root a run works in: a run isolated
	// in its own git worktree works there, not in the checkout (isolation.go).
	// It must fail rather than answer the checkout for an isolated run.
	RunRoots func(runID, workspaceID string) (string, error)
	Log      *slog.Logger
	// Checkpoints is the checkpoint store's directory (the tools' one):
	// run.diff.ready counts changed lines against the pre-images there.
	Checkpoints string
	// BranchDiff, when set, says what a run in a worktree changed against
	// its branch's base (run.diff.ready{scope:"branch"}, changeset.go); ok
	// is false for a run that works in the checkout.
	BranchDiff func(ctx context.Context, runID, workspaceID string) (d backend.DiffReady, ok bool, err error)

	// Hooks run at every phase of every native run, before the profile's.
	Hooks []backend.Hook
}

// Engine runs runs. Create it with [New], call [Engine.Recover] once, and
// [Engine.Shutdown] at quit.
type Engine struct {
	cfg   Config
	store *store.Store
	bus   *bus
	lanes *lanes
	reg   *registry
	log   *slog.Logger

	profMu sync.RWMutex // guards cfg.Profiles after New
	mu     sync.Mutex
	runs   map[string]*runCtl // live activations
	// unrecorded holds the runs whose end failed to commit (unrecorded.go).
	unrecorded map[string]unrecordedEnd
	unrecMu    sync.Mutex
	subLane    chan struct{} // the sub-agent lane's slots (SA9, delegate.go)
	draining   bool
	wg         sync.WaitGroup
}

// New builds an engine and makes it the store's publisher.
func New(cfg Config) *Engine {
	if cfg.GlobalLimit <= 0 {
		cfg.GlobalLimit = 4
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 5 * time.Second
	}
	if cfg.Gate == nil {
		cfg.Gate = DefaultGate{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	e := &Engine{cfg: cfg, store: cfg.Store, bus: newBus(1024), lanes: newLanes(cfg.GlobalLimit),
		reg: newRegistry(), log: cfg.Log, runs: map[string]*runCtl{},
		subLane: make(chan struct{}, subagentLimit)}
	cfg.Store.SetPublisher(sinkFunc(func(ev backend.Event) {
		e.bus.Publish(ev)
		if cfg.Sink != nil {
			cfg.Sink.Publish(ev)
		}
	}))
	return e
}

type sinkFunc func(backend.Event)

func (f sinkFunc) Publish(ev backend.Event) { f(ev) }

// StartRequest asks for a new run.
type StartRequest struct {
	WorkspaceID string
	SessionID   string // empty = a new session
	Profile     string // empty = the default profile
	Task        string
	NoQueue     bool // refuse with active_run_exists instead of queueing
	Actor       string
	Surface     backend.Surface
	ResumedFrom string // the interrupted run this one resumes (Resume)
	// RunID, when set, is the new run's id: the caller prepared something
	// keyed by it (a worktree) that must exist before the run can start.
	RunID string
}

// Start validates the request (SC1: an invalid request creates no run),
// records the run through Created → Planned → Accepted and queues it in its
// session lane.
func (e *Engine) Start(ctx context.Context, req StartRequest) (backend.RunSummary, error) {
	p, err := e.plan(ctx, req)
	if err != nil {
		return backend.RunSummary{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.draining {
		return backend.RunSummary{}, backend.Errorf(backend.FailInternal, "AgentHub is shutting down")
	}
	if req.SessionID != "" {
		if owner, busy := e.lanes.busy(req.SessionID); busy && req.NoQueue {
			return backend.RunSummary{}, &backend.Error{Code: backend.CodeActiveRunExists,
				Message: "this session already has an active run", Detail: owner}
		}
	}
	rec := store.RunRecord{ID: orNewRunID(req.RunID), SessionID: req.SessionID,
		WorkspaceID: req.WorkspaceID, Profile: p.Name, AgentID: p.Name, Runtime: p.Runtime, Task: req.Task,
		Scripted: p.Scripted, Actor: req.Actor, Surface: req.Surface, ResumedFrom: req.ResumedFrom}
	newSession := rec.SessionID == ""
	if newSession {
		rec.SessionID = backend.NewID(backend.PrefixSession)
	}
	_, err = e.store.Do(ctx, func(tx *store.Tx) error {
		if newSession {
			if err := tx.CreateSession(rec.SessionID, rec.WorkspaceID, ""); err != nil {
				return err
			}
		}
		var err error
		created := map[string]any{"task": req.Task, "profile": p.Name, "workspaceId": req.WorkspaceID,
			"scripted": p.Scripted}
		if req.ResumedFrom != "" {
			created["resumedFrom"] = req.ResumedFrom
		}
		if rec, err = tx.CreateRun(rec, created); err != nil {
			return err
		}
		for _, to := range []backend.RunState{backend.RunPlanned, backend.RunAccepted} {
			if _, err := tx.Transition(rec.ID, to, "", nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return backend.RunSummary{}, fmt.Errorf("start run: %w", err)
	}
	rc := e.newCtl(rec, p)
	w := e.lanes.enqueue(rec.SessionID, rec.ID)
	e.spawn(rc, func() { rc.activate(w) })
	return e.Run(ctx, rec.ID)
}

func (e *Engine) plan(ctx context.Context, req StartRequest) (Profile, error) {
	name := req.Profile
	if name == "" {
		name = e.cfg.Default
	}
	p, ok := e.profile(name)
	if !ok {
		return p, &backend.Error{Code: backend.CodeInvalidInput, Message: fmt.Sprintf("unknown profile %q", name),
			Next: "Choose one of the profiles: " + strings.Join(e.profileNames(), ", ") + "."}
	}
	p.Name = name
	if err := p.Stop.Validate(); err != nil {
		return p, &backend.Error{Code: backend.CodeInvalidInput, Message: err.Error(), Err: err}
	}
	if _, err := e.store.Workspace(ctx, req.WorkspaceID); err != nil {
		return p, &backend.Error{Code: backend.FailOutsideAllowlist,
			Message: "the workspace is not in the allowlist", Err: err}
	}
	if req.SessionID != "" {
		if _, err := e.store.Runs(ctx, store.RunFilter{SessionID: req.SessionID, Limit: 1}); err != nil {
			return p, err
		}
	}
	return p, nil
}

// AddProfile makes a profile available to later starts, e.g. a playbook
// given on the command line. Call it before Recover for profiles that runs
// persisted in the store may name.
func (e *Engine) AddProfile(name string, p Profile) {
	e.profMu.Lock()
	defer e.profMu.Unlock()
	if e.cfg.Profiles == nil {
		e.cfg.Profiles = map[string]Profile{}
	}
	e.cfg.Profiles[name] = p
}

func (e *Engine) profile(name string) (Profile, bool) {
	e.profMu.RLock()
	defer e.profMu.RUnlock()
	p, ok := e.cfg.Profiles[name]
	return p, ok
}

// profileNames lists the profiles by name, sorted.
func (e *Engine) profileNames() []string {
	e.profMu.RLock()
	defer e.profMu.RUnlock()
	return slices.Sorted(maps.Keys(e.cfg.Profiles))
}

func (e *Engine) spawn(rc *runCtl, fn func()) {
	e.runs[rc.rec.ID] = rc
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer func() {
			e.mu.Lock()
			delete(e.runs, rc.rec.ID)
			e.mu.Unlock()
		}()
		fn()
	}()
}

// Cancel cancels a run (LC8): idempotent, concurrent cancels share one
// grace-then-kill path, and it returns once the run is terminal (or ctx ends).
// Cancelling a terminal run returns its state and changes nothing.
func (e *Engine) Cancel(ctx context.Context, runID string) (backend.RunSummary, error) {
	e.mu.Lock()
	rc := e.runs[runID]
	e.mu.Unlock()
	if rc != nil {
		rc.stop(errUserCancel)
		select {
		case <-rc.done:
		case <-ctx.Done():
			return backend.RunSummary{}, fmt.Errorf("cancel %s: %w", runID, ctx.Err())
		}
	}
	if _, err := e.settleUnrecorded(ctx, runID); err != nil {
		return backend.RunSummary{}, err
	}
	return e.Run(ctx, runID)
}

// Run returns one run's summary.
func (e *Engine) Run(ctx context.Context, id string) (backend.RunSummary, error) {
	r, err := e.store.Run(ctx, id)
	if err != nil {
		return backend.RunSummary{}, err
	}
	s := e.summary(r)
	e.unrecMu.Lock() // not e.mu: Start calls Run holding it
	u, ok := e.unrecorded[id]
	e.unrecMu.Unlock()
	if ok && !r.State.Terminal() { // ended, but the end is not stored (unrecorded.go)
		s.State, s.Coarse = backend.RunFailed, backend.RunFailed.Coarse()
		s.Failure = &backend.Failure{Code: u.code, Message: u.message(), Next: u.next()}
	}
	return s, nil
}

// Runs lists runs (admission order).
func (e *Engine) Runs(ctx context.Context, f store.RunFilter) ([]backend.RunSummary, error) {
	rs, err := e.store.Runs(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]backend.RunSummary, len(rs))
	for i, r := range rs {
		out[i] = e.summary(r)
	}
	return out, nil
}

// Events returns committed events with sequence > after (EV8).
func (e *Engine) Events(ctx context.Context, runID string, after int64, limit int) ([]backend.Event, error) {
	if _, err := e.store.Run(ctx, runID); err != nil {
		return nil, err
	}
	return e.store.Events(ctx, runID, after, limit)
}

// Approvals lists pending tickets; runID "" = every run.
func (e *Engine) Approvals(ctx context.Context, runID string) ([]backend.ApprovalRequest, error) {
	tks, err := e.store.Tickets(ctx, runID, true)
	if err != nil {
		return nil, err
	}
	if runID != "" {
		if tks, err = e.withChildTickets(ctx, runID, tks); err != nil { // delegate.go
			return nil, err
		}
	}
	return mergeTwins(tks), nil
}

// mergeTwins shows pending tickets of one run that ask for exactly the same
// thing as one item (AP13): the first, naming the others in
// MergedApprovalIDs. Deciding it decides them all.
func mergeTwins(tks []store.Ticket) []backend.ApprovalRequest {
	out := make([]backend.ApprovalRequest, 0, len(tks))
	first := map[[3]string]int{}
	for _, t := range tks {
		key := [3]string{t.RunID, t.SubjectHash, t.TicketKind}
		if i, ok := first[key]; ok && t.Status == "pending" {
			out[i].MergedApprovalIDs = append(out[i].MergedApprovalIDs, t.ID)
			continue
		}
		first[key] = len(out)
		out = append(out, t.ApprovalRequest)
	}
	return out
}

// Shutdown drains: new starts are refused, live runs are stopped without a
// terminal state so the next start recovers them (CC4, SR10, SR12), and it
// waits for every goroutine of the engine.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.draining = true
	e.lanes.drain()
	for _, rc := range e.runs {
		rc.stop(errShutdown)
	}
	e.mu.Unlock()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
		e.closeSources() // toolsource.go: MCP servers stop with the engine
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shutdown: %w", ctx.Err())
	}
}

var (
	errUserCancel = errors.New("user_cancelled")
	errShutdown   = errors.New("shutdown")
	errTimeout    = errors.New("run_timeout")
)

// StopConfig holds the stop conditions of a profile (§6), in evaluation order.
type StopConfig struct {
	MaxRounds         int
	Timeout           time.Duration // active time
	TokenBudget       int64
	ConsecutiveErrors int
	StopOnTool        string
	ContentMatch      string // RE2
	LoopWindow        int
}

// DefaultStop is the built-in profile's stop configuration (SC7).
var DefaultStop = StopConfig{MaxRounds: 50, LoopWindow: 3, ConsecutiveErrors: 3}

// Validate rejects an invalid configuration (SC1).
func (c StopConfig) Validate() error {
	if c.ContentMatch != "" {
		if _, err := regexp.Compile(c.ContentMatch); err != nil {
			return fmt.Errorf("stop condition content_match does not compile: %w", err)
		}
	}
	if c.MaxRounds < 0 || c.TokenBudget < 0 || c.ConsecutiveErrors < 0 || c.Timeout < 0 {
		return errors.New("stop conditions must not be negative")
	}
	return nil
}
