package script

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
)

const tour = `
version = 1
name = "t"

[[step]]
say = "Looking around."
[[step.call]]
tool = "list_dir"
args = { path = "." }

[[step]]
expect = ["file"]
say = "Reading {{first}}."
[step.bind.first]
pattern = '(?m)^file\s+(\S+)'
default = "README.md"
[step.bind.all]
pattern = '(?m)^file\s+(\S+)'
all = true
[[step.call]]
tool = "read_file"
args = { path = "{{first}}", note = ["{{all}}", 3] }

[[step]]
say = "Done."
`

func TestPlaybookParseErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"version", "version = 2\n[[step]]\nsay='x'", "version 2 is not supported"},
		{"no steps", "version = 1", "no steps"},
		{"unknown field", "version = 1\n[[step]]\nsya='x'", "sya"},
		{"bad regexp", "version = 1\n[[step]]\nsay='x'\n[step.bind.v]\npattern='('", "bind v"},
		{"bad var", "version = 1\n[[step]]\nsay='x'\n[step.bind.V]\npattern='x'", "variable name"},
		{"no tool", "version = 1\n[[step]]\n[[step.call]]\nargs={}\n[[step]]\nsay='x'", "no tool"},
		{"last step calls", "version = 1\n[[step]]\n[[step.call]]\ntool='x'", "last step"},
		{"not toml", "version = = 1", "playbook"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestModelPlaysStepsWithBindings(t *testing.T) {
	pb, err := Parse([]byte(tour))
	if err != nil {
		t.Fatal(err)
	}
	m := NewModel(pb)
	var streamed strings.Builder
	r1, err := m.Stream(t.Context(), backend.ModelRequest{Step: 1, Messages: []backend.Message{
		{Role: backend.RoleUser, Text: "tour"}}}, func(s string) { streamed.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if streamed.String() != "Looking around." || r1.Text != "Looking around." {
		t.Fatalf("streamed %q, text %q", streamed.String(), r1.Text)
	}
	if len(r1.Calls) != 1 || r1.Calls[0].Name != "list_dir" || string(r1.Calls[0].Arguments) != `{"path":"."}` {
		t.Fatalf("step 1 calls: %+v", r1.Calls)
	}
	msgs := []backend.Message{
		{Role: backend.RoleUser, Text: "tour"},
		{Role: backend.RoleAssistant, Text: r1.Text, Calls: r1.Calls},
		{Role: backend.RoleTool, ToolCallID: r1.Calls[0].ID, Text: "dir  src\nfile main.go\nfile go.mod\n"},
	}
	r2, err := m.Stream(t.Context(), backend.ModelRequest{Step: 2, Messages: msgs}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Text != "Reading main.go." {
		t.Fatalf("text %q", r2.Text)
	}
	var args map[string]any
	if err := json.Unmarshal(r2.Calls[0].Arguments, &args); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"path": "main.go", "note": []any{"main.go\ngo.mod", float64(3)}}
	if d := cmp.Diff(want, args); d != "" {
		t.Fatalf("arguments (-want +got):\n%s", d)
	}
	if r2.Calls[0].ID == r1.Calls[0].ID {
		t.Fatal("call ids repeat across steps")
	}
}

func TestModelExpectationAndBounds(t *testing.T) {
	pb, err := Parse([]byte(tour))
	if err != nil {
		t.Fatal(err)
	}
	m := NewModel(pb)
	msgs := []backend.Message{{Role: backend.RoleUser, Text: "x"}, {Role: backend.RoleAssistant},
		{Role: backend.RoleTool, Text: "dir only"}}
	_, err = m.Stream(t.Context(), backend.ModelRequest{Step: 2, Messages: msgs}, func(string) {})
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != backend.FailPlaybookExpectation || !strings.Contains(be.Message, `step 2`) {
		t.Fatalf("missed expectation: %v", err)
	}
	if _, err := m.Stream(t.Context(), backend.ModelRequest{Step: 4}, func(string) {}); err == nil {
		t.Fatal("a step past the end must fail")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.Stream(ctx, backend.ModelRequest{Step: 1}, func(string) {}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled stream: %v", err)
	}
}

func TestDemoPlaybookParses(t *testing.T) {
	pb, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, s := range pb.Steps {
		for _, c := range s.Calls {
			tools = append(tools, c.Tool)
		}
	}
	if d := cmp.Diff([]string{"list_dir", "read_file", "write_file", "run_shell"}, tools); d != "" {
		t.Fatalf("demo tools (-want +got):\n%s", d)
	}
}
