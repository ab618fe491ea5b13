package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"agenthub/app/api"
	"agenthub/app/cli"
	"agenthub/backend"

	"github.com/pelletier/go-toml/v2"
)

// world is one hostile setting: a data directory, an allowlisted git
// workspace (the "repository" the agent works in) and a directory outside
// it holding a canary the agent must never see or change.
type world struct {
	t       *testing.T
	env     map[string]string
	home    string // AGENTHUB_HOME
	ws      string // the allowlisted workspace (canonical path)
	outside string // a sibling directory outside every workspace
	canary  string // the text of outside/canary.txt
}

// newWorld makes a data directory, a committed git workspace with a
// README and an outside directory with canary.txt.
func newWorld(t *testing.T) *world {
	t.Helper()
	base := t.TempDir()
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	w := &world{t: t, home: filepath.Join(base, "home"), ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	w.canary = "CANARY-" + strings.ReplaceAll(t.Name(), "/", "-") + "-OUTSIDE"
	for _, d := range []string{w.home, w.ws, w.outside} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(w.outside, "canary.txt"), []byte(w.canary+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(w.ws, "README.md"), []byte("# Widget\n\nA small project.\n"), 0o644))
	w.git("init", "-q")
	w.git("add", ".")
	w.git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init")
	w.env = map[string]string{"AGENTHUB_HOME": w.home, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	if code, out, errOut := w.cli(context.Background(), "workspace", "add", w.ws); code != 0 {
		t.Fatalf("workspace add: exit %d\n%s\n%s", code, out, errOut)
	}
	return w
}

// git runs git in the workspace.
func (w *world) git(args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = w.ws
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// write puts a file into the workspace, creating its directories.
func (w *world) write(rel, text string) {
	w.t.Helper()
	p := filepath.Join(w.ws, rel)
	must(w.t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(w.t, os.WriteFile(p, []byte(text), 0o644))
}

// cli runs one agenthub command in-process, as `agenthub ARGS…` would.
func (w *world) cli(ctx context.Context, args ...string) (int, string, string) {
	// Synchronised: cli.Main makes its stderr the process's default logger,
	// so a run of another case going on meanwhile may log into it (a data
	// race the race detector reported under load).
	var out, errOut syncBuffer
	code := runMain(ctx, w.env, &out, &errOut, args...)
	return code, out.String(), errOut.String()
}

// runMain is the agenthub command line's entry with this suite's
// environment: no window, no terminal, no ambient variables.
func runMain(ctx context.Context, env map[string]string, stdout, stderr io.Writer, args ...string) int {
	return cli.Main(cli.Env{
		Args: args, Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Context: ctx,
		Assets: fstest.MapFS{"index.html": {Data: []byte("x")}}, Version: "hostile",
		Getenv: func(k string) string { return env[k] },
		Window: func(*api.Core, fs.FS) error { return fmt.Errorf("the window must not open in the hostile suite") },
	})
}

// playbook is a script-runtime playbook (docs/PLAYBOOK.md).
type playbook struct {
	Version int    `toml:"version"`
	Name    string `toml:"name"`
	Steps   []step `toml:"step"`
}

type step struct {
	Say   string `toml:"say,omitempty"`
	Calls []call `toml:"call,omitempty"`
}

type call struct {
	Tool string         `toml:"tool"`
	Args map[string]any `toml:"args"`
}

// script is a playbook that makes calls one step each (so each result is
// its own tool result) and ends with a step that makes none.
func script(calls ...call) playbook {
	pb := playbook{Version: 1, Name: "hostile"}
	for _, c := range calls {
		pb.Steps = append(pb.Steps, step{Calls: []call{c}})
	}
	pb.Steps = append(pb.Steps, step{Say: "done"})
	return pb
}

// putScriptProfile writes the playbook and a script profile named name
// running it with run_timeout.
func (w *world) putScriptProfile(name string, pb playbook, runTimeout string) {
	w.t.Helper()
	dir := filepath.Join(w.home, "profiles")
	must(w.t, os.MkdirAll(dir, 0o700))
	text, err := toml.Marshal(pb)
	must(w.t, err)
	must(w.t, os.WriteFile(filepath.Join(dir, name+".playbook"), text, 0o600))
	prof := fmt.Sprintf("name = %q\nruntime = \"script\"\nplaybook = %q\nrun_timeout = %q\n%s", name, name+".playbook", runTimeout, patientStop)
	must(w.t, os.WriteFile(filepath.Join(dir, name+".toml"), []byte(prof), 0o600))
}

// patientStop keeps a hostile run going through every call: the default
// stop conditions end a run after 3 failed steps in a row, which is what
// most attacks get.
const patientStop = "[stop]\nmax_rounds = 100000\nconsecutive_errors = 100000\nloop_window = 100000\n"

// putProfile writes a profile file as it is.
func (w *world) putProfile(name, text string) {
	w.t.Helper()
	dir := filepath.Join(w.home, "profiles")
	must(w.t, os.MkdirAll(dir, 0o700))
	must(w.t, os.WriteFile(filepath.Join(dir, name+".toml"), []byte(text), 0o600))
}

// runResult is what one `agenthub run --json` left.
type runResult struct {
	code    int
	stdout  string
	stderr  string
	events  []backend.Event
	elapsed time.Duration
	hung    bool // the command did not return within the limit
}

// run runs profile on a task with --json and the approval mode, and gives
// up waiting after limit (the result is then marked hung; the command is
// cancelled and waited for in the background by unblock, if given).
func (w *world) run(profile, onApproval string, limit time.Duration, unblock func()) runResult {
	w.t.Helper()
	args := []string{"run", "--workspace", w.ws, "--profile", profile, "--json", "do the task"}
	if onApproval != "" {
		args = append(args, "--on-approval", onApproval)
	}
	return w.runArgs(limit, unblock, args...)
}

// runArgs runs an agenthub command that follows a run, bounded by limit.
func (w *world) runArgs(limit time.Duration, unblock func(), args ...string) runResult {
	w.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	start := time.Now()
	go func() { done <- runMain(ctx, w.env, &out, &errOut, args...) }()
	res := runResult{}
	select {
	case res.code = <-done:
	case <-time.After(limit):
		res.hung = true
		cancel()
		if unblock != nil {
			unblock()
		}
		select {
		case res.code = <-done:
		case <-time.After(60 * time.Second):
			w.t.Errorf("agenthub %v still running a minute after it was cancelled and unblocked", args[:1])
		}
	}
	res.elapsed = time.Since(start)
	res.stdout, res.stderr = out.String(), errOut.String()
	res.events = decodeEvents(res.stdout)
	return res
}

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// decodeEvents reads the NDJSON event lines of --json output; other lines
// (there are none in --json mode) are skipped.
func decodeEvents(out string) []backend.Event {
	var evs []backend.Event
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev backend.Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type != "" {
			evs = append(evs, ev)
		}
	}
	return evs
}

// payloads returns the payloads of the events of a type, decoded.
func payloads(evs []backend.Event, typ backend.EventType) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		if ev.Type == typ {
			var p map[string]any
			_ = json.Unmarshal(ev.Payload, &p)
			out = append(out, p)
		}
	}
	return out
}

