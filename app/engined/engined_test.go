package engined_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"agenthub/app/api"
	"agenthub/app/cli"
	"agenthub/app/engineclient"
)

// The test binary doubles as the agenthub program: with this variable set
// it runs cli.Main, so every test below drives real processes (clients,
// the engine they start in the background) exactly as a user's shell does.
const asCLI = "AGENTHUB_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		os.Exit(cli.Main(cli.Env{Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
			Assets: fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}}, Version: testVersion(),
			Window: windowStub}))
	}
	os.Exit(m.Run())
}

// testVersion is the program's version: "test", or another one to play an
// engine started by an earlier release.
func testVersion() string {
	if v := os.Getenv("AGENTHUB_TEST_VERSION"); v != "" {
		return v
	}
	return "test"
}

// windowStub stands for the desktop window (no display in this suite): it
// opens the core as the window does, says so, and closes on SIGTERM.
func windowStub(core *api.Core, _ fs.FS) error {
	if err := core.Open(context.Background()); err != nil {
		return err
	}
	fmt.Println("window-stub open")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	return core.Close()
}

// wait is how long a condition may take on a loaded machine.
const wait = 60 * time.Second

// box is one data directory and the environment of commands run on it.
type box struct {
	t    *testing.T
	home string
	env  []string
}

func newBox(t *testing.T, extra ...string) *box {
	t.Helper()
	// Unix socket paths are short: a data directory under /tmp.
	home, err := os.MkdirTemp("", "ah-engine-")
	if err != nil {
		t.Fatal(err)
	}
	b := &box{t: t, home: home}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTHUB_") {
			b.env = append(b.env, kv)
		}
	}
	b.env = append(b.env, asCLI+"=1", "AGENTHUB_HOME="+home)
	b.env = append(b.env, extra...)
	t.Cleanup(func() {
		b.stopEngine()
		os.RemoveAll(home)
	})
	return b
}

// stopEngine stops the engine if one runs, and kills it if it does not
// stop, so no test leaves a process behind.
func (b *box) stopEngine() {
	c, err := engineclient.Dial(b.home)
	if err != nil {
		return
	}
	st, _ := c.Status(context.Background())
	if code, _, errOut := b.cmd(nil, "engine", "stop"); code != 0 {
		b.t.Logf("engine stop: %d %s", code, errOut)
		if st.Pid > 0 {
			_ = syscall.Kill(st.Pid, syscall.SIGKILL)
		}
	}
}

