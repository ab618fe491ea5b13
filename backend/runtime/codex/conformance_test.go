package codex

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
	"agenthub/backend/patch"
	"agenthub/backend/runtime/codex/codextest"
	"agenthub/backend/scrub"
	"agenthub/workspace"
)

// Conformance: what `codex app-server` 0.169.0 prints, captured from the
// real CLI against the scripted Responses server (testdata/conformance/
// *.jsonl, with machine paths replaced), and the events the adapter reads
// from it (*.golden.json). TestConformanceLive runs the scenarios against
// the pinned CLI and compares what it reads now with the goldens, so a
// protocol change of the CLI fails here first; -update captures anew.

var update = flag.Bool("update", false, "capture the conformance fixtures from the real CLI and rewrite the goldens")

const fixtureRoot = "/ws" // the workspace in stored fixtures

// scenario is one scripted conversation with the real CLI.
type scenario struct {
	name   string
	files  map[string]string
	turns  []codextest.Turn
	accept bool               // every approval request is accepted, else declined
	after  map[string]*string // expected workspace files afterwards (nil: absent)
	check  func(t *testing.T, _ []codextest.Request)
}

func ptr(s string) *string { return &s }

var scenarios = []scenario{
	{
		name:  "accepted",
		files: map[string]string{"README.md": "# hi\nline2\nline3\n", "gone.txt": "bye\n", "mv.txt": "a\nkeep\n", "tail.txt": "x\ny"},
		turns: []codextest.Turn{
			{Text: []string{"Creating ", "the file."}, Calls: []codextest.Call{codextest.ApplyPatch("call_p1",
				"*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n")}},
			{Calls: []codextest.Call{codextest.Exec("call_e1", "echo hi > out.txt && pwd", false)}},
			{Calls: []codextest.Call{codextest.ApplyPatch("call_p2", "*** Begin Patch\n*** Update File: README.md\n@@\n-# hi\n+# hello\n"+
				"*** Delete File: gone.txt\n*** Update File: mv.txt\n*** Move to: moved.txt\n@@\n-a\n+b\n"+
				"*** Update File: tail.txt\n@@\n x\n-y\n+z\n*** End Patch\n")}},
			{Text: []string{"Done."}},
		},
		accept: true,
		after: map[string]*string{"hello.txt": ptr("hello\n"), "out.txt": ptr("hi\n"), "README.md": ptr("# hello\nline2\nline3\n"),
			"gone.txt": nil, "mv.txt": nil, "moved.txt": ptr("b\nkeep\n"), "tail.txt": ptr("x\nz\n")},
	},
	{
		name:  "declined",
		files: map[string]string{"README.md": "# hi\n"},
		turns: []codextest.Turn{
			{Calls: []codextest.Call{codextest.Exec("call_e1", "echo hi > out.txt", true)}},
			{Calls: []codextest.Call{codextest.ApplyPatch("call_p1", "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n")}},
			{Text: []string{"Understood."}},
		},
		after: map[string]*string{"out.txt": nil, "hello.txt": nil, "README.md": ptr("# hi\n")},
		check: func(t *testing.T, reqs []codextest.Request) {
			if len(reqs) != 3 || reqs[1].Outputs()["call_e1"] == "" || !strings.Contains(reqs[2].Outputs()["call_p1"], "rejected by user") {
				t.Errorf("the model was not told of the declines: %d requests", len(reqs))
			}
		},
	},
	{
		name:  "refused_key",
		turns: []codextest.Turn{refusedKey, refusedKey, refusedKey, refusedKey, refusedKey, refusedKey, refusedKey},
	},
}

