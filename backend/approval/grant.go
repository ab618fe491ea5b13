package approval

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"agenthub/backend"

	"github.com/pelletier/go-toml/v2"
)

// Grant is the exact pattern that "approve for this run" and "always allow in
// this workspace" cover (AP11): kind (and tool); a path glob; an argv prefix
// (or the exact argv) and cwd; method and host. It never covers push,
// publish, deploy or secret access (AP6), and a Deny rule beats it: the
// engine evaluates the policy before consulting grants.
type Grant struct {
	Kind   backend.ActionKind `json:"kind"`
	Tool   string             `json:"tool,omitempty"`
	Glob   string             `json:"glob,omitempty"`
	Prefix []string           `json:"prefix,omitempty"`
	Exact  bool               `json:"exact,omitempty"` // Prefix is the whole argv
	Cwd    string             `json:"cwd,omitempty"`
	Method string             `json:"method,omitempty"`
	Host   string             `json:"host,omitempty"`
	// Server and MCPTool name the MCP server and its tool (kind mcp).
	Server  string `json:"server,omitempty"`
	MCPTool string `json:"mcpTool,omitempty"`
	// Network (shell): the grant also covers the command's network access;
	// a grant without it never covers a command that asks for the network.
	Network bool `json:"network,omitempty"`
}

// ErrNoGrant means an action cannot be covered by a grant or rule: only
// "approve once" and the rejections are offered for it.
var ErrNoGrant = errors.New("no grant is offered for this action")

// GrantPattern returns the grant that would cover a, or ErrNoGrant for
// push, publish, deploy, secrets, the policy directory, and shell commands
// that are compound, elevated, redirected or dynamic in their prefix.
func GrantPattern(a Action) (Grant, error) {
	if a.Kind.AlwaysAsks() || a.Kind == backend.ActionSecret {
		return Grant{}, ErrNoGrant
	}
	switch a.Kind {
	case backend.ActionWrite, backend.ActionPatch:
		glob, ok := pathsGlob(a.paths())
		if !ok {
			return Grant{}, ErrNoGrant
		}
		return Grant{Kind: a.Kind, Tool: a.Tool, Glob: glob}, nil
	case backend.ActionShell:
		part, ok := grantablePart(a)
		if !ok {
			return Grant{}, ErrNoGrant
		}
		prefix, exact := argvPrefix(part)
		if prefix == nil {
			return Grant{}, ErrNoGrant
		}
		return Grant{Kind: a.Kind, Tool: a.Tool, Prefix: prefix, Exact: exact, Cwd: cleanCwd(a.Cwd), Network: a.Network}, nil
	case backend.ActionNetwork:
		host := hostOf(a.URL)
		if host == "" {
			return Grant{}, ErrNoGrant
		}
		return Grant{Kind: a.Kind, Tool: a.Tool, Method: httpMethod(a.Method), Host: host}, nil
	case backend.ActionCommit:
		return Grant{Kind: a.Kind, Tool: a.Tool}, nil
	case backend.ActionMCP:
		return mcpGrant(a) // mcp.go
	}
	return Grant{}, ErrNoGrant
}

// pathsGlob is a glob matching exactly the given paths, or false when one
// of them is invalid, secret or in .agenthub/.
func pathsGlob(paths []string) (string, bool) {
	if len(paths) == 0 {
		return "", false
	}
	quoted := make([]string, 0, len(paths))
	for _, p := range sortedPaths(paths) {
		clean, ok := cleanRel(p)
		if secret, _ := SecretPath(p); !ok || secret || agentHubPath(clean) {
			return "", false
		}
		quoted = append(quoted, globEscaper.Replace(clean))
	}
	if len(quoted) == 1 {
		return quoted[0], true
	}
	return "{" + strings.Join(quoted, ",") + "}", true
}

