package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"agenthub/backend/proc"
	"agenthub/backend/runtime/agentbin"
	"agenthub/backend/runtime/keyproxy"
)

// TestedVersion is the Claude Code release this adapter was tested with; a
// run on another version records a drift warning and goes on.
const TestedVersion = "2.1.330"

// InstallHint is the install step shown when the CLI is missing.
const InstallHint = "npm install -g @anthropic-ai/claude-code@" + TestedVersion

// Config configures the Claude Code runtime of one profile.
type Config struct {
	// Command is the CLI: a name looked up on the login shell's PATH
	// ("claude" when empty) or an absolute path.
	Command string
	Model   string
	BaseURL string // the Anthropic Messages server, e.g. http://127.0.0.1:8080
	APIKey  string // never logged or stored; a placeholder is sent when empty
	// Dir is AgentHub's directory for this runtime, in its data directory:
	// the CLI's isolated HOME and the raw output of every session live there.
	Dir string
	// Checkpoints is AgentHub's checkpoint store: the pre-images of every
	// file the CLI is allowed to write are kept there first, so the write
	// can be undone. Empty means no checkpoint, and then no write is allowed.
	Checkpoints string
	// Getenv reads AgentHub's environment for the variables passed through;
	// nil means os.Getenv.
	Getenv func(string) string
}

func (c Config) home() string   { return filepath.Join(c.Dir, "home") }
func (c Config) rawDir() string { return filepath.Join(c.Dir, "raw") }

func (c Config) getenv(name string) string {
	if c.Getenv != nil {
		return c.Getenv(name)
	}
	return os.Getenv(name)
}

// quietEnv turns off everything but the model requests (agent-clis.md B6).
var quietEnv = []string{
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
	"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1", "DISABLE_COST_WARNINGS=1",
	"DISABLE_NON_ESSENTIAL_MODEL_CALLS=1", "CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1", "TERM=dumb",
}

// passEnv are the only variables of AgentHub's own environment the CLI
// sees: locale, temporary directory, proxies and the CLI's own timeouts.
// Keys in the environment (ANTHROPIC_API_KEY included) never pass.
var passEnv = []string{
	"LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy", "NODE_EXTRA_CA_CERTS",
	"CLAUDE_CODE_MAX_RETRIES", "API_TIMEOUT_MS",
}

// noKey is sent when the profile names no key, so that the CLI talks to the
// profile's server instead of asking for a login.
const noKey = "agenthub-no-key"

// defaultBaseURL is where Claude Code sends requests when the profile names
// no server; the key proxy forwards there.
const defaultBaseURL = "https://api.anthropic.com"

// endpoint is where the CLI sends its model requests and the key it sends:
// the profile's server with a placeholder when there is no key, else
// AgentHub's key proxy with its per-session token (keyproxy), so the real
// key is never in the CLI's environment, which every command it runs
// inherits.
type endpoint struct{ url, key string }

// direct is the endpoint without a proxy: the profile's server and no key.
func (c Config) direct() endpoint {
	return endpoint{url: strings.TrimRight(c.BaseURL, "/"), key: noKey}
}

// upstream is the server the key proxy forwards to.
func (c Config) upstream() string {
	if c.BaseURL == "" {
		return defaultBaseURL
	}
	return c.BaseURL
}

// environ is the whole environment of the CLI: an allow-list, never
// AgentHub's environment as a whole.
func (c Config) environ(path string, ep endpoint) []string {
	env := []string{"HOME=" + c.home(), "CLAUDE_CONFIG_DIR=" + filepath.Join(c.home(), ".claude"), "PATH=" + path,
		"ANTHROPIC_BASE_URL=" + ep.url, "ANTHROPIC_API_KEY=" + ep.key}
	env = append(env, quietEnv...)
	for _, name := range passEnv {
		if v := c.getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return keyproxy.LoopbackDirect(env)
}

// askTools are the built-in tools every use of which goes to AgentHub's gate,
// whatever Claude Code would otherwise allow on its own (a read inside the
// working directory, a command it deems read-only).
var askTools = []string{"Bash", "Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep",
	"WebFetch", "WebSearch"}

// args is the command line. Permission prompts go to AgentHub over stdio;
// no settings file of the user or of the workspace is read (a workspace's
// .claude/settings.json could otherwise allow tools or switch the mode), no
// MCP server of theirs is started, and bypass modes are disabled. Never
// --dangerously-skip-permissions, never bypassPermissions (AP2).
func (c Config) args() []string {
	settings, _ := json.Marshal(map[string]any{"permissions": map[string]any{"ask": askTools,
		"disableBypassPermissionsMode": "disable"}})
	return []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--permission-prompt-tool", "stdio", "--setting-sources", "",
		"--settings", string(settings), "--strict-mcp-config", "--no-session-persistence", "--model", c.Model}
}

// cli names Claude Code in messages.
var cli = agentbin.CLI{Label: "Claude Code", Name: "claude", Hint: InstallHint}

// resolve finds the CLI, asks its version and hashes it. A missing or
// broken CLI is runtime_unavailable with the install step.
func (c Config) resolve(ctx context.Context) (agentbin.Info, error) {
	path := proc.LoginPath(ctx)
	bin, err := cli.Find(c.Command, path)
	if err != nil {
		return agentbin.Info{}, err
	}
	if err := os.MkdirAll(filepath.Join(c.home(), ".claude"), 0o700); err != nil {
		return agentbin.Info{}, fmt.Errorf("prepare the Claude Code home: %w", err)
	}
	version, err := cli.Version(ctx, bin, c.home(), c.environ(path, c.direct()))
	if err != nil {
		return agentbin.Info{}, err
	}
	sum, err := agentbin.Hash(bin)
	if err != nil {
		return agentbin.Info{}, fmt.Errorf("hash the Claude Code binary: %w", err)
	}
	return agentbin.Info{Path: bin, Version: version, SHA256: sum, Tested: TestedVersion}, nil
}

// errNoModel guards a profile built without a model.
var errNoModel = errors.New("the Claude Code profile names no model")
