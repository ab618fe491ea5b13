package codex

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"agenthub/backend"
	"agenthub/backend/runtime/keyproxy"
)

// TestedVersion is the Codex CLI release this adapter was tested with; a
// run on another version records a drift warning and goes on.
const TestedVersion = "0.169.0"

// InstallHint is the install step shown when the CLI is missing.
const InstallHint = "npm install -g @openai/codex@" + TestedVersion

// Gating modes a profile may choose.
const (
	// GatingEnforced drives `codex app-server`: every command and file
	// change waits for AgentHub's approval. The default.
	GatingEnforced = "enforced"
	// GatingAdvisory drives `codex exec --json`, which cannot ask: Codex
	// acts inside its sandbox on its own and AgentHub only records what it
	// did. Only a profile that says so gets it.
	GatingAdvisory = "advisory"
)

// Modes: which command of the CLI drives a run.
const (
	ModeAppServer = "app-server" // gated; the default with enforced gating
	ModeExec      = "exec"       // `codex exec --json`, advisory only; the default with advisory gating
)

// Sandbox modes a profile may choose. danger-full-access is never used.
const (
	SandboxReadOnly       = "read-only"
	SandboxWorkspaceWrite = "workspace-write"
)

// Config configures the Codex runtime of one profile.
type Config struct {
	// Command is the CLI: a name looked up on the login shell's PATH
	// ("codex" when empty) or an absolute path. The npm package's script is
	// resolved to the native binary it would start.
	Command string
	Model   string // a model slug Codex knows (e.g. gpt-5.5), else apply_patch is not offered
	// BaseURL is the OpenAI Responses server, including its version path:
	// Codex POSTs {BaseURL}/responses (e.g. http://127.0.0.1:8080/v1).
	BaseURL string
	APIKey  string // never logged or stored; a placeholder is sent when empty
	// Gating is GatingEnforced (empty) or GatingAdvisory.
	Gating string
	// Mode is ModeAppServer or ModeExec; empty follows Gating. ModeExec
	// without GatingAdvisory is refused when a run starts, with the reason.
	Mode string
	// Sandbox is Codex's sandbox: workspace-write by default when gated
	// (approved commands can write in the workspace only, without network),
	// read-only by default when advisory.
	Sandbox string
	// Dir is AgentHub's directory for this profile's runtime, in its data
	// directory: the CLI's isolated HOME and CODEX_HOME, the sandbox helper
	// link and the raw output of every session live there.
	Dir string
	// Checkpoints is AgentHub's checkpoint store: the pre-images of every
	// file of an approved patch are kept there before Codex writes, so the
	// change can be undone. Empty means no checkpoint, and then no patch is
	// accepted.
	Checkpoints string
	// Getenv reads AgentHub's environment for the variables passed through;
	// nil means os.Getenv.
	Getenv func(string) string
}

func (c Config) home() string      { return filepath.Join(c.Dir, "home") }
func (c Config) codexHome() string { return filepath.Join(c.home(), ".codex") }
func (c Config) binDir() string    { return filepath.Join(c.Dir, "bin") }
func (c Config) rawDir() string    { return filepath.Join(c.Dir, "raw") }

func (c Config) getenv(name string) string {
	if c.Getenv != nil {
		return c.Getenv(name)
	}
	return os.Getenv(name)
}

func (c Config) advisory() bool { return c.Gating == GatingAdvisory }

// sandbox is the sandbox mode the CLI runs with.
func (c Config) sandbox() string {
	switch {
	case c.Sandbox != "":
		return c.Sandbox
	case c.advisory():
		return SandboxReadOnly
	}
	return SandboxWorkspaceWrite
}

