package hostile

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/llm/llmtest"
)

// nodeKinds are the non-regular files a hostile repository or command can
// leave in the workspace. make returns false when this machine cannot make
// the node (a device without CAP_MKNOD).
var nodeKinds = []struct {
	name string
	make func(path string) error
}{
	{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
	{"socket", func(p string) error {
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
		if err != nil {
			return err
		}
		ln.SetUnlinkOnClose(false)
		return ln.Close()
	}},
	{"symlink-dev-zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
	{"symlink-dev-stdin", func(p string) error { return os.Symlink("/dev/stdin", p) }},
}

// nodeTools are the file tools a hostile model points at a node.
var nodeTools = []struct {
	name string
	args func(p string) map[string]any
}{
	{"read_file", func(p string) map[string]any { return map[string]any{"path": p} }},
	{"write_file", func(p string) map[string]any { return map[string]any{"path": p, "content": "x\n"} }},
	{"edit_file", func(p string) map[string]any { return map[string]any{"path": p, "old_string": "a", "new_string": "b"} }},
	{"delete_file", func(p string) map[string]any { return map[string]any{"path": p} }},
	{"search", func(p string) map[string]any { return map[string]any{"path": p, "pattern": "x"} }},
	{"git_diff", func(p string) map[string]any { return map[string]any{"path": p} }},
}

// playFIFOs points every file tool at every kind of node, each in a run of
// its own with a 3 s run timeout and every approval approved: the run must
// end well within its timeout plus a generous grace, never hang (issue 14
// item 11). A hung tool is unblocked by opening the FIFO's other end.
func playFIFOs(t *testing.T, l *ledger) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 6)
	for _, kind := range nodeKinds {
		for _, tool := range nodeTools {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				t.Run(kind.name+"/"+tool.name, func(t *testing.T) {
					w := newWorld(t)
					node := filepath.Join(w.ws, "pipe.txt")
					must(t, kind.make(node))
					w.putScriptProfile("node", script(call{Tool: tool.name, Args: tool.args("pipe.txt")},
						call{Tool: "list_dir", Args: map[string]any{"path": "."}}), "3s")
					res := w.run("node", "approve", 25*time.Second, func() { unblockFIFO(node) })
					id := "fifo/" + kind.name + "/" + tool.name
					ended, state := w.runEnded(res)
					l.check(t, id, !res.hung && ended,
						"the run did not end within 25 s of a 3 s run timeout (hung %v, state %q after %s)",
						res.hung, state, res.elapsed.Round(time.Second))
				})
			}()
		}
	}
	wg.Wait()
	playCancelBlockedTool(t, l)
}

// unblockFIFO opens a FIFO read-write (which never blocks) so a tool stuck
// opening its other end proceeds, then closes it so a reader sees EOF.
func unblockFIFO(path string) {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	_, _ = f.Write([]byte("unblocked\n"))
	time.Sleep(100 * time.Millisecond)
	_ = f.Close()
}

