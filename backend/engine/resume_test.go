package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agenthub/backend"
)

// stallModel finishes step 1 with an echo call, then stalls in step 2
// until its context ends, so a restart finds the run Running. Once
// resumed, it answers with text and records what it was shown.
type stallModel struct {
	mu      sync.Mutex
	stalled chan struct{}
	seen    [][]backend.Message
}

func (m *stallModel) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	m.mu.Lock()
	m.seen = append(m.seen, req.Messages)
	m.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == backend.RoleUser && strings.HasPrefix(last.Text, "AgentHub resumed"):
		delta("picked up where it stopped")
		return backend.ModelResponse{Text: "picked up where it stopped"}, nil
	case req.Step == 1:
		return backend.ModelResponse{Calls: []backend.ToolCallRequest{call("c1", "echo", `{"step":1}`)}}, nil
	}
	close(m.stalled)
	<-ctx.Done()
	return backend.ModelResponse{}, ctx.Err()
}

// resumeInterrupted waits until a restart has left runID
// Failed(run_interrupted) and resumable, then resumes it.
func (f *fixture) resumeInterrupted(t *testing.T, runID string) backend.RunSummary {
	t.Helper()
	got := f.waitState(t, runID, backend.RunFailed)
	if got.Failure == nil || got.Failure.Code != backend.FailRunInterrupted || !got.Resumable {
		t.Fatalf("after restart: %+v", got)
	}
	next, err := f.e.Resume(t.Context(), runID, "me", backend.SurfaceCLI)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// TestResumeInterruptedRun: a run interrupted mid-step by a restart is
// Failed(run_interrupted) and resumable; resuming it starts a run in the
// same session that sees the finished step and completes, naming the run
// it resumes. Runs that were not interrupted cannot be resumed.
func TestResumeInterruptedRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	m := &stallModel{stalled: make(chan struct{})}
	f := newFixture(t, path, m, 4)
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "do the thing"})
	if err != nil {
		t.Fatal(err)
	}
	<-m.stalled
	f.close(t) // the process goes away while the run is Running

	f2 := newFixture(t, path, m, 4)
	defer f2.close(t)
	next := f2.resumeInterrupted(t, r.ID)
	if next.ID == r.ID || next.SessionID != r.SessionID {
		t.Fatalf("resumed as %+v", next)
	}
	f2.waitState(t, next.ID, backend.RunCompleted)
	evs, _ := f2.e.Events(t.Context(), next.ID, 0, 1)
	var created map[string]any
	_ = json.Unmarshal(evs[0].Payload, &created)
	if created["resumedFrom"] != r.ID {
		t.Fatalf("run.created of the resumed run: %v", created)
	}
	m.mu.Lock()
	shown := m.seen[len(m.seen)-1]
	m.mu.Unlock()
	var texts []string
	for _, msg := range shown {
		texts = append(texts, string(msg.Role)+":"+msg.Text)
	}
	joined := strings.Join(texts, "|")
	if !strings.HasPrefix(joined, "user:do the thing|assistant:") || !strings.Contains(joined, "finished 1 step(s)") {
		t.Fatalf("the resumed run saw: %s", joined)
	}
	if again, _ := f2.e.Run(t.Context(), r.ID); again.State != backend.RunFailed {
		t.Fatalf("the interrupted run changed: %s", again.State)
	}
	if _, err := f2.e.Resume(t.Context(), next.ID, "me", backend.SurfaceCLI); backend.CodeOf(err) != backend.CodeInvalidInput {
		t.Fatalf("resuming a completed run: %v", err)
	}
}

// TestWaitingRunOfAnAgentCLIIsInterruptedAtRestart (SR11): only durable
// runtimes wait across a restart; an agent CLI's conversation died with
// the process, so its waiting run ends Failed(run_interrupted), and it is
// not offered for resume either.
func TestWaitingRunOfAnAgentCLIIsInterruptedAtRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	m := &script{steps: []backend.ModelResponse{{Calls: []backend.ToolCallRequest{call("c1", "write", `{"p":"a"}`)}}}}
	cli := Profile{Runtime: "claude", Model: m, Stop: DefaultStop}
	f := newFixture(t, path, m, 4)
	f.e.AddProfile("cli", cli)
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t", Profile: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	f.waitState(t, r.ID, backend.RunNeedsApproval)
	f.close(t)

	// The profile is known at recovery, as it is when the app starts.
	f2 := openFixture(t, path, Config{GlobalLimit: 4, Default: "test",
		Tools:    map[string]backend.Tool{"echo": echoTool{}, "write": &writeTool{}},
		Profiles: map[string]Profile{"test": {Runtime: "native", Model: m, Stop: DefaultStop}, "cli": cli}})
	defer f2.close(t)
	got := f2.waitState(t, r.ID, backend.RunFailed)
	if got.Failure == nil || got.Failure.Code != backend.FailRunInterrupted || got.Resumable {
		t.Fatalf("after restart: %+v", got)
	}
	if aps, _ := f2.e.Approvals(t.Context(), r.ID); len(aps) != 0 {
		t.Fatalf("%d tickets still open", len(aps))
	}
}
