package acp

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"agenthub/backend/runtime/keyproxy"
	"agenthub/workspace"
)

// Gemini CLI facts (agent-clis.md §3): the release this adapter was tested
// with, the name it reports in initialize, and its install step.
const (
	GeminiTestedVersion = "0.61.0"
	GeminiAgentName     = "gemini-cli"
	GeminiInstallHint   = "npm install -g @google/gemini-cli@" + GeminiTestedVersion
)

// Config configures the ACP runtime of one profile.
type Config struct {
	// Name labels the runtime in events and messages: "gemini", or "acp"
	// for any other ACP agent.
	Name string
	// Command is the agent's command line: the program (a name looked up
	// on the login shell's PATH, or an absolute path) and its arguments.
	// For Gemini an empty command means `gemini --acp`.
	Command []string
	// Gemini turns on what Gemini CLI needs to run isolated and offline:
	// its settings file, its environment, its model flag.
	Gemini  bool
	Model   string // Gemini: --model; empty keeps the CLI's default
	BaseURL string // Gemini: the Gemini API server (GOOGLE_GEMINI_BASE_URL)
	// KeyEnv names the variable that holds the key; APIKey is its value,
	// never logged or stored. Gemini gets it as GEMINI_API_KEY, any other
	// agent under the name KeyEnv.
	KeyEnv string
	APIKey string
	// ModelProtocol is how a generic ACP agent talks to its model:
	// ProtocolOpenAI or ProtocolAnthropic, declared by the profile
	// (model_protocol). With it, the agent gets the key proxy's address and
	// a per-session token instead of the key (keyenv.go); without it a
	// generic agent is never given a key. BaseURL is then its model
	// server (the protocol's public API when empty).
	ModelProtocol string
	// Dir is AgentHub's directory for this profile's runtime, in its data
	// directory: the agent's isolated HOME and the raw output of every
	// session live there.
	Dir string
	// CheckpointDir holds the pre-image of every write AgentHub applies for
	// the agent: the checkpoint store the built-in tools and undo use.
	CheckpointDir string
	// Getenv reads AgentHub's environment for the variables passed through;
	// nil means os.Getenv.
	Getenv func(string) string
}

func (c Config) home() string   { return filepath.Join(c.Dir, "home") }
func (c Config) rawDir() string { return filepath.Join(c.Dir, "raw") }

func (c Config) label() string {
	if c.Gemini {
		return "Gemini CLI"
	}
	return "the ACP agent"
}

func (c Config) name() string {
	if c.Name != "" {
		return c.Name
	}
	if c.Gemini {
		return "gemini"
	}
	return "acp"
}

func (c Config) getenv(name string) string {
	if c.Getenv != nil {
		return c.Getenv(name)
	}
	return os.Getenv(name)
}

// command is the command line with the Gemini sugar applied.
func (c Config) command() []string {
	cmd := c.Command
	if len(cmd) == 0 && c.Gemini {
		cmd = []string{"gemini"}
	}
	if c.Gemini && !slices.Contains(cmd, "--acp") && !slices.Contains(cmd, "--experimental-acp") {
		cmd = append(slices.Clone(cmd), "--acp")
	}
	return cmd
}

// args are the arguments after the program. Gemini runs in its default
// approval mode, where every edit, command and fetch asks the client;
// never --yolo or auto_edit (AP2).
func (c Config) args() []string {
	cmd := c.command()
	args := slices.Clone(cmd[1:])
	if c.Gemini {
		args = append(args, "--approval-mode", "default")
		if c.Model != "" {
			args = append(args, "--model", c.Model)
		}
	}
	return args
}

// servesReads reports whether AgentHub offers fs/read_text_file. Not to
// Gemini CLI 0.61.0: when the client serves reads it cannot tell a missing
// file from a failure (its AcpFileSystemService checks `err instanceof
// Error`, but the ACP connection rejects with a plain {code, message}
// object), so write_file of a new file fails with "Error checking existing
// file". Its reads stay local, which they are for its read_file, glob and
// grep tools anyway: read gating is advisory for Gemini.
func (c Config) servesReads() bool { return !c.Gemini }

// passEnv are the only variables of AgentHub's own environment the agent
// sees: locale, temporary directory and proxies. Keys never pass, except
// the one the profile names.
var passEnv = []string{
	"LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy", "NODE_EXTRA_CA_CERTS",
}

// noKey is sent to Gemini when the profile names no key, so that the CLI
// talks to the profile's server instead of asking for a login.
const noKey = "agenthub-no-key"

