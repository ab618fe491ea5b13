// Package native is AgentHub's own agent loop over an LLM provider
// (runtime = "native"): OpenAI-compatible servers (also Ollama, LM Studio,
// llama.cpp, vLLM) and Anthropic, each action gated by AgentHub.
package native

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"agenthub/backend"
	"agenthub/backend/mcp"
	"agenthub/backend/profile"
	"agenthub/backend/runtime"
)

func init() { runtime.Register(Adapter{}) }

// Adapter is the built-in loop's runtime.
type Adapter struct{}

func (Adapter) Name() string                                       { return profile.RuntimeNative }
func (Adapter) Capabilities(profile.Profile) *backend.Capabilities { return nil }
func (Adapter) Tools() map[string]backend.Tool                     { return nil }
func (Adapter) Binary() *runtime.Binary                            { return nil }

// Build gives the profile its provider's client (with retries and its
// fallback models; a keychain key is read when a run first needs it) and
// its MCP servers, which start when a run first needs their tools (the
// engine's Shutdown closes them). Its tools stay the built-in ones.
func (Adapter) Build(p profile.Profile, env runtime.Env) (runtime.Built, error) {
	b := runtime.Built{Model: model(p, env.Key)}
	if len(p.MCP) > 0 {
		b.Source = mcp.NewSet(mcpConfigs(p.MCP, filepath.Join(env.Home, "mcp", p.Name)), nil)
	}
	return b, nil
}

// Validate checks the provider, the model and the limits.
func (Adapter) Validate(p profile.Profile) error {
	switch {
	case p.Provider != profile.ProviderOpenAI && p.Provider != profile.ProviderAnthropic:
		return fmt.Errorf("provider %q: use openai (also for Ollama, LM Studio, llama.cpp, vLLM) or anthropic", p.Provider)
	case p.Model == "":
		return errors.New("model is required")
	case strings.ContainsAny(p.KeyEnv, "= \t"):
		return fmt.Errorf("key_env %q must be the name of an environment variable, not a key", p.KeyEnv)
	case p.MaxTokens < 0:
		return errors.New("max_tokens must not be negative")
	case p.Keychain != "" && p.KeyEnv != "":
		return errors.New("key_env and keychain both name the key: keep one")
	case p.ContextWindow < 0 || (p.ContextWindow > 0 && p.ContextWindow < 1024):
		return errors.New("context_window is the model's window in tokens: leave it out, or give at least 1024")
	case p.ContextWindow > 0 && p.MaxTokens >= p.ContextWindow:
		return errors.New("max_tokens must be smaller than context_window")
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