// cmd runs agenthub with args and returns its exit code and output.
func (b *box) cmd(stdin []byte, args ...string) (int, string, string) {
	b.t.Helper()
	c := b.command(args...)
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		b.t.Fatalf("agenthub %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

func (b *box) command(args ...string) *exec.Cmd {
	c := exec.Command(os.Args[0], args...)
	c.Env = b.env
	c.Dir = b.home
	return c
}

func (b *box) must(args ...string) string {
	b.t.Helper()
	code, out, errOut := b.cmd(nil, args...)
	if code != 0 {
		b.t.Fatalf("agenthub %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

func (b *box) status() (engineclient.Status, bool) {
	c, err := engineclient.Dial(b.home)
	if err != nil {
		return engineclient.Status{}, false
	}
	st, err := c.Status(context.Background())
	return st, err == nil
}

// gitWorkspace makes a real git repository with a README.
func gitWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Widget\n\nA small project.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

var approveLine = regexp.MustCompile(`agenthub approve (\S+)`)

func pendingID(t *testing.T, out string) string {
	t.Helper()
	m := approveLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no 'agenthub approve ID' line in:\n%s", out)
	}
	return m[1]
}

type runView struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	Pending int    `json:"pendingApprovals"`
}

func (b *box) runs() []runView {
	b.t.Helper()
	var list []runView
	if err := json.Unmarshal([]byte(b.must("runs", "list", "--json")), &list); err != nil {
		b.t.Fatal(err)
	}
	return list
}

// TestEngineStartsOnDemandAndOwnsRuns: the first command that changes
// something starts the engine in the background; later commands are its
// clients (same pid); the socket is the user's alone; a demo run left
// waiting (exit 3) is approved by a later command and completes.
func TestEngineStartsOnDemandAndOwnsRuns(t *testing.T) {
	b := newBox(t)
	ws := gitWorkspace(t)
	if _, up := b.status(); up {
		t.Fatal("an engine runs before any command")
	}
	b.must("workspace", "add", ws)
	st, up := b.status()
	if !up || st.Surface != "engine" || st.Pid == os.Getpid() {
		t.Fatalf("workspace add did not start a background engine: %+v %v", st, up)
	}
	fi, err := os.Stat(engineclient.SocketPath(b.home))
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket: %v %v, want a socket of mode 0600", fi.Mode(), err)
	}
	code, out, errOut := b.cmd(nil, "run", "--workspace", ws, "show me around")
	if code != cli.ExitWaiting {
		t.Fatalf("run: exit %d, want 3\n%s%s", code, out, errOut)
	}
	id := pendingID(t, out+errOut)
	// The run waits in the engine, not in the command that ended.
	if list := b.runs(); len(list) != 1 || list[0].State != "NeedsApproval" || list[0].Pending != 1 {
		t.Fatalf("runs after exit 3: %+v", list)
	}
	code, out, errOut = b.cmd(nil, "approve", id, "--on-approval", "approve")
	if code != 0 {
		t.Fatalf("approve later: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "AGENTHUB_TOUR.md")); err != nil {
		t.Fatalf("the approved patch was not written: %v", err)
	}
	if st2, _ := b.status(); st2.Pid != st.Pid {
		t.Fatalf("the engine changed from pid %d to %d", st.Pid, st2.Pid)
	}
	// Relative paths are the user's: `workspace add .` from the workspace.
	ws2 := gitWorkspace(t)
	c := b.command("workspace", "add", ".")
	c.Dir = ws2
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("workspace add . from %s: %v\n%s", ws2, err, out)
	}
	if !strings.Contains(b.must("workspace", "list"), filepath.Base(ws2)) {
		t.Fatal("workspace add . did not add the current directory")
	}
}

// TestReadOnlyCommandsStartNothing: with no engine, listing and showing
// read the database in the command's own process and start no engine.
func TestReadOnlyCommandsStartNothing(t *testing.T) {
	b := newBox(t)
	for _, args := range [][]string{{"runs", "list"}, {"approvals", "list"}, {"workspace", "list"}, {"profiles"}} {
		if code, out, errOut := b.cmd(nil, args...); code != 0 {
			t.Fatalf("%v: exit %d %s%s", args, code, out, errOut)
		}
		if _, up := b.status(); up {
			t.Fatalf("%v started an engine", args)
		}
	}
	if code, out, _ := b.cmd(nil, "engine", "status"); code != 1 || !strings.Contains(out, "No engine is running") {
		t.Fatalf("engine status without one: %d %q", code, out)
	}
}

// TestEngineStartStopStatus: start is idempotent, stop releases the data
// directory (a foreground engine can take it next), status says who runs.
func TestEngineStartStopStatus(t *testing.T) {
	b := newBox(t)
	out := b.must("engine", "start")
	st, up := b.status()
	if !up || !strings.Contains(out, fmt.Sprintf("pid %d", st.Pid)) {
		t.Fatalf("engine start: %q (%+v)", out, st)
	}
	if out := b.must("engine", "start"); !strings.Contains(out, "already runs") {
		t.Fatalf("second start: %q", out)
	}
	if out := b.must("engine", "status", "--json"); !strings.Contains(out, `"running":true`) {
		t.Fatalf("status --json: %q", out)
	}
	if _, out, _ := b.cmd(nil, "doctor"); !strings.Contains(out, fmt.Sprintf("engine: running: pid %d (engine", st.Pid)) {
		t.Fatalf("doctor does not report the engine:\n%s", out)
	}
	b.must("engine", "stop")
	if _, up := b.status(); up {
		t.Fatal("the engine still answers after stop")
	}
	if _, out, _ := b.cmd(nil, "doctor"); !strings.Contains(out, "engine: not running") {
		t.Fatalf("doctor after stop:\n%s", out)
	}
	// A foreground engine refuses while another owns the data directory.
	b.must("engine", "start")
	code, _, errOut := b.cmd(nil, "engine")
	if code != 1 || !strings.Contains(errOut, "conflict") {
		t.Fatalf("second owner: exit %d %q", code, errOut)
	}
}

// syncBuf is a buffer a child writes while the test reads.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(wait); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// startPrompting starts `run --on-approval prompt` whose stdin stays open
// and silent, so the command waits at the approval prompt: a real child
// process the test then sends SIGINT to.
func startPrompting(t *testing.T, b *box, ws string) (*exec.Cmd, *syncBuf, chan int) {
	t.Helper()
	c := b.command("run", "--workspace", ws, "--on-approval", "prompt", "show me around")
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	out := &syncBuf{}
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		err := c.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		done <- code
	}()
	waitFor(t, "the approval prompt", func() bool {
		return strings.Contains(out.String(), "approval") && strings.Contains(out.String(), "AGENTHUB_TOUR.md")
	})
	return c, out, done
}

// TestCtrlCDetachesAndTheRunGoesOn: one SIGINT to `agenthub run` ends the
// command (exit 130) with the way to follow the run again; the run still
// waits in the engine and a later approve completes it.
func TestCtrlCDetachesAndTheRunGoesOn(t *testing.T) {
	b := newBox(t, "AGENTHUB_DETACH_GRACE=200ms")
	ws := gitWorkspace(t)
	b.must("workspace", "add", ws)
	c, out, done := startPrompting(t, b, ws)
	if err := c.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(wait):
		t.Fatalf("run did not end after Ctrl-C: %s", out)
	}
	if code != cli.ExitInterrupted || !strings.Contains(out.String(), "agenthub runs follow ") {
		t.Fatalf("Ctrl-C: exit %d, want 130 and the follow hint:\n%s", code, out)
	}
	list := b.runs()
	if len(list) != 1 || list[0].State != "NeedsApproval" {
		t.Fatalf("after detach the run should still wait: %+v", list)
	}
	id := firstApproval(t, b)
	if code, o, e := b.cmd(nil, "approve", id, "--on-approval", "approve"); code != 0 {
		t.Fatalf("approve %q after detach: %d\n%s%s", id, code, o, e)
	}
}

