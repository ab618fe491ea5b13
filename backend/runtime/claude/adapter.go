package claude

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"agenthub/backend"
	"agenthub/backend/profile"
	"agenthub/backend/runtime"
)

func init() { runtime.Register(Adapter{}) }

// Adapter is the Claude Code runtime (runtime = "claude").
type Adapter struct{}

func (Adapter) Name() string                     { return profile.RuntimeClaude }
func (Adapter) Provider() string                 { return profile.ProviderAnthropic }
func (Adapter) Validate(p profile.Profile) error { return validate(p) }
func (Adapter) Tools() map[string]backend.Tool   { return Tools() }
func (Adapter) Binary() *runtime.Binary {
	return &runtime.Binary{Program: "claude", Label: "Claude Code", Install: InstallHint}
}

func (Adapter) Capabilities(profile.Profile) *backend.Capabilities {
	caps := Capabilities()
	return &caps
}

// Build gives the profile the Claude Code CLI as its model: its isolated
// HOME under runtimes/claude, patches in the shared checkpoint store (so
// undo works on them), and the CLI's tools proxied through AgentHub's gate.
func (Adapter) Build(p profile.Profile, env runtime.Env) (runtime.Built, error) {
	return runtime.Built{Tools: ToolNames(), Model: NewModel(Config{Command: p.Command.Program(), Model: p.Model,
		BaseURL: p.BaseURL, APIKey: env.Key, Dir: filepath.Join(env.Home, "runtimes", "claude"),
		Checkpoints: filepath.Join(env.Home, "checkpoints")})}, nil
}

// validate checks a Claude Code profile: the CLI talks to the
// profile's Anthropic Messages server with the profile's model.
func validate(p profile.Profile) error {
	switch {
	case p.Provider != "" && p.Provider != profile.ProviderAnthropic:
		return fmt.Errorf("provider %q: a claude profile speaks the anthropic API; leave provider out", p.Provider)
	case p.Model == "":
		return errors.New("model is required")
	case p.BaseURL == "":
		return errors.New("base_url is required: the Anthropic Messages server the CLI talks to")
	case strings.ContainsAny(p.KeyEnv, "= \t"):
		return fmt.Errorf("key_env %q must be the name of an environment variable, not a key", p.KeyEnv)
	case len(p.Fallback) > 0 || p.System != "" || p.MaxTokens != 0 || p.ContextWindow != 0:
		return errors.New("fallback_models, system, max_tokens and context_window are not supported by the claude runtime")
	case len(p.Tools) > 0 || len(p.MCP) > 0:
		return errors.New("tools, mcp_servers: the claude runtime uses Claude Code's own tools, each gated by AgentHub")
	case len(p.Command) > 1 || p.Command.Program() != "" && !filepath.IsAbs(p.Command.Program()) &&
		strings.ContainsAny(p.Command.Program(), " \t"):
		return fmt.Errorf("command %q: name one program, without arguments", strings.Join(p.Command, " "))
	}
	u, err := url.Parse(p.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base_url %q: use an http or https URL", p.BaseURL)
	}
	return nil
}
