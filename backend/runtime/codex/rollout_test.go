package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend/runtime/agentbin"

	"github.com/google/go-cmp/cmp"
)

// TestRolloutGolden parses rollout files Codex 0.169.0 wrote under
// `codex exec --json` (testdata/rollout/*.jsonl, real files with the
// temporary directories replaced by /tmp/ws and /tmp/agenthub) and compares
// the calls read with *.golden.json; -update rewrites the goldens.
func TestRolloutGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "rollout", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no rollout fixtures")
	}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			calls, ended := parseRollout(f)
			if !ended {
				t.Fatal("the turn's end is not read")
			}
			got, err := json.MarshalIndent(calls, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(p, ".jsonl") + ".golden.json"
			if *update {
				writeFile(t, golden, got)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("no golden (run with -run TestRolloutGolden -update): %v", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Fatalf("(-golden +got):\n%s", diff)
			}
		})
	}
}

func TestParseRollout(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	cmdItem := func(id, script, status string, exit int) string {
		return `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"` + id +
			`","command":["/bin/bash","-lc","` + script + `"],"status":"` + status +
			`","aggregated_output":"out\n","exit_code":` + string(rune('0'+exit)) + `}}}`
	}
	patchCall := `{"type":"response_item","payload":{"type":"custom_tool_call","call_id":"call_p1","name":"apply_patch",` +
		`"input":"*** Begin Patch\n*** Add File: a.txt\n+a\n*** Update File: b.txt\n@@\n-x\n+y\n*** End Patch\n"}}`
	patchOK := `{"type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_p1",` +
		`"output":"Exit code: 0\nOutput:\nSuccess. Updated the following files:\nA a.txt\n"}}`
	patchBad := `{"type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_p1",` +
		`"output":"apply_patch verification failed: Failed to find expected lines"}}`
	fileItem := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"FileChange","id":"call_p1",` +
		`"changes":{"/ws/b.txt":{"type":"update","unified_diff":"@@"},"/ws/a.txt":{"type":"add","content":"a\n"}},"status":"completed"}}}`
	add := func(p, kind string) fileChange {
		var fc fileChange
		fc.Path, fc.Kind.Type = p, kind
		return fc
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  []rolloutCall
	}{
		{"command", []string{cmdItem("call_e1", "echo hi", "completed", 0)},
			[]rolloutCall{{ID: "call_e1", Argv: []string{"/bin/bash", "-lc", "echo hi"}, Status: "completed",
				Output: str("out\n"), Exit: num(0)}}},
		{"a call id once", []string{cmdItem("call_e1", "echo hi", "failed", 1), cmdItem("call_e1", "echo hi", "completed", 0)},
			[]rolloutCall{{ID: "call_e1", Argv: []string{"/bin/bash", "-lc", "echo hi"}, Status: "failed",
				Output: str("out\n"), Exit: num(1)}}},
		{"patch item over its call", []string{patchCall, fileItem, patchOK},
			[]rolloutCall{{ID: "call_p1", Status: "completed", Files: []fileChange{add("/ws/a.txt", "add"), add("/ws/b.txt", "update")}}}},
		{"patch without item, applied", []string{patchCall, patchOK},
			[]rolloutCall{{ID: "call_p1", Status: "completed", Files: []fileChange{add("a.txt", "add"), add("b.txt", "update")}}}},
		{"patch without item, refused", []string{patchCall, patchBad},
			[]rolloutCall{{ID: "call_p1", Status: "failed", Files: []fileChange{add("a.txt", "add"), add("b.txt", "update")}}}},
		{"skipped", []string{`not json`, `{"type":"session_meta","payload":{"id":"x"}}`,
			`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","call_id":"call_e1","arguments":"{}"}}`,
			`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","id":"m"}}}`,
			`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":""}}}`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := parseRollout(strings.NewReader(strings.Join(tc.lines, "\n")))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecSeenMissed(t *testing.T) {
	cmd := func(id, script string) rolloutCall {
		return rolloutCall{ID: id, Argv: []string{"/bin/bash", "-lc", script}}
	}
	patch := rolloutCall{ID: "call_p1"}
	for _, tc := range []struct {
		name string
		seen execSeen
		in   []rolloutCall
		want []string
	}{
		{"nothing printed", execSeen{}, []rolloutCall{cmd("e1", "echo hi"), patch}, []string{"e1", "call_p1"}},
		{"all printed", execSeen{commands: []string{"/bin/bash -lc 'echo hi'"}, patches: 1},
			[]rolloutCall{cmd("e1", "echo hi"), patch}, nil},
		{"the same command twice, printed once", execSeen{commands: []string{"/bin/bash -lc ls"}},
			[]rolloutCall{cmd("e1", "ls"), cmd("e2", "ls")}, []string{"e2"}},
		{"another command printed", execSeen{commands: []string{"/bin/bash -lc pwd"}},
			[]rolloutCall{cmd("e1", "ls")}, []string{"e1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range tc.seen.missed(tc.in) {
				got = append(got, c.ID)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestExecRolloutCompletes: an exec stream that printed only the final
// message still records the command and the patch of the rollout, as
// observed calls marked "rollout", with workspace-relative paths and no
// absolute path in what is recorded.
func TestExecRolloutCompletes(t *testing.T) {
	dir := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join("testdata", "rollout", "command_patch.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const thread = "01a209a8-0ccc-7183-9a4b-2e5850b32ea8"
	cfg := Config{Dir: dir, Gating: GatingAdvisory}
	writeFile(t, filepath.Join(cfg.codexHome(), "sessions", "2026", "11", "23",
		"rollout-2026-11-23T18-25-38-"+thread+".jsonl"), fixture)
	s := newSession(cfg, agentbin.Info{}, "task")
	s.Root, s.RealRoot = "/tmp/ws", "/tmp/ws"
	for _, l := range []string{
		`{"type":"thread.started","thread_id":"` + thread + `"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done."}}`,
		`{"type":"turn.completed","usage":{"input_tokens":300,"output_tokens":60}}`,
	} {
		s.execLine([]byte(l))
	}
	var args []observedArgs
	for _, ev := range s.Queue {
		if ev.kind != evObserved {
			continue
		}
		req, err := s.observedCall(ev.item, len(args))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(req.Arguments), "/tmp/ws") {
			t.Fatalf("an absolute path is recorded: %s", req.Arguments)
		}
		var a observedArgs
		if err := json.Unmarshal(req.Arguments, &a); err != nil {
			t.Fatal(err)
		}
		args = append(args, a)
	}
	zero := 0
	want := []observedArgs{
		{Session: s.ID, Item: "call_e1", Type: "command", Command: "/bin/bash -lc 'echo hi > out.txt'",
			Status: "completed", Exit: &zero, Advisory: true, Source: rolloutSource},
		{Session: s.ID, Item: "call_p1", Type: "file_change", Files: []string{"add hello.txt"}, Status: "completed",
			Advisory: true, Source: rolloutSource},
	}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Fatalf("observed (-want +got):\n%s", diff)
	}
	if last := s.Queue[len(s.Queue)-1]; last.kind != evTurnDone {
		t.Fatalf("the turn's end is not last: %v", last.kind)
	}
}