// Validate checks what a profile may set.
func (c Config) Validate() error {
	switch {
	case c.Model == "":
		return errNoModel
	case c.Gating != "" && c.Gating != GatingEnforced && c.Gating != GatingAdvisory:
		return fmt.Errorf("gating %q: use %q (the default) or %q", c.Gating, GatingEnforced, GatingAdvisory)
	case c.Mode != "" && c.Mode != ModeAppServer && c.Mode != ModeExec:
		return fmt.Errorf("mode %q: use %q (the default) or %q", c.Mode, ModeAppServer, ModeExec)
	case c.Mode == ModeAppServer && c.advisory():
		return fmt.Errorf("mode %q always gates every command and patch; leave gating out, or use mode %q "+
			"for advisory gating", ModeAppServer, ModeExec)
	case c.Sandbox != "" && c.Sandbox != SandboxReadOnly && c.Sandbox != SandboxWorkspaceWrite:
		return fmt.Errorf("sandbox %q: use %q or %q; AgentHub never runs Codex without its sandbox",
			c.Sandbox, SandboxReadOnly, SandboxWorkspaceWrite)
	}
	return nil
}

// errExecUngated refuses `codex exec --json` for a profile that did not
// accept advisory gating.
var errExecUngated = &backend.Error{Code: backend.FailPermissionDenied, Detail: "advisory_gating",
	Message: "the profile asks for `codex exec --json`, which cannot ask AgentHub before Codex runs a command " +
		"or changes a file: it offers no gating. AgentHub refuses it unless the profile accepts advisory gating.",
	Next: execStep}

const execStep = `Add gating = "advisory" to the profile to accept that AgentHub only records what Codex did, or ` +
	`remove mode = "exec" to use the gated app-server.`

// errNoModel guards a profile built without a model.
var errNoModel = errors.New("the Codex profile names no model")

// keyEnv is the variable the profile's key reaches Codex through; the
// config file names it (env_key) and Codex sends it as a bearer token.
const keyEnv = "AGENTHUB_CODEX_API_KEY"

// noKey is sent when the profile names no key, so that Codex talks to the
// profile's server instead of asking for a login.
const noKey = "agenthub-no-key"

// passEnv are the only variables of AgentHub's own environment the CLI
// sees: locale, temporary directory, proxies and certificates. Keys in the
// environment (OPENAI_API_KEY included) never pass.
var passEnv = []string{
	"LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy", "SSL_CERT_FILE",
	"SSL_CERT_DIR", "CODEX_CA_CERTIFICATE",
}

// endpoint is where Codex sends its model requests and the key it sends:
// the profile's server with a placeholder when there is no key, else
// AgentHub's key proxy with its per-session token (keyproxy), so the real
// key is never in Codex's environment.
type endpoint struct{ url, key string }

// direct is the endpoint without a proxy: the profile's server and no key.
func (c Config) direct() endpoint {
	return endpoint{url: strings.TrimRight(c.BaseURL, "/"), key: noKey}
}

