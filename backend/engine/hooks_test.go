package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"agenthub/backend"
)

// recorder is a hook on every phase: it logs each call and answers with
// what the test configured.
type recorder struct {
	name      string
	gate      func(backend.CallView) backend.GateDecision
	remove    []string
	drop      []string
	terminate bool

	mu  sync.Mutex
	log []string
}

func (r *recorder) HookName() string { return r.name }

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// ended returns the lines once RunEnd was called: the terminal state is
// visible before RunEnd's hooks run, so a test that saw it waits for them.
func (r *recorder) ended(t *testing.T) []string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if l := r.lines(); len(l) > 0 && strings.HasPrefix(l[len(l)-1], "RunEnd") {
			return l
		}
	}
	return r.lines()
}

func (r *recorder) RunStart(_ context.Context, v backend.RunView) {
	r.add(fmt.Sprintf("RunStart recovered=%v", v.Recovered))
}
func (r *recorder) StepStart(_ context.Context, v backend.StepView) {
	r.add(fmt.Sprintf("StepStart %d", v.Step))
}
func (r *recorder) BeforeInference(_ context.Context, v backend.StepView) backend.BeforeInference {
	r.add(fmt.Sprintf("BeforeInference %d", v.Step))
	return backend.BeforeInference{RemoveTools: r.remove}
}
func (r *recorder) AfterInference(_ context.Context, v backend.InferenceView) backend.AfterInference {
	r.add(fmt.Sprintf("AfterInference %d calls=%d", v.Step, len(v.Calls)))
	return backend.AfterInference{DropCalls: r.drop, Terminate: r.terminate}
}
func (r *recorder) ToolGate(_ context.Context, c backend.CallView) backend.GateDecision {
	r.add("ToolGate " + c.Call.ID)
	if r.gate == nil {
		return backend.AllowCall()
	}
	return r.gate(c)
}
func (r *recorder) BeforeToolExecute(_ context.Context, c backend.CallView) {
	r.add("BeforeToolExecute " + c.Call.ID)
}
func (r *recorder) AfterToolExecute(_ context.Context, c backend.CallView, res backend.ResultView) {
	r.add(fmt.Sprintf("AfterToolExecute %s %s", c.Call.ID, res.Status))
}
func (r *recorder) StepEnd(_ context.Context, v backend.StepView) {
	r.add(fmt.Sprintf("StepEnd %d", v.Step))
}
func (r *recorder) RunEnd(_ context.Context, v backend.RunEndView) {
	r.add(fmt.Sprintf("RunEnd %s %s", v.State, v.Code))
}

// toolsSeen wraps a model and records the tool names of each request.
type toolsSeen struct {
	backend.Model
	mu    sync.Mutex
	tools [][]string
}

func (m *toolsSeen) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	m.mu.Lock()
	m.tools = append(m.tools, names)
	m.mu.Unlock()
	return m.Model.Stream(ctx, req, delta)
}

// newHookFixture is newFixture with hooks on the engine.
func newHookFixture(t *testing.T, path string, model backend.Model, hooks ...backend.Hook) *fixture {
	t.Helper()
	return newHookProfile(t, path, Profile{Runtime: "native", Model: model, Stop: DefaultStop}, hooks...)
}

// newHookProfile is newHookFixture with a given profile.
func newHookProfile(t *testing.T, path string, p Profile, hooks ...backend.Hook) *fixture {
	t.Helper()
	w := &writeTool{}
	f := openFixture(t, path, Config{GlobalLimit: 4, Default: "test", Hooks: hooks,
		Tools:    map[string]backend.Tool{"echo": echoTool{}, "write": w},
		Profiles: map[string]Profile{"test": p}})
	f.write = w
	return f
}

