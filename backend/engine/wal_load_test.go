package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/tools"
)

// walRuns is issue 15's load: 1,800 short runs (572 MB of WAL beside a
// 79 MB database before the WAL was bounded).
const walRuns = 1800

// walProductBound is the store's WAL bound (store.walLimit) plus what may
// land past one size check: the group being committed and the bytes
// between two checks. The store's own TestWALStaysBounded checks the
// mechanism with a small bound; this checks the product's under the load
// the issue measured.
const walProductBound = 64<<20 + 8<<20

// TestWALAfterShortRuns runs 1,800 short scripted runs through the engine,
// eight sessions at a time, while readers replay finished runs (as the UI
// and `runs show` do, each read holding a snapshot), and samples the WAL
// after every finished run (each run: a model turn, an ungated list_dir,
// a second turn, about 20 events). Its peak stays under the product's bound, and
// once the engine is idle the WAL is truncated to nothing. The numbers are
// in docs/RELIABILITY.md.
func TestWALAfterShortRuns(t *testing.T) {
	if os.Getenv("AGENTHUB_WAL_LOAD") == "" {
		t.Skip("1,800 runs (2 min at load 17): make test-kill runs it (AGENTHUB_WAL_LOAD=1); the store's TestWALStaysBounded checks the bound in every run")
	}
	root, path := newWorkspace(t)
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("# w\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newGated(t, root, path)
	defer g.close(t)
	g.e.AddProfile("short", Profile{Runtime: "native", Model: shortRunModel{}, Stop: DefaultStop})
	walSize := func() int64 {
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	var peak atomic.Int64
	sample := func() {
		for n := walSize(); ; {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				return
			}
		}
	}
	ctx, stop := context.WithCancel(t.Context())
	var finished sync.Map // run id → true, for the readers
	var readers sync.WaitGroup
	var reads atomic.Int64
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for ctx.Err() == nil {
				finished.Range(func(k, _ any) bool {
					if ctx.Err() != nil {
						return false
					}
					if _, err := g.e.Events(ctx, k.(string), 0, 0); err == nil {
						reads.Add(1)
					}
					return reads.Load()%7 != 0 // a different run next time
				})
				runtimeYield()
			}
		}()
	}
	start := time.Now()
	const parallel = 8
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := range walRuns {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r, err := g.e.Start(ctx, StartRequest{WorkspaceID: "ws_1", Task: fmt.Sprint("short run ", i), Profile: "short",
				Actor: "me", Surface: backend.SurfaceCLI})
			if err != nil {
				failed.Add(1)
				t.Error(err)
				return
			}
			if !waitCompleted(t, g.e, r.ID, 5*time.Minute) {
				failed.Add(1)
				return
			}
			finished.Store(r.ID, true)
			sample()
		}()
	}
	wg.Wait()
	stop()
	readers.Wait()
	elapsed := time.Since(start)
	if failed.Load() > 0 {
		t.Fatalf("%d of %d runs did not complete", failed.Load(), walRuns)
	}
	db, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d runs in %v with %d replays beside them: WAL peak %.1f MB (bound %d MB), database %.1f MB",
		walRuns, elapsed.Round(time.Second), reads.Load(), float64(peak.Load())/(1<<20), walProductBound>>20,
		float64(db.Size())/(1<<20))
	if p := peak.Load(); p > walProductBound {
		t.Errorf("the WAL peaked at %d bytes, over the bound %d", p, walProductBound)
	}
	deadline := time.Now().Add(60 * time.Second)
	for walSize() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the WAL is still %d bytes 60 s after the last run", walSize())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shortRunModel is one short run: it lists the workspace (an ungated
// tool call), then answers.
type shortRunModel struct{}

func (shortRunModel) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	for _, m := range req.Messages {
		if m.Role == backend.RoleTool {
			delta("The workspace holds a README.")
			return backend.ModelResponse{Text: "The workspace holds a README."}, ctx.Err()
		}
	}
	delta("Looking at the workspace first.")
	return backend.ModelResponse{Text: "Looking at the workspace first.", Calls: []backend.ToolCallRequest{{ID: "c1",
		Name: tools.ListDir, Arguments: json.RawMessage(`{"path":"."}`)}}}, ctx.Err()
}

// waitCompleted waits for a run to end, completed.
func waitCompleted(t *testing.T, e *Engine, id string, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		r, err := e.Run(context.Background(), id)
		if err != nil {
			t.Error(err)
			return false
		}
		if r.State.Terminal() {
			if r.State != backend.RunCompleted {
				t.Errorf("run %s ended %s (%s)", id, r.State, r.DoneReason)
				return false
			}
			return true
		}
		if time.Now().After(deadline) {
			t.Errorf("run %s is still %s after %v", id, r.State, limit)
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func runtimeYield() { time.Sleep(time.Millisecond) }
