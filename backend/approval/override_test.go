package approval

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"agenthub/backend"
)

func overrides(t *testing.T, text string) *Policy {
	t.Helper()
	var p Policy
	if err := toml.Unmarshal([]byte(text), &p); err != nil {
		t.Fatal(err)
	}
	if err := p.ValidateOverrides(); err != nil {
		t.Fatal(err)
	}
	return &p
}

func TestValidateOverridesOnlyTighten(t *testing.T) {
	for _, text := range []string{
		"[[mcp]]\nserver = \"a\"\nverdict = \"allow\"",
		"[[shell]]\nprefix = [\"ls\"]\nverdict = \"allow\"",
		"[[write]]\nglob = \"**\"\nverdict = \"allow\"",
	} {
		var p Policy
		if err := toml.Unmarshal([]byte(text), &p); err != nil {
			t.Fatal(err)
		}
		if err := p.ValidateOverrides(); err == nil || !strings.Contains(err.Error(), "only tighten") {
			t.Errorf("%q: %v", text, err)
		}
	}
	var p Policy
	_ = toml.Unmarshal([]byte("version = 2"), &p)
	if err := p.ValidateOverrides(); err == nil {
		t.Error("version 2 accepted")
	}
}

// TestTighten: the profile's rules make the workspace result stricter,
// never looser, and their steps join the trace.
func TestTighten(t *testing.T) {
	ws, err := ParsePolicy([]byte(mcpPolicy))
	if err != nil {
		t.Fatal(err)
	}
	over := overrides(t, `[[mcp]]
id = "no-notes-write"
server = "notes"
tool = "write"
verdict = "deny"

[[mcp]]
id = "docs-ask"
server = "docs"
verdict = "ask"
`)
	tests := []struct {
		name, server, tool string
		readOnly           bool
		want               backend.Verdict
		rule               string
	}{
		{"allow tightened to deny", "notes", "write", false, backend.Deny, "profile:no-notes-write"},
		{"allow tightened to ask", "docs", "search", true, backend.Ask, "profile:docs-ask"},
		{"deny stays deny", "docs", "drop_all", true, backend.Deny, "docs-drop"},
		{"no profile rule: unchanged", "notes", "read", false, backend.Allow, "notes-all"},
		{"ask stays ask under an ask override", "docs", "search", false, backend.Ask, "default:mcp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := mcpAction(t, tc.server, tc.tool, tc.readOnly)
			req := backend.GateRequest{Tool: a.Tool, Action: backend.GatedAction{Kind: backend.ActionMCP,
				Subject: []byte(`{"kind":"mcp","server":"` + tc.server + `","read_only":` + map[bool]string{true: "true", false: "false"}[tc.readOnly] + `}`)}}
			r := Tighten(ws.Evaluate(a), over, req)
			if r.Verdict != tc.want || r.RuleID != tc.rule {
				t.Fatalf("%s by %s, want %s by %s", r.Verdict, r.RuleID, tc.want, tc.rule)
			}
			n := 0
			for _, s := range r.Trace {
				if strings.HasPrefix(s.Rule, RuleProfilePrefix) {
					n++
				}
			}
			if n != len(over.MCP) {
				t.Errorf("%d profile steps in the trace, want %d: %+v", n, len(over.MCP), r.Trace)
			}
		})
	}
	res := ws.Evaluate(mcpAction(t, "notes", "write", false))
	if got := Tighten(res, nil, backend.GateRequest{}); got.Verdict != backend.Allow {
		t.Errorf("no overrides changed the result: %+v", got)
	}
	// Other classes use the same syntax.
	shell := overrides(t, "[[shell]]\nid = \"no-curl\"\nprefix = [\"curl\"]\nverdict = \"deny\"")
	sreq := backend.GateRequest{Tool: "run_shell", Action: backend.GatedAction{Kind: backend.ActionShell,
		Subject: []byte(`{"kind":"shell","command":"curl https://x","cwd":"."}`)}}
	if r := Tighten(backend.PolicyResult{Verdict: backend.Allow, Kind: backend.ActionShell, RuleID: "ws"}, shell, sreq); r.Verdict != backend.Deny || r.RuleID != "profile:no-curl" {
		t.Errorf("shell: %s by %s", r.Verdict, r.RuleID)
	}
}
