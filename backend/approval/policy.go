package approval

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"

	"agenthub/backend"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/pelletier/go-toml/v2"
)

// PolicyPath is the workspace-relative location of the policy file.
const PolicyPath = ".agenthub/policy.toml"

// PolicyVersion is the only policy file version this build understands.
const PolicyVersion = 1

// Policy is a parsed workspace policy file. The zero rules set is the default
// gate of run-model.md §9.1. A Policy is immutable after parsing and safe for
// concurrent use.
type Policy struct {
	Version int           `toml:"version,omitempty"`
	Write   []WriteRule   `toml:"write,omitempty"`
	Shell   []ShellRule   `toml:"shell,omitempty"`
	Network []NetworkRule `toml:"network,omitempty"`
	Git     []GitRule     `toml:"git,omitempty"`
	MCP     []MCPRule     `toml:"mcp,omitempty"` // mcp.go
	// Env names environment variables (NAME, or PREFIX_* for a prefix) a
	// command under an allow rule may set in front of itself, beyond the
	// built-in allow-list ([SafeEnv]); envallow.go.
	Env []string `toml:"env,omitempty"`
}

// WriteRule matches workspace-relative paths of writes and patches.
type WriteRule struct {
	ID       string          `toml:"id,omitempty"`
	Glob     string          `toml:"glob"`
	Verdict  backend.Verdict `toml:"verdict"`
	Match    []string        `toml:"match,omitempty"`
	NotMatch []string        `toml:"not_match,omitempty"`
}

// ShellRule matches one simple command after unwrapping: Command is the exact
// command line (compared word by word), Prefix an argv prefix. Cwd, when set,
// restricts the rule to that workspace-relative working directory.
type ShellRule struct {
	ID       string          `toml:"id,omitempty"`
	Command  string          `toml:"command,omitempty"`
	Prefix   []string        `toml:"prefix,omitempty"`
	Cwd      string          `toml:"cwd,omitempty"`
	Env      []string        `toml:"env,omitempty"` // variables this rule lets the command set, as Policy.Env
	Verdict  backend.Verdict `toml:"verdict"`
	Match    []string        `toml:"match,omitempty"`
	NotMatch []string        `toml:"not_match,omitempty"`
	// Network lets an allow rule also allow the command's network access;
	// without it a command that asks for the network asks the user.
	Network bool `toml:"network,omitempty"`
}

// NetworkRule matches a request's host (a glob such as "*.example.com") and,
// when set, its method.
type NetworkRule struct {
	ID       string          `toml:"id,omitempty"`
	Host     string          `toml:"host"`
	Method   string          `toml:"method,omitempty"`
	Verdict  backend.Verdict `toml:"verdict"`
	Match    []string        `toml:"match,omitempty"`
	NotMatch []string        `toml:"not_match,omitempty"`
}

// GitRule matches a git commit or push, whether from a git tool or a shell
// command. An allow rule for push is ignored (AP6).
type GitRule struct {
	ID       string          `toml:"id,omitempty"`
	Action   string          `toml:"action"`
	Verdict  backend.Verdict `toml:"verdict"`
	Match    []string        `toml:"match,omitempty"`
	NotMatch []string        `toml:"not_match,omitempty"`
}

// DefaultPolicy is the policy of a workspace without a policy file.
func DefaultPolicy() *Policy { return &Policy{Version: PolicyVersion} }

// LoadPolicy reads [PolicyPath] from a workspace file system (typically
// os.Root.FS). A missing file yields [DefaultPolicy].
func LoadPolicy(fsys fs.FS) (*Policy, error) {
	data, err := fs.ReadFile(fsys, PolicyPath)
	if errors.Is(err, fs.ErrNotExist) {
		return DefaultPolicy(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", PolicyPath, err)
	}
	return ParsePolicy(data)
}

// ParsePolicy parses policy file text. Unknown fields, unknown verdicts,
// invalid globs and a missing or unsupported version are errors that name the
// line where possible, so a typo never silently widens the policy.
func ParsePolicy(data []byte) (*Policy, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return DefaultPolicy(), nil
	}
	var p Policy
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, describeTOMLError(err)
	}
	if p.Version != PolicyVersion {
		return nil, fmt.Errorf("policy.toml: version = %d is not supported (want version = %d)", p.Version, PolicyVersion)
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("policy.toml: %w", err)
	}
	return &p, nil
}

