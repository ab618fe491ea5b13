package engine

// The child side of TestKill9Recovery: the test binary re-executed with
// envKillHelper set (the os/exec helper-process pattern). It opens the store,
// recovers, prints "ready", then keeps an endless workload going until the
// parent kills it: runs across a few sessions whose scripted model streams
// many deltas per step and calls a fast echo tool and a gated write tool;
// an approver decides most tickets after a random delay and leaves some
// open, and a few runs are cancelled. Every committed event is printed as
// "ev <runId> <sequence> <eventId>" from the engine's Sink, which the store
// calls only after the commit.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/store"
)

const (
	envKillHelper = "AGENTHUB_KILL_HELPER"    // "1" in the child
	envKillDB     = "AGENTHUB_KILL_DB"        // the SQLite file
	envKillChild  = "AGENTHUB_KILL_CHILDSEED" // the child's workload seed
	killProfile   = "kill"
	killDeltas    = 40 // streamed deltas per step
)

// TestKillHelperProcess is not a test: it is the child process of
// TestKill9Recovery and returns at once in a normal test run.
func TestKillHelperProcess(t *testing.T) {
	if os.Getenv(envKillHelper) != "1" {
		return
	}
	seed, _ := strconv.ParseUint(os.Getenv(envKillChild), 10, 64)
	err := killChild(os.Getenv(envKillDB), seed, os.Stdout)
	fmt.Fprintln(os.Stderr, "kill helper stopped on its own:", err)
	os.Exit(3) // the parent only ever ends the child with SIGKILL
}

// planModel answers from the run's task, "plan:<steps>#<nonce>": step i
// follows plan[i-1]: 'e' calls echo, 'w' calls write then echo, 'W' calls
// write twice, anything else (or past the plan) answers with text only.
type planModel struct{}

func (planModel) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse,
	error) {
	plan := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == backend.RoleUser {
			plan = req.Messages[i].Text
			break
		}
	}
	plan, _, _ = strings.Cut(strings.TrimPrefix(plan, "plan:"), "#")
	for i := range killDeltas {
		if i%8 == 7 {
			time.Sleep(200 * time.Microsecond) // a paced stream, so kills land mid-message
			if err := ctx.Err(); err != nil {
				return backend.ModelResponse{}, err
			}
		}
		delta(fmt.Sprintf("step %d, token %02d of a streamed answer. ", req.Step, i))
	}
	kind := byte('t')
	if req.Step <= len(plan) {
		kind = plan[req.Step-1]
	}
	id := func(i int) string { return fmt.Sprintf("c%d_%d", req.Step, i) }
	file := func(i int) string { return fmt.Sprintf(`{"path":"f%d_%d.txt","content":"v%d"}`, req.Step, i, i) }
	var calls []backend.ToolCallRequest
	switch kind {
	case 'e':
		calls = []backend.ToolCallRequest{call(id(0), "echo", fmt.Sprintf(`{"step":%d}`, req.Step))}
	case 'w':
		calls = []backend.ToolCallRequest{call(id(0), "write", file(0)), call(id(1), "echo", `{"after":"write"}`)}
	case 'W':
		calls = []backend.ToolCallRequest{call(id(0), "write", file(0)), call(id(1), "write", file(1))}
	}
	return backend.ModelResponse{Text: fmt.Sprintf("step %d", req.Step), Calls: calls,
		Usage: backend.Usage{InputTokens: 3, OutputTokens: killDeltas}}, ctx.Err()
}

// killLoad is the child's workload and its Sink.
type killLoad struct {
	out io.Writer
	e   *Engine

	mu      sync.Mutex
	started map[string]bool // runs this child started and has not seen end
	ended   map[string]bool
}

// Publish prints one committed event; a single small write, so a kill never
// leaves half a line in the pipe.
func (l *killLoad) Publish(ev backend.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, "ev %s %d %s\n", ev.RunID, ev.Sequence, ev.ID)
	if ev.Type.Terminal() {
		l.ended[ev.RunID] = true
		delete(l.started, ev.RunID)
	}
}