var globEscaper = strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`, `{`, `\{`, `}`, `\}`, `,`, `\,`, `\`, `\\`)

// grantablePart returns the single simple command of a shell action when a
// grant may cover it.
func grantablePart(a Action) (Part, bool) {
	parsed := ParseShell(a.commandLine())
	if parsed.Unsupported != "" || len(parsed.Parts) != 1 {
		return Part{}, false
	}
	part := parsed.Parts[0]
	for name := range a.Env {
		part.Env = append(part.Env, name) // the tool's env argument, as in evaluation
	}
	if len(part.Argv) == 0 || allowCap(part) != "" {
		return Part{}, false
	}
	if k := classify(part); k.AlwaysAsks() {
		return Part{}, false
	}
	for _, w := range append(append(append([]string(nil), part.Argv...), part.Inputs...), part.Outputs...) {
		if secret, _ := SecretPath(w); secret {
			return Part{}, false
		}
	}
	if cred, _ := credentialCommand(part.Argv); cred {
		return Part{}, false
	}
	return part, true
}

var subcommandWord = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_:-]*$`)

// argvPrefix is the command and up to two subcommand words (go test, npm run
// build). A bare command with arguments (rm -rf x) is granted only exactly.
func argvPrefix(part Part) ([]string, bool) {
	static := part.staticPrefix()
	n := 0
	for n < static && n < 3 && (n == 0 || subcommandWord.MatchString(part.Argv[n])) {
		n++
	}
	if n == 0 {
		return nil, false
	}
	if n == 1 && len(part.Argv) > 1 {
		if part.Dynamic {
			return nil, false
		}
		return append([]string(nil), part.Argv...), true
	}
	return append([]string(nil), part.Argv[:n]...), false
}

// Preview is the text shown as grantPreview.
func (g Grant) Preview() string {
	var s string
	switch g.Kind {
	case backend.ActionWrite, backend.ActionPatch:
		s = fmt.Sprintf("%s to %s", g.Kind, g.Glob)
	case backend.ActionShell:
		s = "shell: " + strings.Join(quoteAll(g.Prefix), " ")
		if !g.Exact {
			s += " …"
		}
		s += " in " + g.Cwd
		if g.Network {
			s += " with network"
		}
	case backend.ActionNetwork:
		s = fmt.Sprintf("network: %s %s", g.Method, g.Host)
	case backend.ActionMCP:
		return fmt.Sprintf("mcp: tool %s of server %s, any arguments", g.MCPTool, g.Server)
	default:
		s = string(g.Kind)
	}
	if g.Tool != "" {
		s += " (tool " + g.Tool + ")"
	}
	return s
}

// Message is Preview as a message key with arguments, for the UI to show
// in the reader's language (issue 21). Every key it can return is in
// [MessageKeys].
func (g Grant) Message() *backend.Text {
	tool := g.Tool
	switch g.Kind {
	case backend.ActionWrite:
		return backend.Msg("rule_write", "glob", g.Glob, "tool", tool)
	case backend.ActionPatch:
		return backend.Msg("rule_patch", "glob", g.Glob, "tool", tool)
	case backend.ActionShell:
		command := strings.Join(quoteAll(g.Prefix), " ")
		switch {
		case g.Network && g.Exact:
			return backend.Msg("rule_shell_exact_network", "command", command, "cwd", g.Cwd, "tool", tool)
		case g.Network:
			return backend.Msg("rule_shell_prefix_network", "command", command, "cwd", g.Cwd, "tool", tool)
		}
		if g.Exact {
			return backend.Msg("rule_shell_exact", "command", command, "cwd", g.Cwd, "tool", tool)
		}
		return backend.Msg("rule_shell_prefix", "command", command, "cwd", g.Cwd, "tool", tool)
	case backend.ActionNetwork:
		return backend.Msg("rule_network", "method", g.Method, "host", g.Host, "tool", tool)
	case backend.ActionCommit:
		return backend.Msg("rule_commit", "tool", tool)
	case backend.ActionMCP:
		return backend.Msg("rule_mcp", "tool", g.MCPTool, "server", g.Server)
	}
	return backend.Msg("rule_other", "kind", string(g.Kind), "tool", tool)
}

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return out
}