func firstApproval(t *testing.T, b *box) string {
	t.Helper()
	var list []struct {
		ID string `json:"approvalId"`
	}
	if err := json.Unmarshal([]byte(b.must("approvals", "list", "--json")), &list); err != nil || len(list) == 0 || list[0].ID == "" {
		t.Fatalf("approvals list --json: %v %v", list, err)
	}
	return list[0].ID
}

// TestSecondCtrlCCancels: a second SIGINT within the grace period cancels
// the run: exit 4 and the run is cancelled.
func TestSecondCtrlCCancels(t *testing.T) {
	b := newBox(t, "AGENTHUB_DETACH_GRACE=5m")
	ws := gitWorkspace(t)
	b.must("workspace", "add", ws)
	c, out, done := startPrompting(t, b, ws)
	if err := c.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the detach notice", func() bool {
		select {
		case code := <-done:
			t.Fatalf("run ended with %d after one Ctrl-C:\n%s", code, out)
		default:
		}
		return strings.Contains(out.String(), "Press Ctrl-C again")
	})
	if err := c.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != cli.ExitCanceled {
			t.Fatalf("second Ctrl-C: exit %d, want 4:\n%s", code, out)
		}
	case <-time.After(wait):
		t.Fatalf("run did not end after the second Ctrl-C: %s", out)
	}
	if list := b.runs(); len(list) != 1 || list[0].State != "Cancelled" {
		t.Fatalf("after two Ctrl-C the run should be cancelled: %+v", list)
	}
}

