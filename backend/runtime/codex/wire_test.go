package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseMalformed: nothing the CLI prints crashes the parser; what it
// cannot use says why.
func TestParseMalformed(t *testing.T) {
	tests := []struct {
		name, in string
		want     kind
		problem  string
	}{
		{"not json", `thread 'main' panicked at src/main.rs`, kindInvalid, "not a JSON object"},
		{"array", `[1,2]`, kindInvalid, "not a JSON object"},
		{"nothing", `{}`, kindInvalid, "without method or id"},
		{"response without result", `{"id":4}`, kindInvalid, "without result or error"},
		{"unknown notification", `{"method":"telepathy","params":{}}`, kindUnknown, `unknown notification "telepathy"`},
		{"delta without text", `{"method":"item/agentMessage/delta","params":{}}`, kindInvalid, "without delta"},
		{"item without item", `{"method":"item/started","params":{}}`, kindInvalid, "without an item"},
		{"item without id", `{"method":"item/completed","params":{"item":{"type":"agentMessage"}}}`, kindInvalid, "without type or id"},
		{"unknown item", `{"method":"item/started","params":{"item":{"type":"hologram","id":"x"}}}`, kindUnknown, `unknown item type "hologram"`},
		{"file change kind", `{"method":"item/started","params":{"item":{"type":"fileChange","id":"x","changes":[{"path":"/a","kind":{"type":"teleport"}}]}}}`, kindInvalid, "teleport"},
		{"turn without status", `{"method":"turn/completed","params":{"turn":{"id":"t"}}}`, kindInvalid, "turn status"},
		{"error without error", `{"method":"error","params":{}}`, kindInvalid, "without an error"},
		{"usage without totals", `{"method":"thread/tokenUsage/updated","params":{"tokenUsage":{}}}`, kindInvalid, "without totals"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseLine([]byte(tt.in))
			if got.Kind != tt.want || !strings.Contains(got.Problem, tt.problem) {
				t.Fatalf("parse %q = kind %d problem %q, want kind %d with %q", tt.in, got.Kind, got.Problem, tt.want, tt.problem)
			}
		})
	}
}

func TestParseKinds(t *testing.T) {
	tests := []struct {
		in   string
		want kind
	}{
		{`{"id":1,"result":{}}`, kindResponse},
		{`{"id":2,"error":{"code":-1,"message":"no"}}`, kindResponse},
		{`{"id":0,"method":"item/fileChange/requestApproval","params":{"itemId":"c"}}`, kindRequest},
		{`{"method":"error","params":{"error":{"message":"retrying"},"willRetry":true}}`, kindIgnored},
		{`{"method":"thread/status/changed","params":{}}`, kindIgnored},
		{`   `, kindIgnored},
	}
	for _, tt := range tests {
		if got := parseLine([]byte(tt.in)); got.Kind != tt.want {
			t.Errorf("%s: kind %d, want %d", tt.in, got.Kind, tt.want)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "conformance", "*.jsonl"))
	for _, p := range files {
		b, _ := os.ReadFile(p)
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"method":`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l := parseLine(b)
		if (l.Kind == kindInvalid || l.Kind == kindUnknown) && l.Problem == "" {
			t.Fatalf("an unusable line without a reason: %q", b)
		}
	})
}

// TestExecLines reads `codex exec --json` output as captured from 0.169.0.
func TestExecLines(t *testing.T) {
	s := &session{items: map[string]*itemState{}}
	s.Root, s.Changed = "/ws", make(chan struct{})
	for _, l := range []string{
		`{"type":"thread.started","thread_id":"01a2085b-97c3"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Creating."}}`,
		`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'echo hi > out.txt'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'echo hi > out.txt'","aggregated_output":"/bin/bash: line 1: out.txt: Read-only file system\n","exit_code":1,"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"/ws/hello.txt","kind":"add"}],"status":"completed"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":400,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":80,"reasoning_output_tokens":0}}`,
		`{"type":"telepathy"}`,
	} {
		s.execLine([]byte(l))
	}
	var kinds []eventKind
	for _, ev := range s.Queue {
		kinds = append(kinds, ev.kind)
	}
	want := []eventKind{evText, evObserved, evObserved, evTurnDone}
	if len(kinds) != len(want) || kinds[0] != want[0] || kinds[1] != want[1] || kinds[2] != want[2] || kinds[3] != want[3] {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	if s.usage.Input != 400 || s.usage.Output != 80 || len(s.Diags) != 1 || !strings.Contains(s.Diags[0].Problem, "telepathy") {
		t.Fatalf("usage %+v diags %+v", s.usage, s.Diags)
	}
	e := execError("unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:1/v1/responses")
	if e.httpStatus() != 401 {
		t.Fatalf("exec error status: %d", e.httpStatus())
	}
}
