package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"agenthub/app/api"
	"agenthub/app/httpapi"
	"agenthub/backend"
	"agenthub/backend/approval"
)

// allowLsPolicy allows ls; everything else is the default.
const allowLsPolicy = "version = 1\n\n[[shell]]\nid = \"ls-ok\"\nprefix = [\"ls\"]\nverdict = \"allow\"\n"

// checkSetups are policy files the gate cannot use as written (too big,
// behind a symlink, not a regular file, not TOML): `policy check` and
// `policy explain` must say what the gate does (issue 14 item 12).
var checkSetups = []struct {
	name  string
	setup func(t *testing.T, w *world)
}{
	{"policy-over-1mib", func(t *testing.T, w *world) {
		w.write(".agenthub/policy.toml", allowLsPolicy+"# "+strings.Repeat("x", 1<<20)+"\n")
	}},
	{"symlinked-policy-dir", func(t *testing.T, w *world) {
		dir := filepath.Join(w.outside, "agenthub")
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "policy.toml"), []byte(allowLsPolicy), 0o644))
		must(t, os.Symlink(dir, filepath.Join(w.ws, ".agenthub")))
	}},
	{"symlinked-policy-file", func(t *testing.T, w *world) {
		must(t, os.WriteFile(filepath.Join(w.outside, "policy.toml"), []byte(allowLsPolicy), 0o644))
		must(t, os.MkdirAll(filepath.Join(w.ws, ".agenthub"), 0o755))
		must(t, os.Symlink(filepath.Join(w.outside, "policy.toml"), filepath.Join(w.ws, ".agenthub", "policy.toml")))
	}},
	{"policy-is-fifo", func(t *testing.T, w *world) {
		must(t, os.MkdirAll(filepath.Join(w.ws, ".agenthub"), 0o755))
		must(t, syscall.Mkfifo(filepath.Join(w.ws, ".agenthub", "policy.toml"), 0o644))
	}},
	{"policy-not-toml", func(t *testing.T, w *world) {
		w.write(".agenthub/policy.toml", allowLsPolicy+"[[shell\n")
	}},
	{"policy-duplicate-version", func(t *testing.T, w *world) {
		w.write(".agenthub/policy.toml", allowLsPolicy+"version = 1\n")
	}},
}

var checkProbes = []string{"ls", "ls -la", "git status", "rm -rf build"}

func playChecks(t *testing.T, l *ledger) {
	for _, s := range checkSetups {
		w := newWorld(t)
		s.setup(t, w)
		gate := approval.NewGate(func(string) (string, error) { return w.ws, nil })
		broken := false
		for _, probe := range checkProbes {
			want := decideShellWithTimeout(t, gate, probe)
			broken = broken || want.RuleID == approval.RuleBrokenPolicy
			code, out, errOut, hung := w.cliWithin(20*time.Second, "policy", "explain", "--workspace", w.ws, probe)
			got := "(none)"
			for _, line := range strings.Split(out, "\n") {
				if v, ok := strings.CutPrefix(line, "decision: "); ok {
					got = v
				}
			}
			l.check(t, "check/"+s.name+"/explain/"+strings.ReplaceAll(probe, " ", "-"), !hung && code == 0 && got == string(want.Verdict),
				"the gate says %s (%s); policy explain says %s (exit %d, hung %v): %s", want.Verdict, want.Reason, got, code, hung, lastLine(errOut))
		}
		code, out, errOut, hung := w.cliWithin(20*time.Second, "policy", "check", "--workspace", w.ws)
		okLine := strings.Contains(out, "policy OK")
		l.check(t, "check/"+s.name+"/check", !hung && (!broken || (code != 0 && !okLine)),
			"the gate cannot use the policy (broken %v) but policy check exits %d saying %q (hung %v) %s", broken, code, strings.TrimSpace(out), hung, lastLine(errOut))
	}
	playDecideHunks(t, l)
}

