//go:build unix

package engine

// The deterministic crash-point sweep (docs/RELIABILITY.md): a child
// process (this test binary re-executed) runs one real run over a real
// workspace with the real write_file and delete_file tools and a real
// SQLite file, approving every ticket, with AGENTHUB_CRASHPOINT set
// (package crashpoint): at the Nth write, fsync, rename or commit of the
// effect and store paths it either exits at once ("exit", a crash) or that
// operation fails ("fail", a full disk). The parent then checks, for every
// N, what recovery must guarantee.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/store"
	"agenthub/backend/tools"
	"agenthub/workspace/crashpoint"
)

const (
	envCrashHelper = "AGENTHUB_CRASH_HELPER" // the child's data dir
	exitHung       = 4                       // the child's run did not end
	exitNoEnd      = 5                       // the run ended but its subscriber heard nothing
)

// crashImages are the workload's files: the initial content ("" = absent)
// and the content the run writes.
var crashImages = []struct{ path, before, after string }{
	{"a.txt", "A1\n", "A2\n"},     // modified by write_file
	{"b.txt", "B1\n", ""},         // removed by delete_file
	{"sub/c.txt", "", "C1\n"},     // created, with its directory
	{"d.txt", "D1\n", "D1\nD2\n"}, // modified after the others
}

func crashSteps() []backend.ModelResponse {
	write := func(id, path, content string) backend.ModelResponse {
		args, _ := json.Marshal(map[string]string{"path": path, "content": content})
		return backend.ModelResponse{Text: "writing " + path,
			Calls: []backend.ToolCallRequest{{ID: id, Name: tools.WriteFile, Arguments: args}}}
	}
	del, _ := json.Marshal(map[string]string{"path": "b.txt"})
	return []backend.ModelResponse{
		write("c1", "a.txt", "A2\n"),
		{Text: "deleting b.txt", Calls: []backend.ToolCallRequest{{ID: "c2", Name: tools.DeleteFile, Arguments: del}}},
		write("c3", "sub/c.txt", "C1\n"),
		write("c4", "d.txt", "D1\nD2\n"),
	}
}