func (f *fixture) approveAll(t *testing.T, runID string) {
	t.Helper()
	aps, err := f.e.Approvals(t.Context(), runID)
	if err != nil || len(aps) != 1 {
		t.Fatalf("approvals = %v, %v", aps, err)
	}
	if _, err := f.e.Decide(t.Context(), backend.Decision{DecisionID: "d_" + aps[0].ID, ApprovalID: aps[0].ID,
		Kind: backend.ApproveOnce, SubjectHash: aps[0].SubjectHash, Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
}

// callResults is "id status content" for every call of a run.
func (f *fixture) callResults(t *testing.T, runID string) []string {
	t.Helper()
	calls, err := f.st.Calls(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range calls {
		var res struct {
			Content string `json:"content"`
		}
		_ = json.Unmarshal(c.Result, &res)
		out = append(out, fmt.Sprintf("%s %s %s", c.ID, c.Status, res.Content))
	}
	return out
}

func calls(cs ...backend.ToolCallRequest) backend.ModelResponse {
	return backend.ModelResponse{Calls: cs}
}

// TestHookPhasesInOrder: every phase's hook runs in the order of §3, the
// right number of times, including across a suspension (RunStart once,
// BeforeToolExecute once per executed call, StepEnd after the replay).
func TestHookPhasesInOrder(t *testing.T) {
	tests := []struct {
		name    string
		step    backend.ModelResponse
		approve bool
		want    []string
	}{
		{"tool call", calls(call("c1", "echo", `{}`)), false, []string{
			"RunStart recovered=false", "StepStart 1", "BeforeInference 1", "AfterInference 1 calls=1",
			"ToolGate c1", "BeforeToolExecute c1", "AfterToolExecute c1 Succeeded", "StepEnd 1",
			"StepStart 2", "BeforeInference 2", "AfterInference 2 calls=0", "StepEnd 2", "RunEnd Completed "}},
		{"suspended and approved", calls(call("c1", "write", `{"p":"a"}`), call("c2", "echo", `{}`)), true, []string{
			"RunStart recovered=false", "StepStart 1", "BeforeInference 1", "AfterInference 1 calls=2",
			"ToolGate c1", "ToolGate c2", "BeforeToolExecute c2", "AfterToolExecute c2 Succeeded",
			"BeforeToolExecute c1", "AfterToolExecute c1 Succeeded", "StepEnd 1",
			"StepStart 2", "BeforeInference 2", "AfterInference 2 calls=0", "StepEnd 2", "RunEnd Completed "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			rec := &recorder{name: "rec"}
			f := newHookFixture(t, filepath.Join(t.TempDir(), "a.db"),
				&script{steps: []backend.ModelResponse{tt.step, {Text: "done"}}}, rec)
			defer f.close(t)
			r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
			if err != nil {
				t.Fatal(err)
			}
			if tt.approve {
				f.waitState(t, r.ID, backend.RunNeedsApproval)
				f.approveAll(t, r.ID)
			}
			f.waitState(t, r.ID, backend.RunCompleted)
			if diff := cmp.Diff(tt.want, rec.ended(t)); diff != "" {
				t.Errorf("hook calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHookRunStartPerActivation: a restart while waiting is a new
// activation (RunStart again, recovered); RunEnd runs once, at the end.
func TestHookRunStartPerActivation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	m := &script{steps: []backend.ModelResponse{calls(call("c1", "write", `{"p":"a"}`)), {Text: "done"}}}
	rec1 := &recorder{name: "rec"}
	f := newHookFixture(t, path, m, rec1)
	r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	f.waitState(t, r.ID, backend.RunNeedsApproval)
	f.close(t)
	want1 := []string{"RunStart recovered=false", "StepStart 1", "BeforeInference 1", "AfterInference 1 calls=1",
		"ToolGate c1"}
	if diff := cmp.Diff(want1, rec1.lines()); diff != "" {
		t.Errorf("first activation (-want +got):\n%s", diff)
	}

	rec2 := &recorder{name: "rec"}
	f2 := newHookFixture(t, path, m, rec2)
	defer f2.close(t)
	f2.approveAll(t, r.ID)
	f2.waitState(t, r.ID, backend.RunCompleted)
	want2 := []string{"RunStart recovered=true", "BeforeToolExecute c1", "AfterToolExecute c1 Succeeded",
		"StepEnd 1", "StepStart 2", "BeforeInference 2", "AfterInference 2 calls=0", "StepEnd 2", "RunEnd Completed "}
	if diff := cmp.Diff(want2, rec2.ended(t)); diff != "" {
		t.Errorf("second activation (-want +got):\n%s", diff)
	}
}

func gateFor(d backend.GateDecision) func(backend.CallView) backend.GateDecision {
	return func(backend.CallView) backend.GateDecision { return d }
}

// TestHookGatePrecedence: GT2 over two hooks, and how hooks compose with
// the policy gate (they can only make a call stricter).
func TestHookGatePrecedence(t *testing.T) {
	suspend := func(title string) backend.GateDecision {
		return backend.SuspendCall(backend.Suspension{Title: title, Reason: "hook"})
	}
	tests := []struct {
		name    string
		tool    string
		a, b    backend.GateDecision
		state   backend.RunState
		results []string // "" when the call is suspended
		ticket  string   // the pending ticket's title
		execs   int      // write executions
	}{
		{"allow allow", "echo", backend.AllowCall(), backend.AllowCall(), backend.RunCompleted,
			[]string{"c1 Succeeded {}"}, "", 0},
		{"set result beats allow", "echo", backend.AllowCall(), backend.SetCallResult("B"), backend.RunCompleted,
			[]string{"c1 Succeeded B"}, "", 0},
		{"first set result wins", "echo", backend.SetCallResult("A"), backend.SetCallResult("B"),
			backend.RunCompleted, []string{"c1 Succeeded A"}, "", 0},
		{"suspend beats set result", "echo", backend.SetCallResult("A"), suspend("B"), backend.RunNeedsApproval,
			nil, "B", 0},
		{"first suspend wins", "echo", suspend("A"), suspend("B"), backend.RunNeedsApproval, nil, "A", 0},
		{"block beats suspend", "echo", suspend("A"), backend.BlockCall("no"), backend.RunFailed,
			[]string{"c1 Failed permission_denied: no"}, "", 0},
		{"set result skips a gated tool", "write", backend.SetCallResult("A"), backend.AllowCall(),
			backend.RunCompleted, []string{"c1 Succeeded A"}, "", 0},
		{"allow cannot override ask", "write", backend.AllowCall(), backend.AllowCall(), backend.RunNeedsApproval,
			nil, "write", 0},
		{"suspend under ask is the policy ticket", "write", suspend("A"), backend.AllowCall(),
			backend.RunNeedsApproval, nil, "write", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			a := &recorder{name: "a", gate: gateFor(tt.a)}
			b := &recorder{name: "b", gate: gateFor(tt.b)}
			m := &script{steps: []backend.ModelResponse{calls(call("c1", tt.tool, `{}`)), {Text: "done"}}}
			f := newHookFixture(t, filepath.Join(t.TempDir(), "a.db"), m, a, b)
			defer f.close(t)
			r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
			if err != nil {
				t.Fatal(err)
			}
			got := f.waitState(t, r.ID, tt.state)
			if tt.state == backend.RunFailed && (got.Failure == nil || got.Failure.Code != backend.FailPermissionDenied) {
				t.Errorf("failure = %+v, want permission_denied", got.Failure)
			}
			if tt.results != nil {
				if diff := cmp.Diff(tt.results, f.callResults(t, r.ID)); diff != "" {
					t.Errorf("calls (-want +got):\n%s", diff)
				}
			}
			if tt.ticket != "" {
				aps, err := f.e.Approvals(t.Context(), r.ID)
				if err != nil || len(aps) != 1 || aps[0].Title != tt.ticket {
					t.Errorf("approvals = %+v, %v; want one titled %q", aps, err, tt.ticket)
				}
			}
			if f.write.executions != tt.execs {
				t.Errorf("write executed %d times, want %d", f.write.executions, tt.execs)
			}
		})
	}
}

// TestHookBlockBackfills: a Block fails the call, backfills the later
// calls interrupted and ends the run Failed(permission_denied) (GT4).
func TestHookBlockBackfills(t *testing.T) {
	defer goleak.VerifyNone(t)
	rec := &recorder{name: "rec", gate: func(c backend.CallView) backend.GateDecision {
		if c.Call.ID == "c2" {
			return backend.BlockCall("not c2")
		}
		return backend.AllowCall()
	}}
	m := &script{steps: []backend.ModelResponse{calls(call("c1", "echo", `{}`), call("c2", "echo", `{}`),
		call("c3", "echo", `{}`))}}
	f := newHookFixture(t, filepath.Join(t.TempDir(), "a.db"), m, rec)
	defer f.close(t)
	r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	got := f.waitState(t, r.ID, backend.RunFailed)
	if got.Failure == nil || got.Failure.Code != backend.FailPermissionDenied {
		t.Errorf("failure = %+v, want permission_denied", got.Failure)
	}
	want := []string{"c1 Succeeded {}", "c2 Failed permission_denied: not c2", "c3 Failed interrupted"}
	if diff := cmp.Diff(want, f.callResults(t, r.ID)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	lines := rec.ended(t)
	if slices.Contains(lines, "ToolGate c3") || slices.Contains(lines, "BeforeToolExecute c2") {
		t.Errorf("hook calls after the block: %v", lines)
	}
	if last := lines[len(lines)-1]; last != "RunEnd Failed permission_denied" {
		t.Errorf("last hook call %q", last)
	}
}

// TestHookRemovesTool: a removed tool is not in the request, and a call to
// it fails "not found" without executing.
func TestHookRemovesTool(t *testing.T) {
	defer goleak.VerifyNone(t)
	m := &toolsSeen{Model: &script{steps: []backend.ModelResponse{calls(call("c1", "write", `{}`)), {Text: "done"}}}}
	f := newHookFixture(t, filepath.Join(t.TempDir(), "a.db"), m, &recorder{name: "rec", remove: []string{"write"}})
	defer f.close(t)
	r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	f.waitState(t, r.ID, backend.RunCompleted)
	m.mu.Lock()
	defer m.mu.Unlock()
	if diff := cmp.Diff([][]string{{"echo"}, {"echo"}}, m.tools); diff != "" {
		t.Errorf("request tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c1 Failed tool 'write' not found"}, f.callResults(t, r.ID)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if f.write.executions != 0 {
		t.Errorf("write executed %d times", f.write.executions)
	}
}

// TestHookAfterInference: dropped calls are never recorded; termination
// ends the run Completed(behavior_requested) with no call run.
func TestHookAfterInference(t *testing.T) {
	tests := []struct {
		name   string
		hook   *recorder
		reason string
		calls  []string
		steps  int
	}{
		{"drop", &recorder{name: "rec", drop: []string{"c1"}}, backend.DoneNatural, []string{"c2 Succeeded {}"}, 2},
		{"terminate", &recorder{name: "rec", terminate: true}, backend.DoneBehaviorRequested, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			m := &script{steps: []backend.ModelResponse{calls(call("c1", "echo", `{}`), call("c2", "echo", `{}`)),
				{Text: "done"}}}
			f := newHookFixture(t, filepath.Join(t.TempDir(), "a.db"), m, tt.hook)
			defer f.close(t)
			r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
			got := f.waitState(t, r.ID, backend.RunCompleted)
			if got.DoneReason != tt.reason {
				t.Errorf("done reason %q, want %q", got.DoneReason, tt.reason)
			}
			if diff := cmp.Diff(tt.calls, f.callResults(t, r.ID)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if m.calls != tt.steps {
				t.Errorf("model called %d times, want %d", m.calls, tt.steps)
			}
		})
	}
}

// TestHookParallelAndProfile: under a parallel executor every phase's hook
// runs once per call, a Block still ends the run (GT4), and a profile's
// hooks come after the engine's at equal rank.
func TestHookParallelAndProfile(t *testing.T) {
	tests := []struct {
		name    string
		gate    map[string]backend.GateDecision // by call id, for the engine's hook
		profile backend.GateDecision            // the profile's hook, for every call
		state   backend.RunState
		calls   []string
		log     []string
	}{
		{"both run", nil, backend.AllowCall(), backend.RunCompleted,
			[]string{"c1 Succeeded {}", "c2 Succeeded {}"},
			[]string{"ToolGate c1", "ToolGate c2", "BeforeToolExecute c1", "BeforeToolExecute c2",
				"AfterToolExecute c1 Succeeded", "AfterToolExecute c2 Succeeded"}},
		{"engine hook first at equal rank", map[string]backend.GateDecision{"c1": backend.SetCallResult("engine")},
			backend.SetCallResult("profile"), backend.RunCompleted,
			[]string{"c1 Succeeded engine", "c2 Succeeded profile"},
			[]string{"ToolGate c1", "ToolGate c2"}},
		{"block", map[string]backend.GateDecision{"c1": backend.BlockCall("no")}, backend.AllowCall(),
			backend.RunFailed, []string{"c1 Failed permission_denied: no", "c2 Failed interrupted"},
			[]string{"ToolGate c1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			rec := &recorder{name: "engine", gate: func(c backend.CallView) backend.GateDecision {
				return tt.gate[c.Call.ID]
			}}
			prof := &recorder{name: "profile", gate: gateFor(tt.profile)}
			m := &script{steps: []backend.ModelResponse{calls(call("c1", "echo", `{}`), call("c2", "echo", `{}`)),
				{Text: "done"}}}
			f := newHookProfile(t, filepath.Join(t.TempDir(), "a.db"), Profile{Runtime: "native", Model: m,
				Stop: DefaultStop, Executor: ExecParallelBatch, Hooks: []backend.Hook{prof}}, rec)
			defer f.close(t)
			r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
			f.waitState(t, r.ID, tt.state)
			if diff := cmp.Diff(tt.calls, f.callResults(t, r.ID)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			var got []string
			for _, l := range rec.lines() {
				if strings.HasPrefix(l, "ToolGate") || strings.Contains(l, "ToolExecute") {
					got = append(got, l)
				}
			}
			if diff := cmp.Diff(tt.log, got); diff != "" {
				t.Errorf("engine hook calls (-want +got):\n%s", diff)
			}
		})
	}
}