// TestSocketStreamSeesChangesFromTheCLI: a client of the socket's event
// stream (what the window and browser tabs use) sees a workspace added from
// the command line as system.changed, and a run started from the command
// line as its events, without reloading; the socket needs no token.
func TestSocketStreamSeesChangesFromTheCLI(t *testing.T) {
	b := newBox(t)
	b.must("engine", "start")
	c, err := engineclient.Dial(b.home)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, engineclient.URL("/api/stream"), nil)
	resp, err := c.HTTP.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/stream over the socket: %v %v", resp, err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(what string, match func(string) bool) {
		t.Helper()
		deadline := time.After(wait)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the stream ended before %s", what)
				}
				if match(l) {
					return
				}
			case <-deadline:
				t.Fatalf("no %s on the stream", what)
			}
		}
	}
	ws := gitWorkspace(t)
	b.must("workspace", "add", ws)
	expect("system.changed for workspaces", func(l string) bool {
		return strings.HasPrefix(l, "data: ") && strings.Contains(l, `"type":"system.changed"`) &&
			strings.Contains(l, `"what":"workspaces"`)
	})
	if code, out, errOut := b.cmd(nil, "run", "--workspace", ws, "show me around"); code != cli.ExitWaiting {
		t.Fatalf("run: %d %s%s", code, out, errOut)
	}
	expect("the CLI run's approval request", func(l string) bool {
		return strings.Contains(l, `"type":"run.approval.requested"`)
	})
}

