package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"agenthub/backend/agentpath"
	"agenthub/backend/runtime/agentbin"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestConformance feeds ACP lines captured from a real CLI (testdata/*.jsonl,
// the workspace path replaced by /ws) through the adapter's own parsing and
// mapping, and compares the normalised result with a golden file. A new CLI
// release is checked by capturing its lines and running with -update: the
// diff shows what changed in what AgentHub records.
func TestConformance(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			got := normalise(t, f)
			golden := strings.TrimSuffix(f, ".jsonl") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("normalised events differ from %s (-want +got):\n%s", golden, d)
			}
		})
	}
}

// normalised is one line as AgentHub understands it.
type normalised struct {
	Line    int             `json:"line"`
	Problem string          `json:"problem,omitempty"` // schema.validation_failed
	Kind    string          `json:"kind"`
	Method  string          `json:"method,omitempty"`
	Delta   string          `json:"delta,omitempty"`
	Event   string          `json:"event,omitempty"`
	Payload any             `json:"payload,omitempty"`
	Call    string          `json:"call,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	Path    string          `json:"path,omitempty"`
	Usage   any             `json:"usage,omitempty"`
	Stop    string          `json:"stopReason,omitempty"`
}

func normalise(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(Config{Name: "gemini", Gemini: true}, agentbin.Info{}, "task")
	s.ID, s.Root = "acpfixture", "/ws"
	defer s.drop()
	var out []normalised
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		problem, _ := Check(line)
		out = append(out, normaliseLine(t, s, n, line, problem)...)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func normaliseLine(t *testing.T, s *session, n int, line []byte, problem string) []normalised {
	var e envelope
	_ = json.Unmarshal(line, &e)
	base := normalised{Line: n, Problem: problem, Method: e.Method}
	switch e.Method {
	case "":
		base.Kind = "response"
		var r sdk.PromptResponse
		if json.Unmarshal(e.Result, &r) == nil && r.StopReason != "" {
			base.Stop, base.Usage = string(r.StopReason), usageOf(r)
		}
		return []normalised{base}
	case sdk.ClientMethodSessionUpdate:
		var note sdk.SessionNotification
		if err := json.Unmarshal(e.Params, &note); err != nil {
			base.Kind = "unreadable"
			return []normalised{base}
		}
		_ = client{s}.SessionUpdate(t.Context(), note)
		return drain(s, base)
	case sdk.ClientMethodSessionRequestPermission:
		var req sdk.RequestPermissionRequest
		if err := json.Unmarshal(e.Params, &req); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		p := s.newPermission(req)
		s.Mu.Lock()
		s.Queue = nil
		s.Mu.Unlock()
		call, err := s.proxyCall(p)
		if err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		base.Kind, base.Call, base.Args = "call", call.Name, call.Arguments
		return []normalised{base}
	case sdk.ClientMethodFsReadTextFile, sdk.ClientMethodFsWriteTextFile:
		var p struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(e.Params, &p)
		rel, ok := agentpath.Rel([]string{s.Root}, p.Path)
		if !ok {
			rel = "(outside)"
		}
		base.Kind, base.Path = "fs", rel
		return []normalised{base}
	}
	base.Kind = "other"
	return []normalised{base}
}

// drain turns what a line queued into normalised entries.
func drain(s *session, base normalised) []normalised {
	s.Mu.Lock()
	q := s.Queue
	s.Queue = nil
	s.Mu.Unlock()
	if len(q) == 0 {
		base.Kind = "ignored"
		return []normalised{base}
	}
	var out []normalised
	for _, it := range q {
		n := base
		switch it.kind {
		case itemDelta:
			n.Kind, n.Delta = "delta", it.text
		case itemEvent:
			n.Kind, n.Event, n.Payload = "event", string(it.evType), it.payload
		}
		out = append(out, n)
	}
	return out
}

// TestConformanceFixtureIsUnderstood: every captured line of the tested
// version is understood (no schema.validation_failed).
func TestConformanceFixtureIsUnderstood(t *testing.T) {
	data, err := os.ReadFile("testdata/gemini-" + GeminiTestedVersion + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if problem, _ := Check(line); problem != "" {
			t.Errorf("line %d: %s", i+1, problem)
		}
	}
}
