package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/store"
)

// nested is a JSON object whose value is nested depth arrays deep.
func nested(depth int) string {
	return `{"a":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
}

// callResult is the stored result of one call.
func callResult(t *testing.T, st *store.Store, runID, callID string) store.Call {
	t.Helper()
	calls, err := st.Calls(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if c.ID == callID {
			return c
		}
	}
	t.Fatalf("no call %s", callID)
	return store.Call{}
}

// Tool arguments nested 1,000 deep failed the message insert and left the
// run idling until killed. Arguments too deep or too large are now an
// invalid_input result the model reads, the tool never runs, and the run
// goes on to its next step.
func TestHostileArgumentsFailTheCallNotTheRun(t *testing.T) {
	cases := []struct{ name, args string }{
		{"nested 1,000 deep", nested(1000)},
		{"nested 65 deep", nested(65)},
		{"over the size limit", `{"a":"` + strings.Repeat("x", 8<<20) + `"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{call("c1", "echo", tc.args),
				call("c2", "echo", `{"ok":true}`)}}}}
			f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), m, 4)
			defer f.close(t)
			r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
			if err != nil {
				t.Fatal(err)
			}
			f.waitState(t, r.ID, backend.RunCompleted)
			c := callResult(t, f.st, r.ID, "c1")
			if c.Status != backend.CallFailed || !strings.Contains(string(c.Result), "invalid_input") {
				t.Fatalf("call c1: %s %s", c.Status, c.Result)
			}
			if len(c.Arguments) > 1024 {
				t.Errorf("the refused arguments were stored whole (%d bytes)", len(c.Arguments))
			}
			if c2 := callResult(t, f.st, r.ID, "c2"); c2.Status != backend.CallSucceeded {
				t.Fatalf("the next call of the batch: %s %s", c2.Status, c2.Result)
			}
		})
	}
	// 64 deep is within the bound.
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{call("c1", "echo", nested(63))}}}}
	f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), m, 4)
	defer f.close(t)
	r, _ := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	f.waitState(t, r.ID, backend.RunCompleted)
	if c := callResult(t, f.st, r.ID, "c1"); c.Status != backend.CallSucceeded {
		t.Fatalf("64 levels: %s %s", c.Status, c.Result)
	}
}

// blockTool ignores its context and blocks until released, as a tool stuck
// in open(2) on a FIFO did.
type blockTool struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newBlockTool() *blockTool {
	return &blockTool{started: make(chan struct{}, 8), release: make(chan struct{})}
}

func (*blockTool) Spec() backend.ToolSpec { return backend.ToolSpec{Name: "block"} }
func (*blockTool) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}
func (b *blockTool) Execute(context.Context, backend.ToolEnv, backend.ToolInput) (backend.ToolResult, error) {
	b.started <- struct{}{}
	<-b.release
	return backend.ToolResult{Content: "finished late"}, nil
}
func (b *blockTool) free() { b.once.Do(func() { close(b.release) }) }

// Cancel and the run's timeout win over a tool that ignores its context:
// the engine stops waiting for it, records the call cancelled and ends the
// run, whatever the tool does later.
func TestCancelAndTimeoutWinOverABlockedTool(t *testing.T) {
	for _, executor := range []Executor{ExecSequential, ExecParallelBatch} {
		for _, how := range []string{"cancel", "timeout"} {
			t.Run(string(executor)+" "+how, func(t *testing.T) {
				b := newBlockTool()
				m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{call("c1", "block", `{}`)}}}}
				p := Profile{Runtime: "native", Model: m, Stop: DefaultStop, Executor: executor}
				if how == "timeout" {
					p.RunTimeout = time.Second
				}
				f := openFixture(t, filepath.Join(t.TempDir(), "a.db"), Config{GlobalLimit: 4, Default: "test",
					Tools: map[string]backend.Tool{"block": b}, Profiles: map[string]Profile{"test": p}})
				defer f.close(t)
				defer b.free()
				r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
				if err != nil {
					t.Fatal(err)
				}
				select {
				case <-b.started:
				case <-time.After(30 * time.Second):
					t.Fatal("the tool never started")
				}
				want := backend.RunFailed
				if how == "cancel" {
					want = backend.RunCancelled
					done := make(chan error, 1)
					go func() { _, err := f.e.Cancel(context.Background(), r.ID); done <- err }()
					select {
					case err := <-done:
						if err != nil {
							t.Fatal(err)
						}
					case <-time.After(30 * time.Second):
						t.Fatal("cancel blocked behind the tool")
					}
				}
				deadline := time.Now().Add(30 * time.Second)
				for {
					got, err := f.e.Run(t.Context(), r.ID)
					if err != nil {
						t.Fatal(err)
					}
					if got.State == want {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("run is %s, want %s: the engine waited for the blocked tool", got.State, want)
					}
					time.Sleep(10 * time.Millisecond)
				}
				if c := callResult(t, f.st, r.ID, "c1"); c.Status != backend.CallCancelled {
					t.Fatalf("call: %s %s", c.Status, c.Result)
				}
			})
		}
	}
}

// In a parallel batch, a write to a script and a command that runs it must
// not run together: the command's approval bound the script as it was, and
// the write would change it under the running command. The later call in
// call order loses, as for two writes of one file.
func TestBatchConflictsBetweenWritesAndTheFilesCommandsRun(t *testing.T) {
	write := func(id, path string) *plan {
		return &plan{c: &callState{Req: call(id, "write_file", `{}`)}, action: &backend.GatedAction{
			Kind: backend.ActionPatch, Subject: json.RawMessage(`{"kind":"patch","paths":["` + path + `"]}`)}}
	}
	shell := func(id string, files ...string) *plan {
		subj := `{"kind":"shell","command":"make","files":[`
		for i, f := range files {
			if i > 0 {
				subj += ","
			}
			subj += `{"path":"` + f + `","sha256":"00"}`
		}
		return &plan{c: &callState{Req: call(id, "run_shell", `{}`)}, action: &backend.GatedAction{
			Kind: backend.ActionShell, Subject: json.RawMessage(subj + `]}`)}}
	}
	cases := []struct {
		name  string
		plans []*plan
		lost  []bool
	}{
		{"write then run", []*plan{write("w", "build.sh"), shell("s", "build.sh")}, []bool{false, true}},
		{"run then write", []*plan{shell("s", "Makefile", "build.sh"), write("w", "build.sh")}, []bool{false, true}},
		{"two commands share a Makefile", []*plan{shell("a", "Makefile"), shell("b", "Makefile")}, []bool{false, false}},
		{"unrelated", []*plan{write("w", "a.txt"), shell("s", "Makefile")}, []bool{false, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			markConflicts(tc.plans)
			for i, p := range tc.plans {
				if (p.conflict != "") != tc.lost[i] {
					t.Errorf("call %s: conflict %q, want lost=%v", p.c.Req.ID, p.conflict, tc.lost[i])
				}
			}
		})
	}
}
