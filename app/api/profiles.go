package api

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"agenthub/backend"
	"agenthub/backend/engine"
	"agenthub/backend/mcp"
	"agenthub/backend/profile"
	"agenthub/backend/redact"
	"agenthub/backend/runtime/acp"
	"agenthub/backend/runtime/claude"
	"agenthub/backend/runtime/codex"
	"agenthub/backend/runtime/script"
	"agenthub/backend/tools"
)

// ProfileInfo is a profile as lists and the new-run form show it.
type ProfileInfo struct {
	Name     string `json:"name"`
	Runtime  string `json:"runtime"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	BaseURL  string `json:"baseUrl,omitempty"`
	Scripted bool   `json:"scripted"` // a playbook, never an AI model
	Default  bool   `json:"default"`
	// Capabilities is what an external runtime declares (AD2); nil for the
	// built-in loop and playbooks.
	Capabilities *backend.Capabilities `json:"capabilities,omitempty"`
	// AcceptAdvisory lists the action kinds whose advisory gating the
	// profile accepts (accept_advisory, or Codex's gating = "advisory"):
	// runs record those actions instead of being refused (AD2).
	AcceptAdvisory []backend.ActionKind `json:"acceptAdvisory,omitempty"`
	// Isolation is the profile's default isolation ("" = the workspace's).
	Isolation string `json:"isolation,omitempty"`
}

// ProfilesDir is where profile files live inside the data directory.
const ProfilesDir = "profiles"

// loadProfiles registers every profile file of the data directory with the
// engine. A broken file is logged and skipped; the demo name is reserved.
func (c *Core) loadProfiles() {
	list, problems := profile.LoadDir(filepath.Join(c.cfg.Home, ProfilesDir))
	for _, p := range problems {
		c.log.Warn("skip a profile file", "problem", p.Error())
	}
	c.profiles = []ProfileInfo{{Name: DemoProfile, Runtime: profile.RuntimeScript, Scripted: true, Default: true}}
	for _, p := range list {
		if p.Name == DemoProfile {
			c.log.Warn("skip a profile file: the name demo is reserved", "file", filepath.Base(p.File))
			continue
		}
		ep, err := engineProfile(p, c.cfg.Home)
		if err != nil {
			c.log.Warn("skip a profile file", "file", filepath.Base(p.File), "err", err)
			continue
		}
		c.engine.AddProfile(p.Name, ep)
		info := ProfileInfo{Name: p.Name, Runtime: p.Runtime, Provider: p.Provider,
			Model: p.Model, BaseURL: p.BaseURL, Scripted: ep.Scripted, Capabilities: ep.Capabilities,
			AcceptAdvisory: ep.AcceptAdvisory, Isolation: p.Isolation}
		switch p.Runtime {
		case profile.RuntimeClaude:
			info.Provider = profile.ProviderAnthropic
		case profile.RuntimeCodex:
			info.Provider = profile.ProviderOpenAI
		}
		c.profiles = append(c.profiles, info)
	}
	sort.SliceStable(c.profiles[1:], func(i, j int) bool { return c.profiles[i+1].Name < c.profiles[j+1].Name })
}

// engineProfile builds the engine's profile: the model client of a native
// profile (with retries and its fallback models), the Claude Code CLI, or a
// playbook. home is the data directory.
func engineProfile(p profile.Profile, home string) (engine.Profile, error) {
	ep := engine.Profile{Runtime: p.Runtime, Tools: p.Tools, Stop: stopConfig(p.Stop), RunTimeout: p.RunTimeout.Duration,
		StateKeys: p.StateKeys, Executor: engine.Executor(p.Executor)}
	if !p.Policy.Empty() {
		over := p.Policy
		ep.Policy = &over // the profile's overrides may only tighten the workspace gate
	}
	if len(ep.Tools) == 0 {
		ep.Tools = builtinTools() // never a runtime's proxy tools
	}
	ep.Capabilities = runtimeCapabilities(p)
	kinds, by := p.AcceptsAdvisory()
	for _, k := range kinds {
		ep.AcceptAdvisory = append(ep.AcceptAdvisory, backend.ActionKind(k))
	}
	ep.AcceptedBy = by
	switch p.Runtime {
	case profile.RuntimeClaude:
		ep.Model = claude.NewModel(claude.Config{Command: p.Command.Program(), Model: p.Model, BaseURL: p.BaseURL,
			APIKey: keyOf(p), Dir: filepath.Join(home, "runtimes", "claude"),
			Checkpoints: filepath.Join(home, "checkpoints")})
		ep.Tools = claude.ToolNames()
		return ep, nil
	case profile.RuntimeACP, profile.RuntimeGemini:
		return acpProfile(p, home, ep), nil
	case profile.RuntimeCodex:
		return codexProfile(p, home, ep), nil
	case profile.RuntimeScript:
		text, err := os.ReadFile(p.Playbook)
		if err != nil {
			return ep, fmt.Errorf("read the playbook: %w", err)
		}
		pb, err := script.Parse(text)
		if err != nil {
			return ep, err
		}
		ep.Model, ep.Scripted = script.NewModel(pb), true
		return ep, nil
	}
	ep.Model = nativeModel(p) // native.go: key from key_env or the OS keychain
	if len(p.MCP) > 0 {
		// Servers start when a run first needs their tools; the engine's
		// Shutdown closes them.
		ep.Source = mcp.NewSet(mcpConfigs(p.MCP, filepath.Join(home, "mcp", p.Name)), nil)
	}
	return ep, nil
}

// runtimeCapabilities is what an external runtime declares (AD2); nil for
// the built-in loop and playbooks.
func runtimeCapabilities(p profile.Profile) *backend.Capabilities {
	if p.Runtime == profile.RuntimeClaude {
		caps := claude.Capabilities()
		return &caps
	}
	if caps, ok := acpCapabilities(p); ok {
		return &caps
	}
	if caps, ok := codexCapabilities(p); ok {
		return &caps
	}
	return nil
}

// mcpConfigs are a profile's MCP servers; state is the directory under
// which each stdio server gets its own state dir (its HOME, where its
// confinement lets it write).
func mcpConfigs(servers []profile.MCPServer, state string) []mcp.Config {
	out := make([]mcp.Config, len(servers))
	for i, s := range servers {
		out[i] = mcp.Config{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL,
			AllowReadOnly: s.AllowReadOnly, CallTimeout: s.CallTimeout.Duration, Network: s.Network}
		if s.Command != "" {
			out[i].StateDir = filepath.Join(state, s.Name)
		}
		for _, h := range s.Headers {
			out[i].Headers = append(out[i].Headers, mcp.Header{Name: h.Name, Env: h.Env, Keychain: h.Keychain, Prefix: h.Prefix})
		}
	}
	return out
}

// keyOf resolves a profile's key from the variable it names; the key is
// never stored.
func keyOf(p profile.Profile) string {
	if p.KeyEnv == "" {
		return ""
	}
	key := os.Getenv(p.KeyEnv)
	// Masked wherever it shows up, also when it has no known format (a
	// local gateway's token) and the variable's name does not say secret.
	redact.Register(key)
	return key
}

// withRuntimeTools adds the proxy tools of external runtimes (Claude Code's
// permission requests) to the built-in tools, for the engine's tool table.
// Only the profiles of those runtimes offer them.
func withRuntimeTools(builtin map[string]backend.Tool) map[string]backend.Tool {
	for name, t := range claude.Tools() {
		builtin[name] = t
	}
	for name, t := range acp.Tools() {
		builtin[name] = t
	}
	for name, t := range codex.Tools() {
		builtin[name] = t
	}
	return builtin
}

// builtinTools names the built-in tools, the default of a native profile.
func builtinTools() []string {
	var names []string
	for name := range tools.New(tools.Config{}) {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func stopConfig(s profile.Stop) engine.StopConfig {
	if s == (profile.Stop{}) {
		return engine.DefaultStop
	}
	return engine.StopConfig{MaxRounds: s.MaxRounds, Timeout: s.Timeout.Duration, TokenBudget: s.TokenBudget,
		ConsecutiveErrors: s.ConsecutiveErrors, StopOnTool: s.StopOnTool, ContentMatch: s.ContentMatch,
		LoopWindow: s.LoopWindow}
}

// Profiles lists the profiles a run may use; the first is the default.
func (r *RunsAPI) Profiles() ([]ProfileInfo, error) {
	if _, err := r.core.db(); err != nil {
		return nil, err
	}
	return r.core.profiles, nil
}