// toolResults returns the tool results in call order: content and whether
// it is an error. The script runtime calls tools one step at a time, so
// the order is the playbook's.
func toolResults(evs []backend.Event) []toolOutcome {
	var out []toolOutcome
	for _, p := range payloads(evs, backend.EvToolResult) {
		content, _ := json.Marshal(p)
		isErr, _ := p["isError"].(bool)
		out = append(out, toolOutcome{text: string(content), isError: isErr})
	}
	return out
}

type toolOutcome struct {
	text    string
	isError bool
}

// terminal is the run's terminal event type, or "" when it has none.
func terminal(evs []backend.Event) backend.EventType {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type.Terminal() {
			return evs[i].Type
		}
	}
	return ""
}

// dataFiles returns the bytes of every file of the data directory that
// holds what a run recorded: the database, its WAL and shared memory, and
// logs. Playbooks and profiles (the hostile model's own script) are left
// out.
func (w *world) dataFiles() map[string][]byte {
	w.t.Helper()
	out := map[string][]byte{}
	_ = filepath.WalkDir(w.home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && (d.Name() == "profiles" || d.Name() == "playbooks") {
				return filepath.SkipDir
			}
			return nil
		}
		if b, err := os.ReadFile(p); err == nil {
			out[strings.TrimPrefix(p, w.home+"/")] = b
		}
		return nil
	})
	return out
}

// leakIn names the data files that hold secret, or "".
func leakIn(files map[string][]byte, secret string) string {
	var where []string
	for name, b := range files {
		if bytes.Contains(b, []byte(secret)) {
			where = append(where, name)
		}
	}
	return strings.Join(where, ", ")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// runEnded reports whether the world's only run reached a terminal state:
// from its events, else from the runs the data directory records (a
// follower that failed still leaves the run's state behind).
func (w *world) runEnded(res runResult) (bool, string) {
	if t := terminal(res.events); t != "" {
		return true, string(t)
	}
	_, out, errOut := w.cli(context.Background(), "runs", "list", "--json")
	var runs []map[string]any
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 {
		return false, "runs list: " + lastLine(out+errOut)
	}
	state, _ := runs[0]["state"].(string)
	switch backend.RunState(state) {
	case backend.RunCompleted, backend.RunFailed, backend.RunCancelled:
		return true, state
	}
	return false, state
}
