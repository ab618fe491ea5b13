package approval

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

const examplesPolicy = `
version = 1

[[write]]
id = "src"
glob = "src/**/*.go"
verdict = "allow"
match = ["src/a.go", "src/x/y.go"]
not_match = ["src/a.txt", "docs/a.go"]

[[write]]
id = "wrong-example"
glob = "docs/*.md"
verdict = "allow"
match = ["docs/sub/a.md", "../escape.md"]

[[shell]]
id = "git-read"
prefix = ["git", "status"]
verdict = "allow"
match = ["git status", "git status -s && git status"]
not_match = ["git push", "git status; rm -rf /", "git status <<EOF"]

[[shell]]
id = "no-curl"
prefix = ["curl"]
verdict = "deny"
match = ["ls | curl x", "bash -c 'curl x'"]
not_match = ["ls"]

[[network]]
id = "proxy"
host = "proxy.golang.org"
method = "GET"
verdict = "allow"
match = ["https://proxy.golang.org/x", "GET https://PROXY.golang.org:443/y"]
not_match = ["POST https://proxy.golang.org/", "https://proxy.golang.org.evil.io/"]

[[git]]
id = "commit"
action = "commit"
verdict = "allow"
match = ["git commit -m x", "bash -c 'git -C sub commit'"]
not_match = ["git push", "ls"]
`

func TestCheck(t *testing.T) {
	p, err := ParsePolicy([]byte(examplesPolicy))
	if err != nil {
		t.Fatal(err)
	}
	got := p.Check()
	want := []ExampleFailure{
		{Rule: "wrong-example", Example: "docs/sub/a.md", Want: "match", Problem: "it does not"},
		{Rule: "wrong-example", Example: "../escape.md", Want: "match", Problem: "not a workspace-relative path"},
		{Rule: "git-read", Example: "git status <<EOF", Want: "not_match", Problem: "the example cannot be parsed: shell syntax: 1:12: unclosed here-document `EOF`"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Check mismatch (-want +got):\n%s", diff)
	}
	if s := got[0].String(); s != `rule wrong-example: "docs/sub/a.md" should match: it does not` {
		t.Errorf("String = %q", s)
	}
}

func TestActionFromText(t *testing.T) {
	tests := []struct {
		in   string
		want Action
	}{
		{"src/main.go", Action{Kind: "write", Path: "src/main.go"}},
		{"read:src/main.go", Action{Kind: "read", Path: "src/main.go"}},
		{"git status", Action{Kind: "shell", Command: "git status", Cwd: "."}},
		{"shell:ls", Action{Kind: "shell", Command: "ls", Cwd: "."}},
		{"https://example.com/x", Action{Kind: "network", URL: "https://example.com/x"}},
		{"POST https://example.com/x", Action{Kind: "network", Method: "POST", URL: "https://example.com/x"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ActionFromText(tt.in)); diff != "" {
			t.Errorf("ActionFromText(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestExplainGolden(t *testing.T) {
	p, err := ParsePolicy([]byte(precedencePolicy))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, in := range []string{"git status && ls -la", "bash -c 'git push --force'", "src/gen/x.go", "README.md", "sudo ls", "POST https://api.github.com/x"} {
		b.WriteString("$ agenthub policy explain " + in + "\n")
		b.WriteString(p.Explain(ActionFromText(in)))
		b.WriteString("\n")
	}
	golden := filepath.Join("testdata", "explain.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("Explain output changed (-want +got):\n%s", diff)
	}
	if !strings.Contains(b.String(), "decision: "+string(backend.Deny)) {
		t.Error("golden lacks a deny")
	}
}
