package engined_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"agenthub/app/cli"
)

// with returns a copy of the box's environment with extra variables.
func (b *box) with(extra ...string) *box {
	c := *b
	c.env = append(append([]string(nil), b.env...), extra...)
	return &c
}

// crashStaging is the crash point where an approved patch starts being
// written into the workspace: the decision is committed, nothing is
// written yet.
const crashStaging = "workspace.stage.create"

// waitingDemo adds a workspace, leaves a demo run waiting on its patch and
// stops the engine, so that the next engine start (the one under test)
// counts its crash points from a known state.
func waitingDemo(t *testing.T, b *box) (ws, approval string) {
	t.Helper()
	ws = gitWorkspace(t)
	b.must("workspace", "add", ws)
	code, out, errOut := b.cmd(nil, "run", "--workspace", ws, "show me around")
	if code != cli.ExitWaiting {
		t.Fatalf("run: exit %d, want 3\n%s%s", code, out, errOut)
	}
	approval = pendingID(t, out+errOut)
	b.must("engine", "stop")
	return ws, approval
}

// firstHit is the number of the first hit of name in a crash point log.
func firstHit(t *testing.T, log, name string) (int, string) {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	last := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n, hit, _ := strings.Cut(sc.Text(), " ")
		last = hit
		if hit == name {
			v, _ := strconv.Atoi(n)
			return v, last
		}
	}
	return 0, last
}

// events returns the types of a run's stored events, in order.
func (b *box) events(runID string) []string {
	b.t.Helper()
	out := b.must("runs", "events", runID, "--json")
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Type string `json:"type"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type != "" {
			types = append(types, ev.Type)
		}
	}
	return types
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestCrashAfterApprovalReadOnlyCommandsExecuteNothing is issue 16's kill
// case through real processes: the engine dies (exit at a crash point, as
// kill -9 for the disk) after an approval is committed and before its patch
// is written. Read-only commands afterwards (list, show, events, follow,
// approvals) start no engine and write nothing; the next owner start
// recovers the approved patch exactly once, and a later start does not
// apply it again.
func TestCrashAfterApprovalReadOnlyCommandsExecuteNothing(t *testing.T) {
	b := newBox(t)
	ws, id := waitingDemo(t, b)
	runID := b.runs()[0].ID
	log := filepath.Join(b.home, "crash.log")
	b.with("AGENTHUB_CRASHPOINT=@"+crashStaging, "AGENTHUB_CRASHPOINT_LOG="+log).must("engine", "start")
	code, out, errOut := b.cmd(nil, "approve", id, "--on-approval", "approve")
	if code != cli.ExitFailed || !strings.Contains(errOut, "engine_unavailable") {
		t.Fatalf("approve with the engine dying: exit %d, want 1 engine_unavailable\n%s%s", code, out, errOut)
	}
	if got, _ := firstHit(t, log, crashStaging); got == 0 {
		t.Fatalf("the engine did not stop at %s", crashStaging)
	}
	tour := filepath.Join(ws, "AGENTHUB_TOUR.md")
	before := b.events(runID)
	for _, args := range [][]string{{"runs", "list"}, {"runs", "show", runID}, {"runs", "events", runID},
		{"runs", "follow", runID}, {"approvals", "list"}, {"workspace", "list"}, {"runs", "list", "--json"}} {
		code, out, errOut := b.cmd(nil, args...)
		if code != 0 && code != cli.ExitWaiting {
			t.Fatalf("%v after the crash: exit %d\n%s%s", args, code, out, errOut)
		}
		if _, err := os.Stat(tour); err == nil {
			t.Fatalf("%v wrote the approved patch: a read-only command executed it", args)
		}
		if _, up := b.status(); up {
			t.Fatalf("%v started an engine", args)
		}
		if now := b.events(runID); len(now) != len(before) {
			t.Fatalf("%v changed the run: %d events, then %d (%v)", args, len(before), len(now), now[len(before):])
		}
	}
	// The next owner start recovers, once: the run ends with one
	// terminal event; what it wrote (nothing, for a patch whose staging had
	// not begun) stays as it is through a later start.
	b.must("engine", "start")
	var after []string
	waitFor(t, "the run to be recovered", func() bool {
		after = b.events(runID)
		return len(after) > len(before) && (count(after, "run.failed")+count(after, "run.completed") == 1 ||
			after[len(after)-1] == "run.status.changed")
	})
	_, tourErr := os.Stat(tour)
	b.must("engine", "stop")
	b.must("engine", "start")
	if again := b.events(runID); len(again) != len(after) || count(again, "run.failed") > 1 {
		t.Fatalf("a second owner start changed the recovered run: %d events, then %d", len(after), len(again))
	}
	if _, err := os.Stat(tour); (err == nil) != (tourErr == nil) {
		t.Fatalf("a second owner start changed the workspace: %v, then %v", tourErr, err)
	}
}
