// Package profile reads agent profiles: TOML files in the data directory's
// profiles/ folder, one per profile, that say which runtime and model drive a
// run and how it stops.
//
// Invariants: a profile never holds a secret. An API key is referenced by
// the name of an environment variable (key_env), resolved when a run starts,
// and never written back. Unknown fields are errors, so a typo cannot drop a
// stop condition silently. This package only parses and validates; the
// composition root builds clients from the result.
package profile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"agenthub/backend/approval"
	"agenthub/backend/keychain"
)

// Runtimes a profile may name.
const (
	RuntimeNative = "native" // AgentHub's own loop over an LLM provider
	RuntimeScript = "script" // a playbook, never an AI model
	RuntimeClaude = "claude" // the Claude Code CLI, its permission prompts gated by AgentHub
	RuntimeACP    = "acp"    // any agent speaking ACP on stdio, started with the profile's command
	RuntimeGemini = "gemini" // Gemini CLI over ACP (`gemini --acp`)
	RuntimeCodex  = "codex"  // the Codex CLI: app-server approvals gated by AgentHub (see codex.go)
)

// Providers of the native runtime.
const (
	ProviderOpenAI    = "openai"    // OpenAI and every OpenAI-compatible server (Ollama, LM Studio, llama.cpp, vLLM)
	ProviderAnthropic = "anthropic" // Anthropic Messages API
)

// Profile is one parsed profile file.
type Profile struct {
	Name     string   `toml:"name"`
	Runtime  string   `toml:"runtime"`
	Provider string   `toml:"provider"`
	BaseURL  string   `toml:"base_url"`
	Model    string   `toml:"model"`
	Fallback []string `toml:"fallback_models"`
	// KeyEnv names the environment variable that holds the API key; empty
	// for local servers that need none.
	KeyEnv string `toml:"key_env"`
	// ModelProtocol is how a generic ACP agent (runtime = "acp") talks to
	// its model, "openai" or "anthropic": AgentHub then gives it a key
	// proxy instead of the key. Without it, an acp profile's key is never
	// passed (acp.go).
	ModelProtocol string `toml:"model_protocol"`
	// Keychain names the OS keychain entry ("service/account") that holds
	// the API key, read when a run needs it; never with key_env.
	Keychain  string `toml:"keychain"`
	System    string `toml:"system"`
	MaxTokens int    `toml:"max_tokens"`
	// ContextWindow is the model's context window in tokens; set, requests
	// estimated not to fit are compacted or truncated before they are sent.
	ContextWindow int `toml:"context_window"`
	// Tools limits the tools offered; empty offers every built-in tool.
	Tools    []string `toml:"tools"`
	Playbook string   `toml:"playbook"` // script runtime: the playbook file, relative to the profile
	// Command is the CLI of an external runtime: for claude one program (a
	// name looked up on the login shell's PATH, or an absolute path; empty
	// means the runtime's usual name); for acp and gemini the command line,
	// a string or an array of the program and its arguments (see acp.go).
	Command    Command  `toml:"command"`
	RunTimeout Duration `toml:"run_timeout"`
	Stop       Stop     `toml:"stop"`
	// Gating, Sandbox and Mode are settings of the codex runtime (codex.go).
	Gating  string `toml:"gating"`
	Sandbox string `toml:"sandbox"`
	Mode    string `toml:"mode"`
	// AcceptAdvisory names the action kinds (read, write, patch, shell,
	// network) whose advisory gating by an external runtime the profile
	// accepts: a run whose policy asks or denies such actions is refused
	// unless the kind is listed here (advisory.go, docs/PROFILES.md).
	AcceptAdvisory []string `toml:"accept_advisory"`
	// Executor runs a step's tool calls: sequential (default),
	// parallel_batch_approval or parallel_streaming (run-model.md §5).
	Executor string `toml:"executor"`
	// StateKeys are the state keys a sub-agent of this profile registers:
	// a delegate seed may set only these, and only these come back.
	StateKeys []string `toml:"state_keys"`
	// MCP lists the MCP servers whose tools a native run is offered.
	MCP []MCPServer `toml:"mcp_servers"`
	// Policy holds the profile's policy overrides: rules in the syntax of
	// the workspace policy file that may only ask or deny (docs/POLICY.md).
	Policy approval.Policy `toml:"policy"`
	// Isolation is where the profile's runs work unless a start says:
	// "worktree" (each run in its own git worktree), "checkout", or ""
	// (the workspace's default). docs/TOOLS.md#worktree-runs.
	Isolation string `toml:"isolation"`
	File      string `toml:"-"` // the file it came from
}