func describeTOMLError(err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		first := strict.Errors[0]
		row, _ := first.Position()
		return fmt.Errorf("policy.toml line %d: unknown field %q", row, strings.Join(first.Key(), "."))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return fmt.Errorf("policy.toml line %d column %d: %s", row, col, de.Error())
	}
	return fmt.Errorf("policy.toml: %w", err)
}

func validVerdict(v backend.Verdict) bool {
	return v == backend.Allow || v == backend.Ask || v == backend.Deny
}

func (p *Policy) validate() error {
	for i, r := range p.Write {
		if !validVerdict(r.Verdict) {
			return fmt.Errorf("write rule %s: verdict %q must be allow, ask or deny", ruleName("write", i, r.ID), r.Verdict)
		}
		if r.Glob == "" || !doublestar.ValidatePattern(r.Glob) || strings.HasPrefix(r.Glob, "/") {
			return fmt.Errorf("write rule %s: glob %q is not a valid workspace-relative glob", ruleName("write", i, r.ID), r.Glob)
		}
	}
	for i, r := range p.Shell {
		name := ruleName("shell", i, r.ID)
		if !validVerdict(r.Verdict) {
			return fmt.Errorf("shell rule %s: verdict %q must be allow, ask or deny", name, r.Verdict)
		}
		if (r.Command == "") == (len(r.Prefix) == 0) {
			return fmt.Errorf("shell rule %s: set exactly one of command or prefix", name)
		}
		if r.Command != "" {
			if _, err := ruleWords(r.Command); err != nil {
				return fmt.Errorf("shell rule %s: command %q: %w", name, r.Command, err)
			}
		}
		if err := validEnvNames(r.Env); err != nil {
			return fmt.Errorf("shell rule %s: %w", name, err)
		}
	}
	if err := validEnvNames(p.Env); err != nil {
		return err
	}
	for i, r := range p.Network {
		if !validVerdict(r.Verdict) {
			return fmt.Errorf("network rule %s: verdict %q must be allow, ask or deny", ruleName("network", i, r.ID), r.Verdict)
		}
		if r.Host == "" || !doublestar.ValidatePattern(strings.ToLower(r.Host)) {
			return fmt.Errorf("network rule %s: host %q is not a valid host pattern", ruleName("network", i, r.ID), r.Host)
		}
	}
	for i, r := range p.Git {
		if !validVerdict(r.Verdict) {
			return fmt.Errorf("git rule %s: verdict %q must be allow, ask or deny", ruleName("git", i, r.ID), r.Verdict)
		}
		if r.Action != "commit" && r.Action != "push" {
			return fmt.Errorf("git rule %s: action %q must be commit or push", ruleName("git", i, r.ID), r.Action)
		}
	}
	return p.validateMCP()
}

// ruleName is the id shown in traces: the rule's own id, or its class and
// 1-based position in the file.
func ruleName(class string, i int, id string) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("%s[%d]", class, i+1)
}

// ruleWords splits a rule's command text; a rule must be one static simple
// command.
func ruleWords(command string) ([]string, error) {
	parsed := ParseShell(command)
	if parsed.Unsupported != "" {
		return nil, errors.New(parsed.Unsupported)
	}
	if len(parsed.Parts) != 1 || parsed.Parts[0].Dynamic || parsed.Parts[0].Redirect || parsed.Parts[0].Opaque != "" ||
		len(parsed.Parts[0].Argv) == 0 {
		return nil, errors.New("must be one simple command without expansions or redirections")
	}
	return parsed.Parts[0].Argv, nil
}

// hostOf returns the lower-cased host (with a non-default port) of a URL.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
