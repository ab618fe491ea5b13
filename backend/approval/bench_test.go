package approval

import (
	"os/exec"
	"strings"
	"testing"
)

func BenchmarkParseShell(b *testing.B) {
	cmd := `timeout 60 env CGO_ENABLED=0 bash -c 'go test ./... && git status --short | grep -v "^??" > /dev/null; echo "$(git rev-parse HEAD)"'`
	for b.Loop() {
		ParseShell(cmd)
	}
}

func BenchmarkEvaluateShell(b *testing.B) {
	p, err := ParsePolicy([]byte(precedencePolicy))
	if err != nil {
		b.Fatal(err)
	}
	a := Action{Kind: "shell", Command: "git status && ls -la | xargs rm", Cwd: "."}
	for b.Loop() {
		p.Evaluate(a)
	}
}

func BenchmarkEvaluateWrite(b *testing.B) {
	p, err := ParsePolicy([]byte(precedencePolicy))
	if err != nil {
		b.Fatal(err)
	}
	a := Action{Kind: "patch", Paths: []string{"src/a.go", "docs/b.md", "cmd/main.go"}}
	for b.Loop() {
		p.Evaluate(a)
	}
}

func BenchmarkSubjectPatch(b *testing.B) {
	a := Action{Kind: "patch", Workspace: "w", Patch: []byte(strings.Repeat("+line\n", 2000)),
		Preimages: []Preimage{{Path: "b", SHA256: "1"}, {Path: "a", SHA256: Absent}}}
	for b.Loop() {
		Subject(a)
	}
}

func BenchmarkVerifyChain1000(b *testing.B) {
	entries := chain(1000)
	for b.Loop() {
		if ok, _ := VerifyChain(entries); !ok {
			b.Fatal("broken")
		}
	}
}

// TestDependencies enforces style.md's import rule for this package:
// only the module's vocabulary, canon, go-toml, doublestar and the shell
// parser mvdan.cc/sh/v3/syntax (issue 14: a maintained parser, not ours).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{"agenthub/backend", "agenthub/backend/canon", "agenthub/backend/approval",
		"github.com/pelletier/go-toml/v2", "github.com/bmatcuk/doublestar/v4",
		"mvdan.cc/sh/v3/syntax", "mvdan.cc/sh/v3/fileutil"}
	for _, dep := range strings.Fields(string(out)) {
		ok := false
		for _, a := range allowed {
			ok = ok || dep == a || strings.HasPrefix(dep, "github.com/pelletier/go-toml/v2/")
		}
		if !ok {
			t.Errorf("backend/approval depends on %s", dep)
		}
	}
}