// Covers reports whether the grant covers a. It re-checks everything
// GrantPattern refuses, so a stored grant can never widen beyond it.
func (g Grant) Covers(a Action) bool {
	if a.Kind != g.Kind || (g.Tool != "" && a.Tool != g.Tool) {
		return false
	}
	switch a.Kind {
	case backend.ActionWrite, backend.ActionPatch:
		if _, ok := pathsGlob(a.paths()); !ok {
			return false
		}
		for _, p := range a.paths() {
			if !globMatch(g.Glob, mustClean(p), false) {
				return false
			}
		}
		return true
	case backend.ActionShell:
		part, ok := grantablePart(a)
		if !ok || cleanCwd(a.Cwd) != cleanCwd(g.Cwd) || part.staticPrefix() < len(g.Prefix) || len(g.Prefix) == 0 ||
			(a.Network && !g.Network) {
			return false
		}
		if g.Exact && (part.Dynamic || len(part.Argv) != len(g.Prefix)) {
			return false
		}
		for i, w := range g.Prefix {
			if part.Argv[i] != w {
				return false
			}
		}
		return true
	case backend.ActionNetwork:
		return g.Host != "" && hostOf(a.URL) == g.Host && httpMethod(a.Method) == g.Method
	case backend.ActionCommit:
		return true
	case backend.ActionMCP:
		return g.coversMCP(a)
	}
	return false
}

func mustClean(p string) string {
	c, _ := cleanRel(p)
	return c
}

// AddRule appends an allow rule equivalent to g to a policy file's text and
// returns the new text, for the app to show as a diff before saving. The
// original text (comments included) is kept byte for byte. The rule block is
// produced only by the TOML encoder, under a fixed comment line that holds no
// text of the action; the new text is parsed again and must be the old
// policy plus exactly that rule, or nothing is written (issue 14: a newline
// in an approved command once ended the comment and injected a rule).
func AddRule(policyText []byte, g Grant) ([]byte, error) {
	text, _, err := addRule(policyText, g)
	return text, err
}

// addRule is AddRule that also returns the id the new rule got.
func addRule(policyText []byte, g Grant) ([]byte, string, error) {
	if err := validGrant(g); err != nil {
		return nil, "", err
	}
	p, err := ParsePolicy(policyText)
	if err != nil {
		return nil, "", fmt.Errorf("add rule: current policy: %w", err)
	}
	rule, id, err := ruleFor(g, p)
	if err != nil {
		return nil, "", err
	}
	block, err := toml.Marshal(rule)
	if err != nil {
		return nil, "", fmt.Errorf("add rule: encode: %w", err)
	}
	var buf bytes.Buffer
	if len(bytes.TrimSpace(policyText)) == 0 {
		buf.WriteString("# AgentHub workspace policy, see docs/POLICY.md\nversion = 1\n")
	} else {
		buf.Write(policyText)
		if !bytes.HasSuffix(policyText, []byte("\n")) {
			buf.WriteByte('\n')
		}
	}
	buf.WriteString("\n# added by always allow in this workspace\n")
	buf.Write(block)
	if err := sameAsPlusRule(p, rule, buf.Bytes()); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), id, nil
}

// sameAsPlusRule parses text and checks it is exactly old with the one rule
// of rule appended to its class, nothing more, nothing less.
func sameAsPlusRule(old, rule *Policy, text []byte) error {
	got, err := ParsePolicy(text)
	if err != nil {
		return fmt.Errorf("add rule: the new policy does not parse, nothing was written: %w", err)
	}
	want := Policy{Version: old.Version,
		Write:   append(slices.Clone(old.Write), rule.Write...),
		Shell:   append(slices.Clone(old.Shell), rule.Shell...),
		Network: append(slices.Clone(old.Network), rule.Network...),
		Git:     append(slices.Clone(old.Git), rule.Git...),
		MCP:     append(slices.Clone(old.MCP), rule.MCP...),
	}
	if !reflect.DeepEqual(normalized(&want), normalized(got)) {
		return errors.New("add rule: the new policy file would differ from the current policy plus the rule shown, nothing was written")
	}
	return nil
}