// TestServeProxiesToTheEngine: `agenthub serve` is a loopback listener with
// the token in front of the engine: the API answers with the token and
// refuses without it, and stopping serve (SIGINT) leaves the engine and its
// runs alone.
func TestServeProxiesToTheEngine(t *testing.T) {
	b := newBox(t)
	c := b.command("serve", "--addr", "127.0.0.1:0")
	out := &syncBuf{}
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[0-9a-f]+`)
	waitFor(t, "the serve URL", func() bool { return url.MatchString(out.String()) })
	u := url.FindString(out.String())
	base, token := u[:strings.Index(u, "/?")], u[strings.Index(u, "token=")+6:]
	st, up := b.status()
	if !up {
		t.Fatal("serve did not start the engine")
	}
	get := func(auth string) int {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/workspaces", nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(token); code != http.StatusOK {
		t.Fatalf("with the token: %d", code)
	}
	if code := get(""); code != http.StatusUnauthorized {
		t.Fatalf("without the token: %d, want 401", code)
	}
	// The engine's own routes stay on the socket, even with the token.
	req, _ := http.NewRequest(http.MethodPost, base+"/engine/stop", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("POST /engine/stop through serve: %v %v, want 404", resp, err)
	}
	if _, up := b.status(); !up {
		t.Fatal("serve let a browser stop the engine")
	}
	if err := c.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("serve did not stop on SIGINT")
	}
	if st2, up := b.status(); !up || st2.Pid != st.Pid {
		t.Fatalf("stopping serve touched the engine: %+v %v", st2, up)
	}
}

// TestEngineStopsWhenItsDataDirectoryIsRemoved: an engine whose socket file
// is gone (the data directory was deleted) stops by itself instead of
// running on unreachable.
func TestEngineStopsWhenItsDataDirectoryIsRemoved(t *testing.T) {
	b := newBox(t)
	b.must("engine", "start")
	st, _ := b.status()
	if err := os.Remove(engineclient.SocketPath(b.home)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the engine to stop", func() bool { return !alive(st.Pid) })
}

// TestWindowTakesOverAndCLIRunsBesideIt: a run waits in the background
// engine; the window opened later takes the runs over (the engine stops),
// shows the same pending approval, serves the socket, and an `approve` from
// the command line beside it completes the run.
func TestWindowTakesOverAndCLIRunsBesideIt(t *testing.T) {
	b := newBox(t)
	ws := gitWorkspace(t)
	b.must("workspace", "add", ws)
	code, out, errOut := b.cmd(nil, "run", "--workspace", ws, "show me around")
	if code != cli.ExitWaiting {
		t.Fatalf("run: %d %s%s", code, out, errOut)
	}
	id := pendingID(t, out+errOut)
	engine, _ := b.status()
	w := b.with("DISPLAY=:99").command("window")
	wout := &syncBuf{}
	w.Stdout, w.Stderr = wout, wout
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- w.Wait() }()
	defer func() {
		_ = w.Process.Signal(syscall.SIGTERM)
		<-exited
	}()
	waitFor(t, "the window", func() bool { return strings.Contains(wout.String(), "window-stub open") })
	waitFor(t, "the window's socket", func() bool { st, up := b.status(); return up && st.Surface == "window" })
	// It released the data directory before its process ended.
	waitFor(t, "the background engine to end", func() bool { return !alive(engine.Pid) })
	if got := firstApproval(t, b); got != id {
		t.Fatalf("the window does not show the pending approval %s (got %s)", id, got)
	}
	if code, out, errOut := b.cmd(nil, "approve", id, "--on-approval", "approve"); code != 0 {
		t.Fatalf("approve beside the window: %d\n%s%s\nwindow:\n%s", code, out, errOut, wout)
	}
	if _, err := os.Stat(filepath.Join(ws, "AGENTHUB_TOUR.md")); err != nil {
		t.Fatalf("the approved patch was not written: %v", err)
	}
}

// alive reports whether pid runs (a zombie nobody reaped yet does not).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// TestAnEngineOfAnotherVersionIsReplacedWhenIdle: after an upgrade, the
// engine an earlier release started keeps its runs (a command warns and
// uses it), and is replaced by this version's once it holds none.
func TestAnEngineOfAnotherVersionIsReplacedWhenIdle(t *testing.T) {
	b := newBox(t)
	ws := gitWorkspace(t)
	old := func(args ...string) (int, string, string) {
		c := b.command(args...)
		c.Env = append(append([]string(nil), b.env...), "AGENTHUB_TEST_VERSION=old")
		var out, errOut bytes.Buffer
		c.Stdout, c.Stderr = &out, &errOut
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("agenthub %v: %v", args, err)
		}
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := old("workspace", "add", ws); code != 0 {
		t.Fatalf("workspace add: %d %s%s", code, out, errOut)
	}
	code, out, errOut := old("run", "--workspace", ws, "show me around")
	if code != cli.ExitWaiting {
		t.Fatalf("run: exit %d, want 3\n%s%s", code, out, errOut)
	}
	id := pendingID(t, out+errOut)
	st, up := b.status()
	if !up || st.Version != "old" || st.ActiveRuns == 0 {
		t.Fatalf("the old engine: %+v %v", st, up)
	}

	code, out, errOut = b.cmd(nil, "runs", "list")
	if code != 0 || !strings.Contains(errOut, "the engine runs version old") {
		t.Fatalf("a command beside a busy engine of another version: exit %d, no warning\n%s%s", code, out, errOut)
	}
	if now, _ := b.status(); now.Pid != st.Pid {
		t.Fatalf("the busy engine was replaced (pid %d -> %d): its run would be interrupted", st.Pid, now.Pid)
	}

	if code, out, errOut := old("approve", id, "--on-approval", "approve"); code != 0 {
		t.Fatalf("approve: %d %s%s", code, out, errOut)
	}
	waitFor(t, "the old engine to hold no runs", func() bool {
		now, _ := b.status()
		return now.ActiveRuns == 0
	})
	b.must("workspace", "list")
	now, up := b.status()
	if !up || now.Version != "test" || now.Pid == st.Pid {
		t.Fatalf("the idle engine of another version was not replaced: %+v (was pid %d)", now, st.Pid)
	}
	if list := b.runs(); len(list) != 1 || list[0].State != "Completed" {
		t.Fatalf("runs after the restart: %+v", list)
	}
}
