package approval

import (
	"encoding/json"
	"strings"
	"testing"

	"agenthub/backend"
)

// mcpAction is the policy's view of a call of mcp__<server>__<tool>, read
// through ActionOf from the subject the MCP tool sends (backend/mcp).
func mcpAction(t *testing.T, server, tool string, readOnly bool) Action {
	t.Helper()
	subj := map[string]any{"kind": "mcp", "server": server, "tool": tool, "arguments": map[string]any{"q": 1}}
	if readOnly {
		subj["read_only"] = true
	}
	b, _ := json.Marshal(subj)
	a, err := ActionOf(backend.GateRequest{Tool: "mcp__" + server + "__" + tool,
		Action: backend.GatedAction{Kind: backend.ActionMCP, Subject: b}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

const mcpPolicy = `version = 1
[[mcp]]
id = "docs-read"
server = "docs"
read_only = true
verdict = "allow"
match = ["docs/search read-only"]
not_match = ["docs/search", "notes/search read-only"]

[[mcp]]
id = "docs-drop"
server = "docs"
tool = "drop_*"
verdict = "deny"
match = ["docs/drop_all", "docs/DROP_ALL"]

[[mcp]]
id = "notes-all"
server = "notes"
verdict = "allow"

[[mcp]]
id = "notes-delete"
server = "notes"
tool = "delete"
verdict = "ask"

[[mcp]]
id = "team"
server = "team-*"
tool = "{list,get}_*"
verdict = "allow"
`

func TestEvaluateMCP(t *testing.T) {
	p, err := ParsePolicy([]byte(mcpPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if fails := p.Check(); len(fails) != 0 {
		t.Fatalf("examples: %v", fails)
	}
	tests := []struct {
		name, server, tool string
		readOnly           bool
		want               backend.Verdict
		rule               string
	}{
		{"read-only tool of a trusted server", "docs", "search", true, backend.Allow, "docs-read"},
		{"unannotated tool of that server", "docs", "search", false, backend.Ask, "default:mcp"},
		{"deny beats allow", "docs", "drop_all", true, backend.Deny, "docs-drop"},
		{"deny matches case-insensitively", "docs", "DROP_all", true, backend.Deny, "docs-drop"},
		{"server allowed whole", "notes", "write", false, backend.Allow, "notes-all"},
		{"allow beats ask", "notes", "delete", false, backend.Allow, "notes-all"},
		{"glob server and tool", "team-a", "get_user", false, backend.Allow, "team"},
		{"glob tool miss", "team-a", "put_user", false, backend.Ask, "default:mcp"},
		{"unknown server", "web", "fetch", true, backend.Ask, "default:mcp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := p.Evaluate(mcpAction(t, tc.server, tc.tool, tc.readOnly))
			if r.Verdict != tc.want || r.RuleID != tc.rule || r.Kind != backend.ActionMCP {
				t.Fatalf("%s by %s (kind %s), want %s by %s; trace %+v", r.Verdict, r.RuleID, r.Kind, tc.want, tc.rule, r.Trace)
			}
			if len(r.Trace) < len(p.MCP) {
				t.Errorf("trace has %d steps, want every rule: %+v", len(r.Trace), r.Trace)
			}
		})
	}
	if r := DefaultPolicy().Evaluate(mcpAction(t, "docs", "search", true)); r.Verdict != backend.Ask || r.RuleID != "default:mcp" {
		t.Errorf("default: %s by %s", r.Verdict, r.RuleID)
	}
	// The engine's tool name and the subject's server must agree.
	bad := mcpAction(t, "docs", "search", true)
	bad.Tool = "mcp__notes__search"
	if r := p.Evaluate(bad); r.Verdict != backend.Ask || r.RuleID != RuleInvalidSubject {
		t.Errorf("mismatched server: %s by %s", r.Verdict, r.RuleID)
	}
}

func TestParseMCPRules(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no server", "[[mcp]]\ntool = \"x\"\nverdict = \"allow\"", "server"},
		{"bad verdict", "[[mcp]]\nserver = \"a\"\nverdict = \"yes\"", "verdict"},
		{"slash in tool", "[[mcp]]\nserver = \"a\"\ntool = \"a/b\"\nverdict = \"deny\"", "tool"},
		{"bad glob", "[[mcp]]\nserver = \"a[\"\nverdict = \"deny\"", "server"},
		{"typo", "[[mcp]]\nserver = \"a\"\nreadonly = true\nverdict = \"deny\"", "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte("version = 1\n" + tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	p, _ := ParsePolicy([]byte("version = 1\n[[mcp]]\nid = \"x\"\nserver = \"a\"\ntool = \"t\"\nverdict = \"allow\"\nmatch = [\"a/u\"]\nnot_match = [\"a\"]"))
	if fails := p.Check(); len(fails) != 2 {
		t.Errorf("check: %v", fails)
	}
}

// TestMCPGrantAndAlwaysAllow: the grant covers this tool of this server
// with any arguments, nothing else; "always allow" writes an mcp rule that
// allows exactly it.
func TestMCPGrantAndAlwaysAllow(t *testing.T) {
	a := mcpAction(t, "docs", "search", false)
	g, err := GrantPattern(a)
	if err != nil {
		t.Fatal(err)
	}
	if g.Preview() != "mcp: tool search of server docs, any arguments" {
		t.Errorf("preview %q", g.Preview())
	}
	if !g.Covers(mcpAction(t, "docs", "search", true)) || g.Covers(mcpAction(t, "docs", "search2", false)) ||
		g.Covers(mcpAction(t, "notes", "search", false)) {
		t.Errorf("covers the wrong calls")
	}
	text, err := AddRule([]byte("version = 1\n"), g)
	if err != nil {
		t.Fatal(err)
	}
	want := "[[mcp]]\nid = 'always-mcp-1'\nserver = 'docs'\ntool = 'search'\nverdict = 'allow'\n"
	if !strings.HasSuffix(string(text), want) {
		t.Errorf("rule:\n%s\nwant it to end with\n%s", text, want)
	}
	after, err := ParsePolicy(text)
	if err != nil {
		t.Fatal(err)
	}
	if r := after.Evaluate(a); r.Verdict != backend.Allow || r.RuleID != "always-mcp-1" {
		t.Errorf("after: %s by %s", r.Verdict, r.RuleID)
	}
	if r := after.Evaluate(mcpAction(t, "docs", "searcher", false)); r.Verdict != backend.Ask {
		t.Errorf("the rule allows another tool: %s", r.Verdict)
	}
	if _, err := AddRule(nil, Grant{Kind: backend.ActionMCP, Server: "docs"}); err == nil {
		t.Error("a grant without a tool became a rule")
	}
	if got := ActionFromText("mcp:docs/search read-only"); got.Server != "docs" || got.Tool != "mcp__docs__search" || !got.ReadOnly {
		t.Errorf("ActionFromText: %+v", got)
	}
}

// TestMCPTrustedReadOnly: with the profile's allow_read_only, a read-only
// call no rule matches is allowed; a deny or ask rule still wins, and an
// unannotated tool still asks.
func TestMCPTrustedReadOnly(t *testing.T) {
	p, err := ParsePolicy([]byte(mcpPolicy))
	if err != nil {
		t.Fatal(err)
	}
	trusted := func(server, tool string, readOnly bool) Action {
		a := mcpAction(t, server, tool, readOnly)
		a.TrustReadOnly = true
		return a
	}
	for _, tc := range []struct {
		a    Action
		want backend.Verdict
		rule string
	}{
		{trusted("web", "fetch", true), backend.Allow, RuleReadOnlyDefault},
		{trusted("web", "fetch", false), backend.Ask, "default:mcp"},
		{trusted("docs", "drop_all", true), backend.Deny, "docs-drop"},
		{trusted("notes", "delete", true), backend.Allow, "notes-all"},
	} {
		if r := p.Evaluate(tc.a); r.Verdict != tc.want || r.RuleID != tc.rule {
			t.Errorf("%s/%s: %s by %s, want %s by %s", tc.a.Server, tc.a.Tool, r.Verdict, r.RuleID, tc.want, tc.rule)
		}
	}
	ask, _ := ParsePolicy([]byte("version = 1\n[[mcp]]\nid = \"a\"\nserver = \"web\"\nverdict = \"ask\"\n"))
	if r := ask.Evaluate(trusted("web", "fetch", true)); r.Verdict != backend.Ask || r.RuleID != "a" {
		t.Errorf("ask rule: %s by %s", r.Verdict, r.RuleID)
	}
}