// decideShellWithTimeout is decideShell bounded by a deadline: a gate that
// blocks (a FIFO policy) fails the test rather than hang it.
func decideShellWithTimeout(t *testing.T, g *approval.Gate, command string) backend.PolicyResult {
	done := make(chan backend.PolicyResult, 1)
	go func() { done <- decideShell(g, command) }()
	select {
	case r := <-done:
		return r
	case <-time.After(30 * time.Second):
		t.Errorf("the gate blocked deciding %q", command)
		return backend.PolicyResult{Verdict: "(blocked)"}
	}
}

// cliWithin runs a command that must return within d.
func (w *world) cliWithin(d time.Duration, args ...string) (int, string, string, bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- runMain(ctx, w.env, &out, &errOut, args...) }()
	select {
	case code := <-done:
		return code, out.String(), errOut.String(), false
	case <-time.After(d):
		cancel()
		if fifo := filepath.Join(w.ws, ".agenthub", "policy.toml"); true {
			unblockFIFO(fifo)
		}
		select {
		case code := <-done:
			return code, out.String(), errOut.String(), true
		case <-time.After(30 * time.Second):
			return -1, out.String(), errOut.String(), true
		}
	}
}

// decideSelections are hunk selections that name hunks the patch does not
// have; the HTTP decide endpoint must refuse each as the CLI does, and
// leave the approval pending and the file untouched.
var decideSelections = []struct {
	name  string
	hunks string
}{
	{"path-escape-index-99", `[{"path":"../x","index":99}]`},
	{"missing-index", `[{"path":"README.md","index":99}]`},
	{"negative-index", `[{"path":"README.md","index":-1}]`},
	{"other-file", `[{"path":"NOTES.md","index":0}]`},
	{"repeated", `[{"path":"README.md","index":0},{"path":"README.md","index":0}]`},
}

func playDecideHunks(t *testing.T, l *ledger) {
	for _, sel := range decideSelections {
		w := newWorld(t)
		w.putScriptProfile("patch", script(call{Tool: "write_file",
			Args: map[string]any{"path": "README.md", "content": "# Widget\n\nRewritten by the agent.\n"}}), "2m")
		if res := w.run("patch", "", 2*time.Minute, nil); res.code != 3 {
			t.Fatalf("the run did not wait for approval: exit %d %s", res.code, res.stderr)
		}
		pending := w.pendingApprovals()
		if len(pending) != 1 {
			t.Fatalf("%d pending approvals, want 1", len(pending))
		}
		status, body := w.httpDecide(t, pending[0], sel.hunks)
		after := w.pendingApprovals()
		readme, _ := os.ReadFile(filepath.Join(w.ws, "README.md"))
		l.check(t, "check/http-decide/"+sel.name, status >= 400 && status < 500 && len(after) == 1 && !strings.Contains(string(readme), "Rewritten"),
			"POST decide with hunks %s: HTTP %d %s; %d approval(s) still pending; README %q", sel.hunks, status, strings.TrimSpace(body), len(after), readme)
	}
}

func (w *world) pendingApprovals() []backend.ApprovalRequest {
	w.t.Helper()
	code, out, errOut := w.cli(context.Background(), "approvals", "list", "--json")
	var list []backend.ApprovalRequest
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
		w.t.Fatalf("approvals list: exit %d %s %s", code, out, errOut)
	}
	return list
}

// httpDecide serves the data directory over the real HTTP API on loopback
// (as `agenthub serve` does) and posts a decision with the hunks.
func (w *world) httpDecide(t *testing.T, a backend.ApprovalRequest, hunks string) (int, string) {
	core, err := api.Open(context.Background(), api.Config{Home: w.home, Version: "hostile", Surface: backend.SurfaceBrowser})
	must(t, err)
	defer core.Close()
	srv := httpapi.New(core, fstest.MapFS{"index.html": {Data: []byte("x")}}, nil, httpapi.NewToken())
	ln, err := httpapi.Listen("127.0.0.1:0")
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx, ln); close(done) }()
	defer func() { cancel(); <-done }()
	body := fmt.Sprintf(`{"decision":"approve_once","subjectHash":%q,"hunks":%s}`, a.SubjectHash, hunks)
	req, err := http.NewRequest("POST", "http://"+ln.Addr().String()+"/api/approvals/"+a.ID+"/decide", strings.NewReader(body))
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