var refusedKey = codextest.Turn{Status: 401,
	Body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`}

// liveBin is the pinned CLI, or "" when it is not installed (a failure
// under CI).
func liveBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("AGENTHUB_CODEX_BIN")
	if bin == "" {
		bin, _ = filepath.Abs(filepath.Join("..", "..", "..", ".cache", "agent-clis", "codex", "node_modules", ".bin", "codex"))
	}
	if _, err := os.Stat(bin); err != nil {
		msg := "the pinned Codex CLI is not installed; install it with `scripts/deps.sh test`"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

func TestConformanceLive(t *testing.T) {
	bin := liveBin(t)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			lines := runScenario(t, bin, sc)
			got := normalise(t, lines, fixtureRoot)
			if *update {
				writeFile(t, filepath.Join("testdata", "conformance", sc.name+".jsonl"), bytes.Join(lines, []byte("\n")))
				writeGolden(t, sc.name, got)
				return
			}
			want := readGolden(t, sc.name)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("Codex %s's app-server output reads differently from the golden (-golden +now):\n%s", TestedVersion, diff)
			}
		})
	}
}

// TestConformanceFixtures reads the stored captures: each normalises to its
// golden, with no line the adapter cannot read.
func TestConformanceFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "conformance", "*.jsonl"))
	if len(files) < len(scenarios) {
		t.Fatalf("%d captures for %d scenarios; run go test -run TestConformanceLive -update", len(files), len(scenarios))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := normalise(t, bytes.Split(b, []byte("\n")), fixtureRoot)
			if *update {
				writeGolden(t, name, got)
				return
			}
			if diff := cmp.Diff(readGolden(t, name), got); diff != "" {
				t.Fatalf("(-golden +got):\n%s", diff)
			}
			if strings.Contains(string(b), os.TempDir()+"/") || strings.Contains(string(b), scrub.Home()+"/") {
				t.Error("the capture holds a machine path")
			}
		})
	}
}

// runScenario plays a scenario against the real CLI through a session, as
// the engine would, accepting or declining every request, and returns the
// raw output with machine paths replaced. It also checks that the content
// the adapter computes for each file change (and shows the reviewer) is
// exactly what Codex writes.
func runScenario(t *testing.T, bin string, sc scenario) [][]byte {
	t.Helper()
	root := t.TempDir()
	for name, text := range sc.files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := codextest.New(sc.turns...)
	defer srv.Close()
	s, cfg := liveSession(t, bin, srv, root, "run_conformance")
	proposals := drive(t, s, root, sc.accept)
	for _, c := range proposals {
		data, err := os.ReadFile(filepath.Join(root, c.Path))
		switch {
		case c.Delete && !os.IsNotExist(err):
			t.Errorf("%s: the adapter showed a deletion; Codex left the file", c.Path)
		case !c.Delete && string(data) != string(c.Next):
			t.Errorf("%s: the adapter showed %q; Codex wrote %q", c.Path, c.Next, data)
		}
	}
	for name, want := range sc.after {
		data, err := os.ReadFile(filepath.Join(root, name))
		if (want == nil) != os.IsNotExist(err) || (want != nil && string(data) != *want) {
			t.Errorf("%s afterwards: %q (%v)", name, data, err)
		}
	}
	if sc.check != nil {
		sc.check(t, srv.ModelRequests())
	}
	raw, err := os.ReadFile(filepath.Join(cfg.rawDir(), s.ID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return sanitize(bytes.Split(bytes.TrimSpace(raw), []byte("\n")), root, cfg.Dir)
}

// liveSession starts a session of the pinned CLI in root against srv, as
// the engine would; it is stopped when the test ends.
func liveSession(t *testing.T, bin string, srv *codextest.Server, root, runID string) (*session, Config) {
	t.Helper()
	cfg := Config{Command: bin, Model: "gpt-5.5", BaseURL: srv.URL + "/v1", Dir: filepath.Join(t.TempDir(), "rt"),
		Checkpoints: filepath.Join(t.TempDir(), "ck")}
	b, err := cfg.resolve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(cfg, b, "do the task")
	live.Add(s.ID, s.startCallID(), s)
	t.Cleanup(s.stop)
	if err := s.start(t.Context(), backend.ToolEnv{WorkspaceRoot: root, RunID: runID}); err != nil {
		t.Fatal(err)
	}
	return s, cfg
}

// pump hands every approval request to answer (which returns "accept" or
// "decline") until the turn ends.
func pump(t *testing.T, s *session, answer func(*request) string) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		ev, ok, wait := s.Pop()
		if !ok {
			select {
			case <-wait:
				continue
			case <-deadline:
				t.Fatal("the turn did not end")
			}
		}
		switch ev.kind {
		case evApproval:
			if err := s.answer(ev.req, answer(ev.req)); err != nil {
				t.Fatal(err)
			}
		case evTurnDone:
			s.finish()
			return
		case evExit, evFail:
			t.Fatalf("the CLI ended: %v %v", s.exitError(), ev.err)
		}
	}
}

// drive answers every approval request until the turn ends; for accepted
// file changes it returns the proposals the adapter computed.
func drive(t *testing.T, s *session, root string, accept bool) []patch.Proposal {
	t.Helper()
	var proposals []patch.Proposal
	pump(t, s, func(req *request) string {
		if !accept {
			return "decline"
		}
		if req.method == methodFileApproval {
			w, err := workspace.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range req.files {
				c, err := propose(w, f)
				if err != nil {
					t.Fatalf("propose %+v: %v", f, err)
				}
				proposals = append(proposals, c)
			}
			_ = w.Close()
		}
		return "accept"
	})
	return proposals
}

var loopback = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// sanitize replaces the workspace, AgentHub's runtime directory and the
// server's port in captured lines.
func sanitize(lines [][]byte, root, dir string) [][]byte {
	realRoot, _ := filepath.EvalSymlinks(root)
	out := make([][]byte, len(lines))
	for i, l := range lines {
		s := string(l)
		for _, r := range []struct{ from, to string }{{dir, "/agenthub/runtimes/codex/cx"}, {realRoot, fixtureRoot}, {root, fixtureRoot}} {
			if r.from != "" {
				s = strings.ReplaceAll(s, r.from, r.to)
			}
		}
		out[i] = []byte(loopback.ReplaceAllString(s, "127.0.0.1:PORT"))
	}
	return out
}

// normalise turns captured lines into the adapter's reading of them, in a
// form stable across runs: no ids of Codex's own, no timestamps, paths
// relative to the workspace. Lines the adapter ignores are left out; a
// line it cannot read fails the test.
func normalise(t *testing.T, lines [][]byte, root string) []map[string]any {
	t.Helper()
	s := &session{items: map[string]*itemState{}}
	s.Root = root
	var out []map[string]any
	for _, b := range lines {
		l := parseLine(b)
		var ev map[string]any
		switch l.Kind {
		case kindInvalid, kindUnknown:
			t.Errorf("a line the adapter cannot read (%s): %.200s", l.Problem, b)
		case kindRequest:
			ev = map[string]any{"kind": "request", "method": l.Method}
			var a commandApproval
			_ = json.Unmarshal(l.Params, &a)
			ev["item"] = a.ItemID
			if l.Method == methodCommandApproval {
				c := s.commandArgs(callArgs{}, a)
				ev["argv"], ev["cwd"], ev["escalated"] = c.Argv, c.Cwd, c.Escalated
			}
		case kindDelta:
			ev = map[string]any{"kind": "delta", "text": l.Delta}
		case kindItemStarted, kindItemCompleted:
			ev = normItem(s, l)
		case kindTurnCompleted:
			ev = map[string]any{"kind": "turn_completed", "status": l.Turn.Status}
			if l.Turn.Error != nil {
				ev["error"], ev["http"] = l.Turn.Error.Message, l.Turn.Error.httpStatus()
			}
		case kindError:
			ev = map[string]any{"kind": "error", "message": l.Fail.Message, "http": l.Fail.httpStatus()}
		}
		if ev != nil {
			out = append(out, ev)
		}
	}
	// A JSON round trip gives the goldens' types (numbers, lists).
	b, _ := json.Marshal(out)
	var norm []map[string]any
	_ = json.Unmarshal(b, &norm)
	return norm
}

func normItem(s *session, l line) map[string]any {
	it := l.Item
	ev := map[string]any{"kind": strings.Replace(l.Method, "item/", "item_", 1), "type": it.Type}
	switch it.Type {
	case "userMessage", "reasoning":
		return ev
	case "agentMessage":
		ev["text"] = it.Text
	case "commandExecution":
		ev["id"], ev["status"], ev["command"] = it.ID, it.Status, it.Command
		if it.Exit != nil {
			ev["exit"] = *it.Exit
		}
		if it.Output != nil {
			ev["output"] = s.Scrub(*it.Output)
		}
	case "fileChange":
		ev["id"], ev["status"] = it.ID, it.Status
		files, _ := s.fileArgs(it.Changes)
		ev["files"] = files
	}
	return ev
}

func goldenPath(name string) string {
	return filepath.Join("testdata", "conformance", name+".golden.json")
}

func writeGolden(t *testing.T, name string, evs []map[string]any) {
	t.Helper()
	b, err := json.MarshalIndent(evs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, goldenPath(name), append(b, '\n'))
}

func readGolden(t *testing.T, name string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(goldenPath(name))
	if err != nil {
		t.Fatalf("no golden for %s (run with -update): %v", name, err)
	}
	var evs []map[string]any
	if err := json.Unmarshal(b, &evs); err != nil {
		t.Fatal(err)
	}
	return evs
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