// endpoint is where Gemini CLI sends its model requests and the key it
// sends: the profile's server (Google's when empty) with the key, or, when
// the profile has a key, AgentHub's key proxy with its per-session token
// (keyproxy), so the real key is never in the CLI's environment, which its
// run_shell_command passes to every command.
type endpoint struct{ url, key string }

// geminiDefaultURL is the Gemini API the key proxy forwards to when the
// profile names no server.
const geminiDefaultURL = "https://generativelanguage.googleapis.com"

// direct is the endpoint without a proxy: the profile's server, and the
// placeholder key when it names one.
func (c Config) direct() endpoint {
	ep := endpoint{url: strings.TrimRight(c.BaseURL, "/")}
	if ep.url != "" {
		ep.key = noKey
	}
	return ep
}

// upstream is the server the key proxy forwards to.
func (c Config) upstream() string {
	if c.BaseURL == "" {
		return geminiDefaultURL
	}
	return c.BaseURL
}

// environ is the whole environment of the agent: an allow-list, never
// AgentHub's environment as a whole, and never the profile's key. Gemini
// gets ep as its Gemini API server and key; a generic agent whose profile
// declares its model protocol gets ep in that protocol's variables
// (keyenv.go); any other agent gets no key at all (the session refuses to
// start one whose profile has a key, see keyRefused).
func (c Config) environ(path string, ep endpoint) []string {
	env := []string{"HOME=" + c.home(), "PATH=" + path, "TERM=dumb", "NO_COLOR=1"}
	if c.Gemini {
		env = append(env, "GEMINI_CLI_NO_RELAUNCH=true",
			// The workspace is untrusted: its .gemini/settings.json, .env,
			// hooks and agents cannot loosen what AgentHub asks for.
			"GEMINI_CLI_TRUST_WORKSPACE=false",
			// Only AgentHub's settings apply, not a system-wide file.
			"GEMINI_CLI_SYSTEM_SETTINGS_PATH="+filepath.Join(c.home(), "system-settings.json"),
			"GEMINI_CLI_SYSTEM_DEFAULTS_PATH="+filepath.Join(c.home(), "system-defaults.json"))
		if ep.key != "" {
			env = append(env, "GEMINI_API_KEY="+ep.key)
		}
		if ep.url != "" {
			env = append(env, "GOOGLE_GEMINI_BASE_URL="+ep.url)
		}
	} else {
		env = append(env, c.protocolEnv(ep)...)
	}
	for _, name := range passEnv {
		if v := c.getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return keyproxy.LoopbackDirect(env)
}

// envNames are the names of the variables the agent (and so its commands)
// gets; values are machine paths or keys and are not shown.
func (c Config) envNames() []string {
	var names []string
	for _, kv := range c.environ("", endpoint{url: "x", key: "x"}) {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	return names
}

// geminiSettings is Gemini CLI's user settings file in the isolated HOME:
// API-key auth (agent-clis.md B4), no telemetry, no update checks, no .env
// files from the workspace, prompts for approval.
var geminiSettings = map[string]any{
	"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
	"privacy":   map[string]any{"usageStatisticsEnabled": false},
	"telemetry": map[string]any{"enabled": false},
	"general": map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true,
		"defaultApprovalMode": "default"},
	"advanced": map[string]any{"ignoreLocalEnv": true},
}

// prepareHome creates the isolated HOME and, for Gemini, its settings.
func (c Config) prepareHome() error {
	dir := c.home()
	if c.Gemini {
		dir = filepath.Join(dir, ".gemini")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("prepare the agent's home: %w", err)
	}
	if !c.Gemini {
		return nil
	}
	ignore, err := writeGeminiIgnore(dir) // geminiignore.go: secret files are refused
	if err != nil {
		return err
	}
	settings := maps.Clone(geminiSettings)
	settings["context"] = map[string]any{"fileFiltering": map[string]any{
		"respectGitIgnore": true, "respectGeminiIgnore": true, "customIgnoreFilePaths": []string{ignore}}}
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	if err := workspace.WriteFileAtomic(filepath.Join(dir, "settings.json"), b); err != nil {
		return fmt.Errorf("write Gemini CLI's settings: %w", err)
	}
	return writeGeminiPolicy(dir) // geminipolicy.go: every command and fetch asks
}

// installHint is the install step shown when the agent is missing.
func (c Config) installHint() string {
	if c.Gemini {
		return GeminiInstallHint
	}
	return "install the agent, or fix the profile's command"
}

// testedVersion is the version of an agent AgentHub was tested with, by
// the name the agent reports; "" for an agent it was never tested with.
func testedVersion(agent string) string {
	if agent == GeminiAgentName {
		return GeminiTestedVersion
	}
	return ""
}
