package approval

import (
	"fmt"
	"regexp"
	"strings"

	"agenthub/backend"

	"github.com/bmatcuk/doublestar/v4"
)

// MCPRule matches calls of MCP tools (kind mcp, tools named
// mcp__<server>__<tool>): Server and Tool are globs over the server's name
// and the server's own tool name (empty Tool: every tool). ReadOnly
// restricts the rule to tools the server annotates readOnlyHint; that
// annotation comes from the server, so such a rule trusts it.
type MCPRule struct {
	ID       string          `toml:"id,omitempty"`
	Server   string          `toml:"server"`
	Tool     string          `toml:"tool,omitempty"`
	ReadOnly bool            `toml:"read_only,omitempty"`
	Verdict  backend.Verdict `toml:"verdict"`
	Match    []string        `toml:"match,omitempty"`
	NotMatch []string        `toml:"not_match,omitempty"`
}

// MCPToolPrefix starts the name of every MCP tool the engine offers.
const MCPToolPrefix = "mcp__"

// mcpServerRE is a server name as profiles allow it.
var mcpServerRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func (p *Policy) validateMCP() error {
	for i, r := range p.MCP {
		name := ruleName("mcp", i, r.ID)
		if !validVerdict(r.Verdict) {
			return fmt.Errorf("mcp rule %s: verdict %q must be allow, ask or deny", name, r.Verdict)
		}
		if err := validMCPPattern(r.Server, r.Tool); err != nil {
			return fmt.Errorf("mcp rule %s: %w", name, err)
		}
	}
	return nil
}

// validMCPPattern checks a rule's server and tool globs; the server must
// be named (a glob such as "docs-*" is fine, "" is not).
func validMCPPattern(server, tool string) error {
	if server == "" || !validGlob(server) {
		return fmt.Errorf("server %q is not a valid server name or glob", server)
	}
	if tool != "" && !validGlob(tool) {
		return fmt.Errorf("tool %q is not a valid tool name or glob", tool)
	}
	return nil
}

// mcpTarget is the server and the server's tool name of an MCP action: the
// subject's server and the engine's tool name must agree
// (mcp__<server>__<tool>).
func mcpTarget(a Action) (server, tool string, ok bool) {
	if !mcpServerRE.MatchString(a.Server) {
		return "", "", false
	}
	tool, ok = strings.CutPrefix(a.Tool, MCPToolPrefix+a.Server+"__")
	return a.Server, tool, ok && tool != ""
}

// mcpRuleMatch matches one rule; deny rules also match case-insensitively,
// so case only ever makes a rule stricter.
func mcpRuleMatch(r MCPRule, server, tool string, readOnly bool) bool {
	deny := r.Verdict == backend.Deny
	if r.ReadOnly && !readOnly {
		return false
	}
	if !globMatch(r.Server, server, deny) {
		return false
	}
	return r.Tool == "" || globMatch(r.Tool, tool, deny)
}

// mcpPattern is the rule as the trace shows it: server/tool, "(read-only)".
func mcpPattern(r MCPRule) string {
	t := r.Tool
	if t == "" {
		t = "*"
	}
	s := r.Server + "/" + t
	if r.ReadOnly {
		s += " (read-only)"
	}
	return s
}

// RuleReadOnlyDefault names the default of a read-only MCP call whose
// server the profile trusts (allow_read_only): allow.
const RuleReadOnlyDefault = "default:mcp-read-only"

// evalMCP decides an MCP tool call: Deny > Allow > Ask among the mcp rules,
// the most specific reported; no match asks, except for a read-only call
// whose server the profile trusts (allow_read_only), which is allowed. A
// call whose server and tool cannot be read asks.
func (p *Policy) evalMCP(a Action) backend.PolicyResult {
	t := newTally()
	server, tool, ok := mcpTarget(a)
	if !ok {
		t.note(RuleInvalidSubject, a.Tool, backend.Ask)
		return backend.PolicyResult{Verdict: backend.Ask, Kind: backend.ActionMCP, RuleID: RuleInvalidSubject,
			Reason: "the MCP server and tool cannot be read: ask", Trace: t.trace}
	}
	for i, r := range p.MCP {
		score := globScore(r.Server) + globScore(r.Tool)
		if r.ReadOnly {
			score++
		}
		t.step(ruleName("mcp", i, r.ID), mcpPattern(r), mcpRuleMatch(r, server, tool, a.ReadOnly), r.Verdict, score)
	}
	if len(t.best) == 0 && a.ReadOnly && a.TrustReadOnly {
		t.note(RuleReadOnlyDefault, server+"/"+tool, backend.Allow)
		return backend.PolicyResult{Verdict: backend.Allow, Kind: backend.ActionMCP, RuleID: RuleReadOnlyDefault,
			Trace: t.trace, Reason: "the profile trusts the read-only tools of server " + server + " (allow_read_only)"}
	}
	return t.outcome(backend.ActionMCP, backend.Ask)
}

// mcpExample reads a rule example: "server/tool", or "server/tool
// read-only" for a tool the server annotates read-only.
func mcpExample(ex string) (Action, bool) {
	f := strings.Fields(ex)
	if len(f) == 0 || len(f) > 2 || (len(f) == 2 && f[1] != "read-only") {
		return Action{}, false
	}
	server, tool, ok := strings.Cut(f[0], "/")
	if !ok || server == "" || tool == "" {
		return Action{}, false
	}
	return Action{Kind: backend.ActionMCP, Server: server, Tool: MCPToolPrefix + server + "__" + tool,
		ReadOnly: len(f) == 2}, true
}

// mcpGrant is the grant for an MCP call: this tool of this server, with
// any arguments. A rule from it names the exact server and tool.
func mcpGrant(a Action) (Grant, error) {
	server, tool, ok := mcpTarget(a)
	if !ok {
		return Grant{}, ErrNoGrant
	}
	return Grant{Kind: backend.ActionMCP, Tool: a.Tool, Server: server, MCPTool: tool}, nil
}

// coversMCP: the same server and tool (literally, not as globs).
func (g Grant) coversMCP(a Action) bool {
	server, tool, ok := mcpTarget(a)
	return ok && g.Server != "" && g.MCPTool != "" && server == g.Server && tool == g.MCPTool
}

// mcpRule is the allow rule "always allow" appends for an MCP grant; glob
// characters in the names are escaped so the rule matches only them.
func mcpRule(id string, g Grant) MCPRule {
	return MCPRule{ID: id, Server: globEscaper.Replace(g.Server), Tool: globEscaper.Replace(g.MCPTool),
		Verdict: backend.Allow}
}

func validGlob(g string) bool { return doublestar.ValidatePattern(g) && !strings.Contains(g, "/") }
