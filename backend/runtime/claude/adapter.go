package claude

import (
	"path/filepath"

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
	return runtime.CheckServerCLI(p, runtime.ServerCLI{Runtime: "claude", Provider: profile.ProviderAnthropic,
		API: "the anthropic API", Tools: "Claude Code's own tools",
		BaseURL: "the Anthropic Messages server the CLI talks to"})
}