// environ is the whole environment of the CLI: an allow-list, never
// AgentHub's environment as a whole. AgentHub's bin directory comes first
// on PATH for the sandbox helper (agent-clis.md B2).
func (c Config) environ(path string, ep endpoint) []string {
	env := []string{"HOME=" + c.home(), "CODEX_HOME=" + c.codexHome(), "PATH=" + c.binDir() + ":" + path,
		keyEnv + "=" + ep.key, "NO_COLOR=1", "TERM=dumb"}
	for _, name := range passEnv {
		if v := c.getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return keyproxy.LoopbackDirect(env)
}

// endpointArgs point the model provider at the session's endpoint: the
// config file is shared by the profile's sessions, the key proxy is each
// session's own.
func endpointArgs(ep endpoint) []string {
	return []string{"-c", "model_providers.agenthub.base_url=" + strconv.Quote(ep.url)}
}

// offlineFeatures are Codex features that reach services other than the
// model server on their own: with a loopback model server, 0.169.0 still
// looked up api.github.com and chatgpt.com and ran git-remote-https (its
// curated plugin sync, ChatGPT apps and connectors), outside AgentHub's
// network gate (issue 14 item 10). AgentHub turns them off; the offline
// test (app/cli/offline_test.go) runs Codex in a network namespace and
// fails on any other connection.
var offlineFeatures = []string{"plugins", "remote_plugin", "plugin_sharing", "apps", "in_app_updates",
	"tool_suggest", "skill_mcp_dependency_install", "image_generation", "realtime_conversation", "browser_use",
	"browser_use_external", "computer_use"}

// configTOML is CODEX_HOME/config.toml: the profile's server as the only
// model provider, no update check, no hosted web search (an action nothing
// could gate), no analytics, no history file, no feature that reaches
// another service (offlineFeatures), and commands get a core environment
// without keys. Approval policy and sandbox are set per thread
// (app-server) or per command line (exec), never here.
func (c Config) configTOML() string {
	q := strconv.Quote
	lines := []string{
		"# Written by AgentHub for every session; edits are overwritten.",
		"model = " + q(c.Model),
		`model_provider = "agenthub"`,
		"check_for_update_on_startup = false",
		`web_search = "disabled"`,
		"",
		"[model_providers.agenthub]",
		`name = "AgentHub profile"`,
		"base_url = " + q(strings.TrimRight(c.BaseURL, "/")),
		`wire_api = "responses"`,
		"env_key = " + q(keyEnv),
		"",
		"[analytics]",
		"enabled = false",
		"",
		"[history]",
		`persistence = "none"`,
		"",
		"[shell_environment_policy]",
		`inherit = "core"`,
		`exclude = ["*KEY*", "*TOKEN*", "*SECRET*", "*PASSWORD*"]`,
		"",
		"[features]",
		// Codex's default sandbox is bubblewrap, whose mounts Landlock
		// forbids: the CLI runs confined by AgentHub (agentproc), so its
		// commands are sandboxed with Landlock too, stacked inside ours.
		"use_legacy_landlock = true",
	}
	for _, f := range offlineFeatures {
		lines = append(lines, f+" = false")
	}
	return strings.Join(lines, "\n") + "\n"
}

// prepareHome writes the config file (atomically: sessions of one profile
// may start together) and links the sandbox helper into the bin directory.
func (c Config) prepareHome(bin string) error {
	if err := os.MkdirAll(c.codexHome(), 0o700); err != nil {
		return fmt.Errorf("prepare the Codex home: %w", err)
	}
	tmp, err := os.CreateTemp(c.codexHome(), ".config-*.toml")
	if err != nil {
		return fmt.Errorf("write the Codex config: %w", err)
	}
	_, werr := tmp.WriteString(c.configTOML())
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write the Codex config: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(c.codexHome(), "config.toml")); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write the Codex config: %w", err)
	}
	return c.linkSandbox(bin)
}

// linkSandbox puts codex-linux-sandbox, a link to the CLI, on the CLI's
// PATH. Codex creates it under CODEX_HOME itself, but refuses to when
// CODEX_HOME is under the temporary directory; without it, 0.169.0 was seen
// running approved commands with no sandbox at all.
func (c Config) linkSandbox(bin string) error {
	if err := os.MkdirAll(c.binDir(), 0o700); err != nil {
		return fmt.Errorf("prepare the Codex bin directory: %w", err)
	}
	link := filepath.Join(c.binDir(), "codex-linux-sandbox")
	if cur, err := os.Readlink(link); err == nil && cur == bin {
		return nil
	}
	tmp := fmt.Sprintf("%s.%d", link, os.Getpid())
	_ = os.Remove(tmp)
	if err := os.Symlink(bin, tmp); err != nil {
		return fmt.Errorf("link the Codex sandbox helper: %w", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("link the Codex sandbox helper: %w", err)
	}
	return nil
}

// threadParams are thread/start's parameters: approval policy
// "untrusted" (every command and every patch asks; "on-request" would let
// Codex run what it deems safe), AgentHub as the reviewer (no model-based
// auto-review), the profile's sandbox, no rollout kept on disk.
func (c Config) threadParams(root string) map[string]any {
	return map[string]any{"cwd": root, "sandbox": c.sandbox(), "approvalPolicy": "untrusted",
		"approvalsReviewer": "user", "model": c.Model, "ephemeral": true}
}

// appServerArgs is the command line of a gated session.
func (c Config) appServerArgs() []string { return []string{"app-server"} }

// execArgs is the command line of an advisory session: JSON lines, the
// profile's sandbox (never danger-full-access, never the bypass flag), no
// git check (AgentHub checks the workspace), the task last.
func (c Config) execArgs(task string) []string {
	return []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", c.sandbox(), "-m", c.Model, "--", task}
}