// playCancelBlockedTool blocks an approved command reading a FIFO, then
// cancels the run through the API the window and the HTTP API use, and
// separately lets a short run timeout expire: either must end the run
// (issue 14 item 11: cancel and run timeouts always win over a blocked
// tool).
func playCancelBlockedTool(t *testing.T, l *ledger) {
	blocking := func(w *world, runTimeout string) string {
		node := filepath.Join(w.ws, "pipe.txt")
		must(t, syscall.Mkfifo(node, 0o644))
		w.putScriptProfile("node", script(call{Tool: "run_shell", Args: map[string]any{"command": "cat pipe.txt", "timeout_seconds": 600}}), runTimeout)
		return node
	}

	w := newWorld(t)
	node := blocking(w, "3s")
	res := w.run("node", "approve", 40*time.Second, func() { unblockFIFO(node) })
	l.check(t, "fifo/timeout-blocked-command", !res.hung && terminal(res.events) != "",
		"a 3 s run timeout did not end the run blocked in an approved command within 40 s (hung %v, ended %q after %s)",
		res.hung, terminal(res.events), res.elapsed.Round(time.Second))

	w = newWorld(t)
	node = blocking(w, "10m")
	core, err := api.Open(context.Background(), api.Config{Home: w.home, Version: "hostile", Surface: backend.SurfaceCLI})
	must(t, err)
	defer core.Close()
	t.Cleanup(func() { unblockFIFO(node) })
	wss, err := api.NewWorkspacesAPI(core).List()
	must(t, err)
	runs := api.NewRunsAPI(core)
	run, err := runs.Start(api.StartRun{WorkspaceID: wss[0].ID, Profile: "node", Task: "do the task"})
	must(t, err)
	approvals := api.NewApprovalsAPI(core)
	var pending []backend.ApprovalRequest
	if !waitFor(60*time.Second, func() bool { pending, _ = approvals.ForRun(run.ID); return len(pending) == 1 }) {
		t.Fatal("the command was never asked for")
	}
	_, err = approvals.Decide(backend.Decision{ApprovalID: pending[0].ID, Kind: backend.ApproveOnce,
		SubjectHash: pending[0].SubjectHash, Actor: "hostile", Surface: backend.SurfaceCLI})
	must(t, err)
	if !waitFor(60*time.Second, func() bool { r, _ := runs.Get(run.ID); return r.State == backend.RunApplying }) {
		t.Fatal("the approved command never ran")
	}
	start := time.Now()
	_, err = runs.Cancel(run.ID)
	ended := waitFor(30*time.Second, func() bool {
		evs, _ := runs.Events(run.ID, 0, 0)
		return terminal(evs) != ""
	})
	evs, _ := runs.Events(run.ID, 0, 0)
	l.check(t, "fifo/cancel-blocked-command", err == nil && ended && terminal(evs) == backend.EvRunCancelled,
		"cancel (%v) did not end the run blocked in an approved command within 30 s (ended %q after %s)",
		err, terminal(evs), time.Since(start).Round(time.Second))
}

// bombArgs are tool arguments a hostile model sends to exhaust the engine:
// nested deep, or huge.
func bombArgs() []struct{ name, tool, args string } {
	nest := func(open, close string, n int, inner string) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	return []struct{ name, tool, args string }{
		{"object-depth-1000", "read_file", `{"path":"README.md","x":` + nest(`{"a":`, `}`, 1000, "1") + `}`},
		{"array-depth-1000", "read_file", `{"path":"README.md","x":` + nest("[", "]", 1000, "1") + `}`},
		{"array-depth-100000", "read_file", `{"path":"README.md","x":` + nest("[", "]", 100000, "1") + `}`},
		{"path-as-deep-array", "read_file", `{"path":` + nest("[", "]", 5000, `"README.md"`) + `}`},
		{"keys-50000", "read_file", `{"path":"README.md","x":{` + manyKeys(50000) + `}}`},
		{"path-1mib", "read_file", `{"path":"` + strings.Repeat("a", 1<<20) + `"}`},
		{"content-1mib", "write_file", `{"path":"big.txt","content":"` + strings.Repeat("b", 1<<20) + `"}`},
		{"command-1mib", "run_shell", `{"command":"echo ` + strings.Repeat("c", 1<<20) + `"}`},
		{"truncated-json", "read_file", `{"path":"README.md","x":[[[[`},
		{"unicode-escapes-384kib", "read_file", `{"path":"` + strings.Repeat(`\u0000`, 1<<16) + `"}`},
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	return b.String()
}

// playBombs sends each bomb from a scripted model (OpenAI wire format on
// loopback): the run must end (the model told of the bad arguments, or the
// run failed with a clear error), never idle until killed (issue 14 item
// 11), and the model must not be left without an answer.
func playBombs(t *testing.T, l *ledger) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 3)
	for _, b := range bombArgs() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(b.name, func(t *testing.T) {
				w := newWorld(t)
				srv := llmtest.NewOpenAI(
					llmtest.Turn{Calls: []llmtest.Call{{ID: "call_bomb", Name: b.tool, Args: []string{b.args}}}},
					llmtest.Turn{Text: []string{"Understood."}},
				)
				t.Cleanup(srv.Close)
				w.putProfile("bomb", fmt.Sprintf("name = \"bomb\"\nruntime = \"native\"\nprovider = \"openai\"\nbase_url = %q\n"+
					"model = \"test-model\"\nrun_timeout = \"20s\"\n"+patientStop, srv.URL+"/v1"))
				res := w.run("bomb", "reject", 90*time.Second, nil)
				ended, end := w.runEnded(res)
				l.check(t, "bomb/"+b.name, !res.hung && ended,
					"the run did not end within 90 s of a 20 s run timeout (hung %v, ended %q after %s, exit %d): %s",
					res.hung, end, res.elapsed.Round(time.Second), res.code, lastLine(res.stderr))
			})
		}()
	}
	wg.Wait()
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}
