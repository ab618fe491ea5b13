package runtime

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"agenthub/backend/profile"
)

// ServerCLI describes an agent CLI that talks to one model server of one
// provider with the profile's model, using its own tools (Claude Code,
// Codex): what CheckServerCLI needs to word its refusals.
type ServerCLI struct {
	Runtime  string // "claude"
	Provider string // the one provider it speaks
	API      string // "the anthropic API", for the provider refusal
	Tools    string // "Claude Code's own tools"
	Model    string // why the model is required, "" for the plain message
	BaseURL  string // what base_url is, in its refusal
}

// CheckServerCLI checks what every such profile shares: its provider, a
// model, the server's base_url (an http or https URL), key_env naming a
// variable, none of the native loop's settings, and one program as its
// command.
func CheckServerCLI(p profile.Profile, c ServerCLI) error {
	model := "model is required"
	if c.Model != "" {
		model += " (" + c.Model + ")"
	}
	switch {
	case p.Provider != "" && p.Provider != c.Provider:
		return fmt.Errorf("provider %q: a %s profile speaks %s; leave provider out", p.Provider, c.Runtime, c.API)
	case p.Model == "":
		return errors.New(model)
	case p.BaseURL == "":
		return errors.New("base_url is required: " + c.BaseURL)
	case strings.ContainsAny(p.KeyEnv, "= \t"):
		return fmt.Errorf("key_env %q must be the name of an environment variable, not a key", p.KeyEnv)
	case len(p.Fallback) > 0 || p.System != "" || p.MaxTokens != 0 || p.ContextWindow != 0:
		return fmt.Errorf("fallback_models, system, max_tokens and context_window are not supported by the %s runtime", c.Runtime)
	case len(p.Tools) > 0 || len(p.MCP) > 0:
		return fmt.Errorf("tools, mcp_servers: the %s runtime uses %s, each gated by AgentHub", c.Runtime, c.Tools)
	case len(p.Command) > 1 || p.Command.Program() != "" && !filepath.IsAbs(p.Command.Program()) &&
		strings.ContainsAny(p.Command.Program(), " \t"):
		return fmt.Errorf("command %q: name one program, without arguments", strings.Join(p.Command, " "))
	}
	return CheckURL("base_url", p.BaseURL)
}

// CheckURL refuses a URL that is not http or https with a host.
func CheckURL(setting, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q: use an http or https URL", setting, raw)
	}
	return nil
}