// crashEngine is the engine of both the child and the recovering parent.
func crashEngine(dir string, st *store.Store, m backend.Model, sink backend.Sink) *Engine {
	root := filepath.Join(dir, "ws")
	roots := func(string) (string, error) { return root, nil }
	e := New(Config{Store: st, Gate: approval.NewGate(roots), Roots: roots, Sink: sink,
		Tools:    tools.New(tools.Config{CheckpointDir: filepath.Join(dir, "checkpoints")}),
		Profiles: map[string]Profile{}, Log: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if m != nil {
		e.AddProfile("p", Profile{Runtime: "native", Model: m, Stop: DefaultStop})
	}
	return e
}

// TestCrashSweepHelper is not a test: it is the child of TestCrashPointSweep.
func TestCrashSweepHelper(t *testing.T) {
	dir := os.Getenv(envCrashHelper)
	if dir == "" {
		return
	}
	os.Exit(crashChild(dir))
}

type printSink struct{ w *os.File }

func (p printSink) Publish(ev backend.Event) {
	fmt.Fprintf(p.w, "ev %s %d %s\n", ev.RunID, ev.Sequence, ev.ID)
}

func crashChild(dir string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := store.Open(ctx, filepath.Join(dir, "agenthub.db"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 2
	}
	if err := st.AddWorkspace(ctx, backend.Workspace{ID: "ws_1", Name: "w", Path: filepath.Join(dir, "ws"),
		DisplayPath: "w"}, store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		fmt.Fprintln(os.Stderr, "workspace:", err)
		return 2
	}
	e := crashEngine(dir, st, &hookedModel{steps: crashSteps()}, printSink{os.Stdout})
	if err := e.Recover(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "recover:", err)
		return 2
	}
	r, err := e.Start(ctx, StartRequest{WorkspaceID: "ws_1", Profile: "p", Task: "t", Actor: "me",
		Surface: backend.SurfaceCLI})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start:", err) // a failed commit at the very start
		return 0
	}
	subCtx, unsubscribe := context.WithCancel(ctx)
	defer unsubscribe()
	events := e.Subscribe(subCtx, r.ID, 0)
	ended := make(chan backend.EventType, 1)
	go func() {
		for ev := range events {
			if ev.Type.Terminal() {
				ended <- ev.Type
				return
			}
		}
	}()
	code := 0
	for {
		s, err := e.Run(ctx, r.ID)
		if err == nil && s.State.Terminal() {
			break
		}
		if ctx.Err() != nil {
			code = exitHung
			break
		}
		aps, _ := e.Approvals(ctx, r.ID)
		for _, ap := range aps {
			_, _ = e.Decide(ctx, backend.Decision{DecisionID: backend.NewID(backend.PrefixDecision), ApprovalID: ap.ID,
				Kind: backend.ApproveOnce, SubjectHash: ap.SubjectHash, Actor: "me", Surface: backend.SurfaceCLI})
		}
		time.Sleep(2 * time.Millisecond)
	}
	if code == 0 {
		select {
		case typ := <-ended:
			fmt.Printf("end %s\n", typ)
		case <-time.After(20 * time.Second):
			code = exitNoEnd
		}
	}
	unsubscribe() // Shutdown waits for every subscription
	sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer scancel()
	_ = e.Shutdown(sctx)
	_ = st.Close()
	return code
}

// TestCrashPointSweep runs the child once per crash point N, both as a crash
// (exit) and as a failed operation (fail), and checks after each:
//   - PRAGMA integrity_check is ok, before and after recovery;
//   - every event the child saw committed is stored;
//   - every workspace file holds its before or its after image, and the
//     record says which: a file at its after image has an applied intent
//     and a patch.applied audit entry; a file at its before image has no
//     applied intent; no intent is left open and none is a conflict;
//   - no staging file is left anywhere in the workspace (.git included);
//   - no run is left non-terminal without an owner (recovery ends or adopts
//     every one), and a second start changes nothing (exactly once);
//   - a "fail" child, whose write or commit failed, ended on its own and its
//     subscriber was told the run ended, even when the end itself could not
//     be committed.
//
// CI runs every effect-path point and a stride of the store's commits;
// AGENTHUB_CRASH_FULL=1 runs every point and AGENTHUB_CRASH_REPEAT=n repeats
// the sweep n times (make test-kill), since the store's group commits fall
// differently with timing.
func TestCrashPointSweep(t *testing.T) {
	if os.Getenv(envCrashHelper) != "" {
		return
	}
	if testing.Short() {
		t.Skip("crash sweep skipped in -short mode")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The dry run counts the points of the workload.
	dry := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "points.log")
	res := runCrashChild(t, exe, dry, "", logPath)
	if res.code != 0 {
		t.Fatalf("dry run: exit %d\n%s", res.code, res.stderr)
	}
	points := readPoints(t, logPath)
	if len(points) < 20 {
		t.Fatalf("the workload hit only %d crash points", len(points))
	}
	checkCrashDir(t, dry, res, 0)
	kinds := map[string]int{}
	for _, p := range points {
		kinds[p]++
	}
	t.Logf("%d crash points per run: %v", len(points), kinds)
	repeat := envInt(t, "AGENTHUB_CRASH_REPEAT", 1)
	// CI keeps to a few minutes: every point of the effect path, and every
	// 4th (exit) or 8th (fail) store commit; AGENTHUB_CRASH_FULL=1 takes all.
	stride := map[string]int{"exit": 4, "fail": 8}
	if os.Getenv("AGENTHUB_CRASH_FULL") != "" {
		stride = map[string]int{"exit": 1, "fail": 1}
	}
	n := 0
	for rep := range repeat {
		for _, mode := range []string{"exit", "fail"} {
			for i := 1; i <= len(points)+2; i++ {
				if i <= len(points) && strings.HasPrefix(points[i-1], "store.") && i%stride[mode] != 0 {
					continue
				}
				name := fmt.Sprintf("%d/%s/%d", rep, mode, i)
				ok := t.Run(name, func(t *testing.T) {
					dir := t.TempDir()
					res := runCrashChild(t, exe, dir, fmt.Sprintf("%d:%s", i, mode), "")
					switch {
					case mode == "exit" && res.code != crashpoint.ExitCode && res.code != 0:
						t.Fatalf("child exit %d, want %d (crash) or 0\n%s", res.code, crashpoint.ExitCode, res.stderr)
					case mode == "fail" && res.code != 0:
						t.Fatalf("child exit %d after a failed operation (%d: hung, %d: no end told)\n%s",
							res.code, exitHung, exitNoEnd, res.stderr)
					}
					checkCrashDir(t, dir, res, i)
					if t.Failed() {
						t.Logf("child stderr:\n%s", res.stderr)
					}
				})
				n++
				if !ok {
					return
				}
			}
		}
	}
	t.Logf("%d crash points checked", n)
}

type childResult struct {
	code     int
	reported []evRef
	ended    string
	stderr   string
}

func runCrashChild(t *testing.T, exe, dir, at, logPath string) childResult {
	t.Helper()
	if err := seedCrashWorkspace(filepath.Join(dir, "ws")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestCrashSweepHelper$")
	cmd.Env = append(os.Environ(), envCrashHelper+"="+dir, "AGENTHUB_CRASHPOINT="+at,
		"AGENTHUB_CRASHPOINT_LOG="+logPath)
	var out bytes.Buffer
	errb := &capped{}
	cmd.Stdout, cmd.Stderr = &out, errb
	err := cmd.Run()
	res := childResult{stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("child: %v", err)
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 4 && f[0] == "ev":
			seq, _ := strconv.ParseInt(f[2], 10, 64)
			res.reported = append(res.reported, evRef{run: f[1], seq: seq, id: f[3]})
		case len(f) == 2 && f[0] == "end":
			res.ended = f[1]
		}
	}
	return res
}

func seedCrashWorkspace(root string) error {
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		return err
	}
	for _, im := range crashImages {
		if im.before != "" {
			if err := os.WriteFile(filepath.Join(root, im.path), []byte(im.before), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

func readPoints(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if _, name, ok := strings.Cut(line, " "); ok {
			out = append(out, name)
		}
	}
	return out
}

// checkCrashDir recovers dir as the next start would and checks the sweep's
// invariants.
func checkCrashDir(t *testing.T, dir string, res childResult, point int) {
	t.Helper()
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(dir, "agenthub.db"))
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer st.Close()
	if err := st.Integrity(ctx); err != nil {
		t.Fatalf("before recovery: %v", err)
	}
	for _, ev := range res.reported {
		evs, err := st.Events(ctx, ev.run, ev.seq-1, 1)
		if err != nil || len(evs) != 1 || evs[0].ID != ev.id {
			t.Errorf("committed event %s/%d (%s) is lost: %v %v", ev.run, ev.seq, ev.id, evs, err)
		}
	}
	e := crashEngine(dir, st, nil, nil)
	if err := e.Recover(ctx); err != nil {
		t.Fatalf("recover: %v", err)
	}
	shutdown(t, e)
	if err := st.Integrity(ctx); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
	checkCrashFiles(t, dir, st)
	runs, err := st.Runs(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if !r.State.Terminal() {
			t.Errorf("run %s is %s after recovery, with no owner", r.ID, r.State)
		}
	}
	if point == 0 && (len(runs) != 1 || runs[0].State != backend.RunCompleted || res.ended != string(backend.EvRunCompleted)) {
		t.Errorf("dry run: runs %+v, subscriber saw %q; want one completed run", runs, res.ended)
	}
	// Exactly once: a second start finds nothing left to do.
	before := crashCounts(t, st)
	e2 := crashEngine(dir, st, nil, nil)
	if err := e2.Recover(ctx); err != nil {
		t.Fatalf("second recover: %v", err)
	}
	shutdown(t, e2)
	if after := crashCounts(t, st); after != before {
		t.Errorf("a second start changed the record: %s, then %s", before, after)
	}
}

func shutdown(t *testing.T, e *Engine) {
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.Shutdown(sctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// crashCounts summarises the record: events per run, audit entries, intents
// by state.
func crashCounts(t *testing.T, st *store.Store) string {
	t.Helper()
	ctx := t.Context()
	runs, err := st.Runs(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "%s:%s:%d ", r.ID, r.State, r.LastSeq)
	}
	audit, err := st.AuditEntries(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := st.Intents(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "audit:%d", len(audit))
	for _, in := range ins {
		fmt.Fprintf(&b, " %s:%s", in.ID, in.State)
	}
	return b.String()
}

// checkCrashFiles: every file at its before or after image, the record
// saying which, no open intent, no conflict, no staging file.
func checkCrashFiles(t *testing.T, dir string, st *store.Store) {
	t.Helper()
	ctx := t.Context()
	ins, err := st.Intents(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	audit, err := st.AuditEntries(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	appliedAudit := map[string]bool{}
	for _, a := range audit {
		if a.Kind == "patch.applied" {
			if id, _ := a.Data["checkpointId"].(string); id != "" {
				appliedAudit[id] = true
			}
		}
	}
	applied := map[string]string{} // path → intent id
	for _, in := range ins {
		switch in.State {
		case store.IntentApplied:
			for _, f := range in.Files {
				applied[f.Path] = in.ID
			}
			if !appliedAudit[in.ID] {
				t.Errorf("intent %s is applied with no patch.applied audit entry", in.ID)
			}
		case store.IntentNotApplied:
		default:
			t.Errorf("intent %s is %s after recovery (%s)", in.ID, in.State, in.Outcome)
		}
	}
	root := filepath.Join(dir, "ws")
	for _, im := range crashImages {
		got := "" // absent
		if data, err := os.ReadFile(filepath.Join(root, im.path)); err == nil {
			got = string(data)
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		id, isApplied := applied[im.path]
		switch {
		case got == im.after && im.after != im.before:
			if !isApplied {
				t.Errorf("%s holds its after image and no applied intent records it", im.path)
			}
		case got == im.before:
			if isApplied {
				t.Errorf("%s holds its before image but intent %s says applied", im.path, id)
			}
		default:
			t.Errorf("%s holds %q: neither its before %q nor its after %q", im.path, got, im.before, im.after)
		}
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".agenthub-") {
			t.Errorf("staging file left: %s", strings.TrimPrefix(p, root))
		}
		return nil
	})
}