// Stop holds the stop conditions (run-model.md §6).
type Stop struct {
	MaxRounds         int      `toml:"max_rounds"`
	Timeout           Duration `toml:"timeout"`
	TokenBudget       int64    `toml:"token_budget"`
	ConsecutiveErrors int      `toml:"consecutive_errors"`
	StopOnTool        string   `toml:"stop_on_tool"`
	ContentMatch      string   `toml:"content_match"`
	LoopWindow        int      `toml:"loop_window"`
}

// Duration is a TOML string such as "90s" or "30m".
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: use a number with a unit, e.g. \"90s\" or \"30m\"", b)
	}
	if v < 0 {
		return fmt.Errorf("duration %q must not be negative", b)
	}
	d.Duration = v
	return nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Parse reads one profile.
func Parse(data []byte) (Profile, error) {
	var p Profile
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			return p, errors.New(strings.TrimSpace(strict.String()))
		}
		return p, err
	}
	return p, p.validate()
}

func (p Profile) validate() error {
	if err := p.validateAdvisory(); err != nil {
		return err
	}
	if p.Keychain != "" && p.Runtime != RuntimeNative {
		return errors.New("keychain: only native profiles read their key from the OS keychain; use key_env")
	}
	if p.Isolation != "" && p.Isolation != "worktree" && p.Isolation != "checkout" {
		return fmt.Errorf("isolation %q: use worktree or checkout", p.Isolation)
	}
	if p.ModelProtocol != "" && slices.Contains([]string{RuntimeNative, RuntimeScript, RuntimeClaude, RuntimeCodex, RuntimeGemini}, p.Runtime) {
		return fmt.Errorf("model_protocol: a setting of the acp runtime (runtime %q uses provider or its CLI's own)", p.Runtime)
	}
	if p.Executor != "" && p.Executor != "sequential" && p.Executor != "parallel_batch_approval" &&
		p.Executor != "parallel_streaming" {
		return fmt.Errorf("executor %q: use sequential, parallel_batch_approval or parallel_streaming", p.Executor)
	}
	if !nameRE.MatchString(p.Name) {
		return fmt.Errorf("name %q: use lower case letters, digits, '.', '_' and '-'", p.Name)
	}
	if p.Runtime != RuntimeCodex && (p.Gating != "" || p.Sandbox != "" || p.Mode != "") {
		return errors.New("gating, sandbox and mode are settings of the codex runtime")
	}
	// The runtime's own settings are its adapter's to check
	// (backend/runtime: Adapter.Validate, run by LoadDir's caller).
	if p.Keychain != "" {
		if _, err := keychain.ParseRef(p.Keychain); err != nil {
			return err
		}
	}
	for _, k := range p.StateKeys {
		if !stateKeyRE.MatchString(k) {
			return fmt.Errorf("state_keys: %q: use lower case letters, digits and '_', starting with a letter", k)
		}
	}
	if err := p.Policy.ValidateOverrides(); err != nil {
		return err
	}
	return validateMCP(p.MCP)
}

var (
	mcpNameRE  = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	stateKeyRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// Problem is a profile file that could not be loaded.
type Problem struct {
	File string
	Err  error
}

func (p Problem) Error() string { return fmt.Sprintf("%s: %v", filepath.Base(p.File), p.Err) }

// LoadDir reads every *.toml in dir, in name order. A broken file is
// reported and skipped, so one typo does not disable the others; two files
// with the same name are a problem for the second.
func LoadDir(dir string) ([]Profile, []Problem) {
	files, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil {
		return nil, []Problem{{File: dir, Err: err}}
	}
	sort.Strings(files)
	var out []Profile
	var problems []Problem
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			problems = append(problems, Problem{File: f, Err: err})
			continue
		}
		p, err := Parse(data)
		switch {
		case err != nil:
			problems = append(problems, Problem{File: f, Err: err})
		case seen[p.Name]:
			problems = append(problems, Problem{File: f, Err: fmt.Errorf("a profile named %q already exists", p.Name)})
		default:
			seen[p.Name] = true
			p.File = f
			if p.Playbook != "" && !filepath.IsAbs(p.Playbook) {
				p.Playbook = filepath.Join(dir, p.Playbook)
			}
			out = append(out, p)
		}
	}
	return out, problems
}
