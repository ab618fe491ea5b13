package app

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// pkg is the part of `go list -json` the layout rules read.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// rule forbids packages matching from to depend on anything matching one of
// the banned prefixes, transitively unless direct is set.
type rule struct {
	from   func(string) bool
	banned []string
	direct bool
	why    string
}

const wailsModule = "github.com/wailsapp/wails"

func under(prefix string) func(string) bool {
	return func(p string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }
}

func exactly(name string) func(string) bool { return func(p string) bool { return p == name } }

var rules = []rule{
	{from: under("agenthub/backend"), banned: []string{"agenthub/app", wailsModule}, why: "the backend must run headless and never reach up into the UI"},
	{from: under("agenthub/workspace"), banned: []string{"agenthub/app", "agenthub/backend", wailsModule}, why: "workspace is a lower layer than backend"},
	{from: under("agenthub/diffview"), banned: []string{"agenthub/", wailsModule}, why: "diffview is a leaf: texts in, diffs out"},
	{from: under("agenthub/app/api"), banned: []string{wailsModule, "agenthub/app/cli", "agenthub/app/httpapi"}, why: "the facades are transport-neutral"},
	{from: under("agenthub/app/httpapi"), banned: []string{wailsModule, "agenthub/app/cli"}, why: "browser mode must not need the desktop runtime"},
	{from: under("agenthub/app/cli"), banned: []string{wailsModule}, why: "the CLI must run without GTK"},
	{from: under("agenthub/app/protocol"), banned: []string{wailsModule, "agenthub/app/api", "agenthub/app/cli", "agenthub/app/httpapi", "agenthub/backend/engine", "agenthub/backend/store"}, why: "the protocol translators are pure functions of the event vocabulary; app/httpapi does their I/O"},
	{from: under("agenthub/backend/runtime"), banned: []string{"agenthub/backend/engine", "agenthub/app"}, why: "the runtime adapters sit beneath the engine, whose tests play playbooks through them"},
	{from: under("agenthub/backend/tools"), banned: []string{"agenthub/backend/runtime", "agenthub/backend/engine"}, why: "the built-in tools sit beneath the engine and the runtime adapters that use them"},
	{from: exactly("agenthub/backend"), banned: []string{"agenthub/", "github.com/", "golang.org/", "go.uber.org/"}, why: "the vocabulary package is standard library only"},
	{from: exactly("agenthub/workspace/crashpoint"), banned: []string{"agenthub/", "github.com/", "golang.org/"}, why: "the crash hook is standard library only, so every layer may call it"},
	{from: exactly("agenthub/backend/canon"), banned: []string{"agenthub/", "github.com/", "golang.org/"}, why: "canonical JSON is standard library only"},
	{from: under("agenthub/backend/bundle"), banned: []string{"agenthub/app", "agenthub/workspace", "agenthub/backend/store", "agenthub/backend/engine", "agenthub/backend/redact", "agenthub/backend/scrub", "github.com/", "golang.org/"}, why: "a run bundle is verified with nothing but its bytes: standard library, the vocabulary and canon"},
	{from: func(p string) bool { return p != "agenthub/backend/proc" && strings.HasPrefix(p, "agenthub/") }, banned: []string{"os/exec"}, direct: true, why: "backend/proc is the only package that starts processes"},
	{from: under("agenthub"), banned: []string{"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go"}, why: "backend/llm/openai and anthropic speak the two wire formats over net/http; the provider SDKs were most of the binary (docs/PERFORMANCE.md)"},
	{from: func(p string) bool { return !strings.HasPrefix(p, "agenthub/backend/store") }, banned: []string{"github.com/mattn/go-sqlite3", "github.com/pressly/goose"}, direct: true, why: "only backend/store talks to SQLite"},
	{from: func(p string) bool { return strings.HasPrefix(p, "agenthub") }, banned: []string{"testing"}, direct: true, why: "non-test code never imports testing"},
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "agenthub/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		for _, v := range violations(p) {
			t.Error(v)
		}
	}
}

// TestRulesCatchViolations keeps the checker honest: a synthetic package
// that breaks each kind of rule must be reported.
func TestRulesCatchViolations(t *testing.T) {
	cases := []pkg{
		{ImportPath: "agenthub/backend/engine", Deps: []string{"github.com/wailsapp/wails/v2/pkg/runtime"}},
		{ImportPath: "agenthub/diffview", Deps: []string{"agenthub/backend"}},
		{ImportPath: "agenthub/backend", Deps: []string{"github.com/google/uuid"}},
		{ImportPath: "agenthub/backend/tools", Imports: []string{"os/exec"}},
		{ImportPath: "agenthub/backend/engine", Imports: []string{"github.com/mattn/go-sqlite3"}},
		{ImportPath: "agenthub/app/cli", Deps: []string{"github.com/wailsapp/wails/v2"}},
		{ImportPath: "agenthub/backend/bundle", Deps: []string{"agenthub/backend/store"}},
		{ImportPath: "agenthub/backend/llm/anthropic", Deps: []string{"github.com/anthropics/anthropic-sdk-go"}},
	}
	for _, p := range cases {
		if len(violations(p)) == 0 {
			t.Errorf("no rule caught %s importing %v%v", p.ImportPath, p.Deps, p.Imports)
		}
	}
}

func violations(p pkg) []string {
	var out []string
	for _, r := range rules {
		if !r.from(p.ImportPath) {
			continue
		}
		deps := p.Deps
		if r.direct {
			deps = p.Imports
		}
		for _, d := range deps {
			for _, b := range r.banned {
				if d == b || strings.HasSuffix(b, "/") && strings.HasPrefix(d, b) || strings.HasPrefix(d, b+"/") {
					out = append(out, p.ImportPath+" imports "+d+": "+r.why)
				}
			}
		}
	}
	return out
}
