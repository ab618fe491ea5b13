package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/proc"
)

// spawnTool starts a long-lived process group the way an agent CLI adapter
// does, and tracks it with the run.
type spawnTool struct {
	mu   sync.Mutex
	pids []int
}

func (*spawnTool) Spec() backend.ToolSpec { return backend.ToolSpec{Name: "spawn"} }
func (*spawnTool) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}
func (s *spawnTool) Execute(_ context.Context, env backend.ToolEnv, _ backend.ToolInput) (backend.ToolResult, error) {
	sleep, err := proc.Look("sleep", os.Getenv("PATH"))
	if err != nil {
		return backend.ToolResult{}, err
	}
	p, err := proc.Start(context.Background(), proc.Spec{Path: sleep, Args: []string{"300"}})
	if err != nil {
		return backend.ToolResult{}, err
	}
	env.Track(p)
	s.mu.Lock()
	s.pids = append(s.pids, p.Pid())
	s.mu.Unlock()
	return backend.ToolResult{Content: "started"}, nil
}

// TestRunEndStopsTrackedProcesses: whatever way a run ends — completed,
// rejected and stopped, or stopped by a stop condition — the processes it
// tracked are gone by the time its terminal state is visible.
func TestRunEndStopsTrackedProcesses(t *testing.T) {
	spawn := call("s1", "spawn", `{}`)
	tests := []struct {
		name   string
		steps  []backend.ModelResponse
		decide backend.DecisionKind // for the write approval, if any
		stop   StopConfig
		want   backend.RunState
	}{
		{"completed", []backend.ModelResponse{{Calls: []backend.ToolCallRequest{spawn}}, {Text: "done"}},
			"", DefaultStop, backend.RunCompleted},
		{"reject and stop", []backend.ModelResponse{{Calls: []backend.ToolCallRequest{spawn}},
			{Calls: []backend.ToolCallRequest{call("w1", "write", `{"p":"a"}`)}}},
			backend.RejectAndStop, DefaultStop, backend.RunCancelled},
		{"max rounds", []backend.ModelResponse{{Calls: []backend.ToolCallRequest{spawn}},
			{Calls: []backend.ToolCallRequest{call("e1", "echo", `{}`)}}, {Calls: []backend.ToolCallRequest{call("e2", "echo", `{}`)}}},
			"", func() StopConfig { s := DefaultStop; s.MaxRounds = 2; return s }(), backend.RunCompleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), &script{}, 4)
			defer f.close(t)
			st := &spawnTool{}
			f.e.cfg.Tools["spawn"] = st
			f.e.AddProfile("stop", Profile{Runtime: "native", Model: &script{steps: tt.steps}, Stop: tt.stop})
			r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t", Profile: "stop"})
			if err != nil {
				t.Fatal(err)
			}
			if tt.decide != "" {
				f.waitState(t, r.ID, backend.RunNeedsApproval)
				aps, _ := f.e.Approvals(t.Context(), r.ID)
				if _, err := f.e.Decide(t.Context(), backend.Decision{DecisionID: "d1", ApprovalID: aps[0].ID,
					Kind: tt.decide, SubjectHash: aps[0].SubjectHash}); err != nil {
					t.Fatal(err)
				}
			}
			got := f.waitTerminal(t, r.ID)
			if got.State != tt.want {
				t.Fatalf("run ended %s (%s), want %s", got.State, got.DoneReason, tt.want)
			}
			st.mu.Lock()
			pids := st.pids
			st.mu.Unlock()
			if len(pids) != 1 {
				t.Fatalf("%d processes started", len(pids))
			}
			if err := syscall.Kill(pids[0], 0); !errors.Is(err, syscall.ESRCH) {
				t.Fatalf("the tracked process %d outlived its run (kill -0: %v)", pids[0], err)
			}
		})
	}
}

func (f *fixture) waitTerminal(t *testing.T, runID string) backend.RunSummary {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := f.e.Run(t.Context(), runID)
		if err != nil {
			t.Fatal(err)
		}
		if r.State.Terminal() {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is still %s", runID, r.State)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
