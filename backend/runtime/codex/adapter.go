package codex

import (
	"fmt"
	"path/filepath"

	"agenthub/backend"
	"agenthub/backend/profile"
	"agenthub/backend/runtime"
)

func init() { runtime.Register(Adapter{}) }

// Adapter is the Codex CLI runtime (runtime = "codex").
type Adapter struct{}

func (Adapter) Name() string                     { return profile.RuntimeCodex }
func (Adapter) Provider() string                 { return profile.ProviderOpenAI }
func (Adapter) Validate(p profile.Profile) error { return validate(p) }
func (Adapter) Tools() map[string]backend.Tool   { return Tools() }
func (Adapter) Binary() *runtime.Binary {
	return &runtime.Binary{Program: "codex", Label: "Codex", Install: InstallHint}
}

// Capabilities: enforced through app-server, advisory with gating =
// "advisory" (AD2).
func (Adapter) Capabilities(p profile.Profile) *backend.Capabilities {
	caps := Capabilities(p.Gating)
	return &caps
}

// Build gives the profile the Codex CLI as its model. Each profile gets its
// own isolated HOME, CODEX_HOME (whose config.toml names the profile's
// server) and raw-output folder under runtimes/codex/<name>; patches share
// the checkpoint store of the built-in tools, so undo works on them too.
func (Adapter) Build(p profile.Profile, env runtime.Env) (runtime.Built, error) {
	return runtime.Built{Tools: ToolNames(), Model: NewModel(Config{Command: p.Command.Program(), Model: p.Model,
		BaseURL: p.BaseURL, APIKey: env.Key, Gating: p.Gating, Mode: p.Mode, Sandbox: p.Sandbox,
		Dir:         filepath.Join(env.Home, "runtimes", "codex", p.Name),
		Checkpoints: filepath.Join(env.Home, "checkpoints")})}, nil
}

// validate checks a Codex profile: the CLI talks to the profile's
// OpenAI Responses server (base_url, including /v1) with the profile's
// model. gating = "advisory" must be said explicitly to run `codex exec`,
// which cannot ask before acting; Codex's sandbox can be narrowed but
// never turned off.
func validate(p profile.Profile) error {
	err := runtime.CheckServerCLI(p, runtime.ServerCLI{Runtime: "codex", Provider: profile.ProviderOpenAI,
		API: "the OpenAI Responses API", Tools: "Codex's own tools",
		Model:   "a model Codex knows, e.g. gpt-5.5: with another name Codex offers no apply_patch tool",
		BaseURL: "the OpenAI Responses server Codex talks to, with its version path (Codex POSTs {base_url}/responses)"})
	switch {
	case err != nil:
		return err
	case p.Gating != "" && p.Gating != profile.GatingEnforced && p.Gating != profile.GatingAdvisory:
		return fmt.Errorf("gating %q: use %q (the default) or %q", p.Gating, profile.GatingEnforced, profile.GatingAdvisory)
	case p.Mode != "" && p.Mode != profile.ModeAppServer && p.Mode != profile.ModeExec:
		return fmt.Errorf("mode %q: use %q (the default) or %q", p.Mode, profile.ModeAppServer, profile.ModeExec)
	case p.Mode == profile.ModeAppServer && p.Gating == profile.GatingAdvisory:
		return fmt.Errorf("mode %q always gates; leave gating out, or use mode %q for advisory gating", profile.ModeAppServer, profile.ModeExec)
	case p.Sandbox != "" && p.Sandbox != profile.SandboxReadOnly && p.Sandbox != profile.SandboxWorkspaceWrite:
		return fmt.Errorf("sandbox %q: use %q or %q; AgentHub never runs Codex without its sandbox",
			p.Sandbox, profile.SandboxReadOnly, profile.SandboxWorkspaceWrite)
	}
	return nil
}
