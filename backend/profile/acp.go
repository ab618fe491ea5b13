package profile

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Command is a profile's command: in TOML either a string (one program,
// or for acp and gemini a command line split at spaces) or an array of the
// program and its arguments, for arguments with spaces.
type Command []string

// UnmarshalText reads the string form. A TOML array decodes as the slice
// itself.
func (c *Command) UnmarshalText(b []byte) error {
	*c = Command{string(b)}
	return nil
}

// Program is the program, "" when none is named.
func (c Command) Program() string {
	if len(c) == 0 {
		return ""
	}
	return c[0]
}

// Line is the command line of an acp or gemini profile: the array as it
// is, or the string split at spaces.
func (c Command) Line() []string {
	if len(c) == 1 {
		return strings.Fields(c[0])
	}
	return c
}

// validateACP checks an ACP profile. runtime = "acp" starts any agent that
// speaks ACP on stdio with its command line; runtime = "gemini" is Gemini
// CLI (command defaults to `gemini --acp`) against the profile's Gemini
// API server with the profile's model.
func (p Profile) validateACP() error {
	line := p.Command.Line()
	switch {
	case p.Runtime == RuntimeACP && (len(line) == 0 || line[0] == ""):
		return errors.New(`command is required: the agent's command line, e.g. command = ["my-agent", "--acp"]`)
	case p.Runtime == RuntimeACP && p.Model != "":
		return errors.New("model is not used by the acp runtime: configure the agent in its command line")
	case p.Runtime == RuntimeACP && p.BaseURL != "" && p.ModelProtocol == "":
		return errors.New(`base_url is used by the acp runtime only with model_protocol ("openai" or "anthropic"): ` +
			"the agent's model server, reached through AgentHub's key proxy")
	case p.ModelProtocol != "" && (p.Runtime != RuntimeACP || (p.ModelProtocol != "openai" && p.ModelProtocol != "anthropic")):
		return fmt.Errorf(`model_protocol %q: use "openai" or "anthropic", for runtime = "acp" only`, p.ModelProtocol)
	case p.Provider != "":
		return fmt.Errorf("provider %q: an %s profile names no provider", p.Provider, p.Runtime)
	case strings.ContainsAny(p.KeyEnv, "= \t"):
		return fmt.Errorf("key_env %q must be the name of an environment variable, not a key", p.KeyEnv)
	case len(p.Fallback) > 0 || p.System != "" || p.MaxTokens != 0 || p.ContextWindow != 0:
		return fmt.Errorf("fallback_models, system, max_tokens and context_window are not supported by the %s runtime", p.Runtime)
	case len(p.Tools) > 0:
		return fmt.Errorf("tools: the %s runtime uses the agent's own tools, each request gated by AgentHub", p.Runtime)
	}
	for _, a := range line {
		if strings.ContainsAny(a, "\x00\n\r") {
			return errors.New("command: arguments must not hold control characters")
		}
	}
	if p.BaseURL != "" {
		u, err := url.Parse(p.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("base_url %q: use an http or https URL", p.BaseURL)
		}
	}
	return nil
}