// normalized makes empty and missing lists compare equal.
func normalized(p *Policy) Policy {
	n := Policy{Version: p.Version}
	n.Write = slices.Clip(append([]WriteRule{}, p.Write...))
	n.Shell = slices.Clip(append([]ShellRule{}, p.Shell...))
	n.Network = slices.Clip(append([]NetworkRule{}, p.Network...))
	n.Git = slices.Clip(append([]GitRule{}, p.Git...))
	n.MCP = slices.Clip(append([]MCPRule{}, p.MCP...))
	return n
}

// validGrant rejects grants no rule may express (AP6).
func validGrant(g Grant) error {
	switch {
	case g.Kind.AlwaysAsks() || g.Kind == backend.ActionSecret:
		return fmt.Errorf("add rule for %s: %w", g.Kind, ErrNoGrant)
	case (g.Kind == backend.ActionWrite || g.Kind == backend.ActionPatch) && g.Glob == "":
		return fmt.Errorf("add rule: write grant without glob: %w", ErrNoGrant)
	case g.Kind == backend.ActionShell && len(g.Prefix) == 0:
		return fmt.Errorf("add rule: shell grant without argv: %w", ErrNoGrant)
	case g.Kind == backend.ActionNetwork && g.Host == "":
		return fmt.Errorf("add rule: network grant without host: %w", ErrNoGrant)
	case g.Kind == backend.ActionMCP && (!mcpServerRE.MatchString(g.Server) || g.MCPTool == ""):
		return fmt.Errorf("add rule: mcp grant without server and tool: %w", ErrNoGrant)
	}
	return nil
}

// ruleFor is the one allow rule equivalent to g, as a policy holding only
// it (without a version, so it encodes to the rule's table alone), and its
// id: one no rule of p has, so that revoking a rule never makes the next
// one share a name with another (issue 21).
func ruleFor(g Grant, p *Policy) (*Policy, string, error) {
	taken := map[string]bool{}
	each(p, func(_ string, _ int, name string) { taken[name] = true })
	n := len(p.Write) + len(p.Shell) + len(p.Network) + len(p.Git) + len(p.MCP) + 1
	id := fmt.Sprintf("always-%s-%d", g.Kind, n)
	for taken[id] {
		n++
		id = fmt.Sprintf("always-%s-%d", g.Kind, n)
	}
	rule, err := ruleOf(g, id)
	return rule, id, err
}

func ruleOf(g Grant, id string) (*Policy, error) {
	switch g.Kind {
	case backend.ActionWrite, backend.ActionPatch:
		return &Policy{Write: []WriteRule{{ID: id, Glob: g.Glob, Verdict: backend.Allow}}}, nil
	case backend.ActionShell:
		r := ShellRule{ID: id, Prefix: g.Prefix, Cwd: g.Cwd, Verdict: backend.Allow, Network: g.Network}
		if g.Exact {
			r.Prefix, r.Command = nil, strings.Join(quoteAll(g.Prefix), " ")
		}
		return &Policy{Shell: []ShellRule{r}}, nil
	case backend.ActionNetwork:
		return &Policy{Network: []NetworkRule{{ID: id, Host: g.Host, Method: g.Method, Verdict: backend.Allow}}}, nil
	case backend.ActionCommit:
		return &Policy{Git: []GitRule{{ID: id, Action: "commit", Verdict: backend.Allow}}}, nil
	case backend.ActionMCP:
		return &Policy{MCP: []MCPRule{mcpRule(id, g)}}, nil
	}
	return nil, fmt.Errorf("add rule for %s: %w", g.Kind, ErrNoGrant)
}