func (l *killLoad) outstanding() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for id := range l.started {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (l *killLoad) add(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended[id] {
		l.started[id] = true
	}
}

func killEngine(st *store.Store, model backend.Model, sink backend.Sink, log *slog.Logger) *Engine {
	return New(Config{Store: st, GlobalLimit: 2, Default: killProfile, Sink: sink, Log: log,
		Tools:    map[string]backend.Tool{"echo": echoTool{}, "write": &writeTool{}},
		Profiles: map[string]Profile{killProfile: {Runtime: "native", Model: model, Stop: StopConfig{MaxRounds: 20}}}})
}

func killChild(path string, seed uint64, out io.Writer) error {
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	if _, err := st.Workspace(ctx, "ws_1"); err != nil {
		if err := st.AddWorkspace(ctx, backend.Workspace{ID: "ws_1", Name: "w", Path: "/abs/w",
			DisplayPath: "~/w"}, store.By{Actor: "kill", Surface: backend.SurfaceCLI}); err != nil {
			return err
		}
	}
	l := &killLoad{out: out, started: map[string]bool{}, ended: map[string]bool{}}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l.e = killEngine(st, planModel{}, l, log)
	if err := l.e.Recover(ctx); err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	var pool []string // sessions new runs go to; earlier generations' sessions first
	runs, err := st.Runs(ctx, store.RunFilter{})
	if err != nil {
		return err
	}
	for i := len(runs) - 1; i >= 0 && len(pool) < 3; i-- {
		if !slices.Contains(pool, runs[i].SessionID) {
			pool = append(pool, runs[i].SessionID)
		}
	}
	fmt.Fprintln(out, "ready")
	go l.approve(ctx, rand.New(rand.NewPCG(seed, 2)))
	return l.work(ctx, rand.New(rand.NewPCG(seed, 1)), seed, pool)
}

// work starts runs while fewer than six of its own are unfinished, in up to
// four sessions, and now and then cancels one.
func (l *killLoad) work(ctx context.Context, rng *rand.Rand, seed uint64, pool []string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for n := 0; time.Now().Before(deadline); n++ {
		live := l.outstanding()
		if len(live) > 0 && rng.IntN(50) == 0 {
			go l.e.Cancel(ctx, live[rng.IntN(len(live))])
		}
		if len(live) < 6 {
			req := StartRequest{WorkspaceID: "ws_1", Task: fmt.Sprintf("plan:%s#%d-%d", randomPlan(rng), seed, n),
				Actor: "kill", Surface: backend.SurfaceCLI}
			if len(pool) >= 4 || (len(pool) > 0 && rng.IntN(3) > 0) {
				req.SessionID = pool[rng.IntN(len(pool))]
			}
			r, err := l.e.Start(ctx, req)
			if err != nil {
				return fmt.Errorf("start: %w", err)
			}
			l.add(r.ID)
			if req.SessionID == "" {
				pool = append(pool, r.SessionID)
			}
		}
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
	}
	return errors.New("never killed")
}

func randomPlan(rng *rand.Rand) string {
	var b strings.Builder
	for range 1 + rng.IntN(4) {
		b.WriteByte("eeeewwwWtt"[rng.IntN(10)])
	}
	return b.String()
}

// approve decides each new ticket after a random delay: most at once, some
// after up to 150 ms, one in ten never (it stays open until the kill).
// Decisions are mostly approvals, some "reject and tell", a few "reject and
// stop".
func (l *killLoad) approve(ctx context.Context, rng *rand.Rand) {
	seen := map[string]bool{}
	for {
		aps, err := l.e.Approvals(ctx, "")
		if err != nil {
			fmt.Fprintln(os.Stderr, "kill helper: approvals:", err)
		}
		for _, a := range aps {
			if seen[a.ID] {
				continue
			}
			seen[a.ID] = true
			var delay time.Duration
			switch p := rng.IntN(10); {
			case p == 0:
				continue
			case p < 4:
				delay = time.Duration(rng.IntN(150)) * time.Millisecond
			default:
				delay = time.Duration(rng.IntN(3000)) * time.Microsecond
			}
			kind := backend.ApproveOnce
			switch p := rng.IntN(20); {
			case p == 0:
				kind = backend.RejectAndStop
			case p < 3:
				kind = backend.RejectAndTell
			}
			d := backend.Decision{DecisionID: backend.NewID(backend.PrefixDecision), ApprovalID: a.ID, Kind: kind,
				SubjectHash: a.SubjectHash, Reason: "kill test", Actor: "kill", Surface: backend.SurfaceCLI}
			time.AfterFunc(delay, func() { _, _ = l.e.Decide(ctx, d) })
		}
		time.Sleep(time.Millisecond)
	}
}
