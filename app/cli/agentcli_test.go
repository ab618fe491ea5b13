package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
)

// Helpers of the end-to-end tests that run an agent CLI for real or as a
// fake (claude_test.go, codex_test.go, gemini_test.go, acp_test.go):
// finding the pinned CLI, writing a profile, running a task, starting a
// run through the API and waiting on it, and watching the processes an
// agent leaves behind.

// pinned is an agent CLI the tests run for real. scripts/deps.sh test
// installs it; the Makefile points the variable at it.
type pinned struct {
	env   string // the variable naming it, e.g. AGENTHUB_CLAUDE_BIN
	dir   string // its npm prefix below .cache/agent-clis ("" for that directory itself)
	bin   string // its name in node_modules/.bin
	label string // "Claude Code"
	pkg   string // the npm package at the tested version
}

// path returns the pinned CLI. Under CI a missing CLI fails the test;
// elsewhere the test is skipped with the install step.
func (p pinned) path(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(p.env)
	if bin == "" {
		if root, err := filepath.Abs("../.."); err == nil {
			bin = filepath.Join(root, ".cache", "agent-clis", p.dir, "node_modules", ".bin", p.bin)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		prefix := strings.TrimSuffix(".cache/agent-clis/"+p.dir, "/")
		msg := "the pinned " + p.label + " CLI is not installed; install it with `scripts/deps.sh test` " +
			"(npm install --prefix " + prefix + " " + p.pkg + ")"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// putProfile puts the profile name.toml into the data dir.
func putProfile(t *testing.T, env map[string]string, name, text string) {
	t.Helper()
	dir := filepath.Join(env["AGENTHUB_HOME"], "profiles")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".toml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// setRunTimeout shortens a profile's run_timeout of 2m to d.
func setRunTimeout(t *testing.T, env map[string]string, name, d string) {
	t.Helper()
	p := filepath.Join(env["AGENTHUB_HOME"], "profiles", name+".toml")
	text, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(text), `run_timeout = "2m"`, `run_timeout = "`+d+`"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runTask runs "do the task" on a profile through `agenthub run --json`
// and returns its events; see runJSON.
func runTask(t *testing.T, env map[string]string, dir, profile, onApproval string) []backend.Event {
	t.Helper()
	start := time.Now()
	evs := runJSON(t, env, dir, "run", "--workspace", dir, "--profile", profile, "--json",
		"--on-approval", onApproval, "do the task")
	t.Logf("%s run took %s", profile, time.Since(start).Round(time.Millisecond))
	return evs
}

// runJSON runs a command whose --json output is the run's events: it must
// exit 0, and no event may hold the workspace's absolute path dir.
func runJSON(t *testing.T, env map[string]string, dir string, args ...string) []backend.Event {
	t.Helper()
	code, out, errOut := runCLI(t, env, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, dir) {
		t.Errorf("an event holds the workspace's absolute path:\n%s", out)
	}
	return decodeNDJSON(t, out, 0)
}

// runFails runs task on a profile; the run must fail and its output hold
// every one of want.
func runFails(t *testing.T, env map[string]string, dir, profile, task string, want ...string) string {
	t.Helper()
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", profile, task)
	missing := code != ExitFailed
	for _, w := range want {
		missing = missing || !strings.Contains(out, w)
	}
	if missing {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	return out
}

// timesOut runs a task that hangs on a profile whose run_timeout is short:
// the run fails with run_timeout and no process is left in dir.
func timesOut(t *testing.T, env map[string]string, dir, profile string) {
	t.Helper()
	runFails(t, env, dir, profile, "think", "run_timeout")
	for deadline := time.Now().Add(10 * time.Second); len(processesIn(dir)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left after the timeout: %v", processesIn(dir))
		}
	}
}

func eventsOf(evs []backend.Event, typ backend.EventType) []map[string]any {
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

// startProfileRun opens the data dir and starts a run on a profile.
func startProfileRun(t *testing.T, env map[string]string, dir, profileName, task string) (*api.Core, backend.RunSummary) {
	t.Helper()
	core, err := api.Open(t.Context(), api.Config{Home: env["AGENTHUB_HOME"], Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = core.Close() })
	ws, err := findWorkspace(core, dir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := api.NewRunsAPI(core).Start(api.StartRun{WorkspaceID: ws.ID, Profile: profileName, Task: task})
	if err != nil {
		t.Fatal(err)
	}
	return core, run
}

func waitForApproval(t *testing.T, core *api.Core, runID string) backend.ApprovalRequest {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if tks, _ := api.NewApprovalsAPI(core).ForRun(runID); len(tks) > 0 {
			return tks[0]
		}
	}
	t.Fatal("no approval was requested")
	return backend.ApprovalRequest{}
}

func waitForEnd(t *testing.T, core *api.Core, runID string) backend.RunSummary {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if sum, _ := api.NewRunsAPI(core).Get(runID); sum.State.Terminal() {
			return sum
		}
	}
	t.Fatal("the run did not end")
	return backend.RunSummary{}
}

// cancel cancels a run through the API; it must end cancelled.
func cancel(t *testing.T, core *api.Core, runID string) {
	t.Helper()
	if sum, err := api.NewRunsAPI(core).Cancel(runID); err != nil || sum.State != backend.RunCancelled {
		t.Fatalf("cancel: %+v %v", sum, err)
	}
}

// waitForAgent waits until an agent runs in dir and asked() holds (it has
// asked the model), and returns its processes there.
func waitForAgent(t *testing.T, dir, label string, asked func() bool) []int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if pids := processesIn(dir); len(pids) > 0 && asked() {
			return pids
		}
	}
	t.Fatalf("%s did not start in the workspace", label)
	return nil
}

// groupOf is the process group of pid.
func groupOf(t *testing.T, pid int) int {
	t.Helper()
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	return pgid
}

// waitGone waits at most d until the process group and every one of pids
// is gone.
func waitGone(t *testing.T, pgid int, pids []int, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); syscall.Kill(-pgid, 0) == nil || len(alive(pids)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes survived the cancel: group %d, %v", pgid, describe(alive(pids)))
		}
	}
}

// processesIn lists the processes whose working directory is dir.
func processesIn(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			pids = append(pids, pid)
		}
	}
	return pids
}

// descendants lists every process whose parent chain leads to one of pids.
func descendants(pids []int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err == nil {
			parent[pid] = parentOf(pid)
		}
	}
	in := map[int]bool{}
	for _, p := range pids {
		in[p] = true
	}
	var out []int
	for changed := true; changed; {
		changed = false
		for pid, pp := range parent {
			if in[pp] && !in[pid] {
				in[pid], changed = true, true
				out = append(out, pid)
			}
		}
	}
	return out
}

// parentOf reads the parent of pid from /proc; 0 when it is gone.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid …; comm may hold spaces, so read after ')'.
	s := string(b)
	var ppid int
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		if f := strings.Fields(s[i+1:]); len(f) > 1 {
			_, _ = fmt.Sscanf(f[1], "%d", &ppid)
		}
	}
	return ppid
}

// alive reports the pids that still exist (zombies count as gone).
func alive(pids []int) []int {
	var out []int
	for _, p := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z") {
			continue
		}
		out = append(out, p)
	}
	return out
}

func commOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

func describe(pids []int) []string {
	var out []string
	for _, p := range pids {
		out = append(out, fmt.Sprintf("%d:%s", p, commOf(p)))
	}
	return out
}

// twoHunkFile writes a.txt into dir and returns it and an edit of its
// first and last lines: a change of two hunks.
func twoHunkFile(t *testing.T, dir string) (before, proposed string) {
	t.Helper()
	before = "alpha\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nomega\n"
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	return before, strings.Replace(strings.Replace(before, "alpha", "ALPHA", 1), "omega", "OMEGA", 1)
}

// approveFirstHunk approves only the first hunk of the edit of a.txt that
// tk asks about, rejecting the other ("keep omega"): the run must complete
// with the rejection recorded. It returns the run's events.
func approveFirstHunk(t *testing.T, core *api.Core, runID string, tk backend.ApprovalRequest) []backend.Event {
	t.Helper()
	if err := decideHunks(core, tk, 0, "keep omega"); err != nil {
		t.Fatal(err)
	}
	if sum := waitForEnd(t, core, runID); sum.State != backend.RunCompleted {
		t.Fatalf("run: %+v", sum)
	}
	evs := runEvents(t, core, runID)
	if rej := eventsOf(evs, backend.EvPatchRejected); len(rej) != 1 || rej[0]["comment"] != "keep omega" {
		t.Fatalf("run.patch.rejected: %v", rej)
	}
	return evs
}

// decideHunks approves one hunk of a patch approval.
func decideHunks(core *api.Core, tk backend.ApprovalRequest, hunk int, reason string) error {
	_, err := api.NewApprovalsAPI(core).Decide(backend.Decision{ApprovalID: tk.ID, Kind: backend.ApproveOnce,
		SubjectHash: tk.SubjectHash, Hunks: []backend.HunkRef{{Path: "a.txt", Index: hunk}}, Reason: reason})
	return err
}

func runEvents(t *testing.T, core *api.Core, runID string) []backend.Event {
	t.Helper()
	evs, err := api.NewRunsAPI(core).Events(runID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
