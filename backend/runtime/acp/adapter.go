package acp

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"agenthub/backend"
	"agenthub/backend/profile"
	"agenthub/backend/runtime"
)

func init() {
	runtime.Register(Adapter{Runtime: profile.RuntimeACP})
	runtime.Register(Adapter{Runtime: profile.RuntimeGemini, Gemini: true,
		Bin: &runtime.Binary{Program: "gemini", Label: "Gemini CLI", Install: GeminiInstallHint}})
}

// Adapter is an agent speaking ACP on stdio: runtime = "acp" runs the
// profile's command line, runtime = "gemini" is Gemini CLI (`gemini --acp`
// unless the profile names another command). Other agent CLIs that speak
// ACP embed it with their own name, default command and binary (see
// backend/runtime/opencode).
type Adapter struct {
	Runtime string
	Gemini  bool
	// DefaultCommand is the command line when the profile names none.
	DefaultCommand []string
	Bin            *runtime.Binary
}

func (a Adapter) Name() string                 { return a.Runtime }
func (Adapter) Tools() map[string]backend.Tool { return Tools() }
func (a Adapter) Binary() *runtime.Binary      { return a.Bin }

func (a Adapter) Validate(p profile.Profile) error {
	if len(p.Command) == 0 && len(a.DefaultCommand) > 0 {
		p.Command = a.DefaultCommand
	}
	return validate(p, a.Gemini)
}

func (a Adapter) Capabilities(profile.Profile) *backend.Capabilities {
	caps := Capabilities(a.Gemini)
	return &caps
}

// Build gives the profile the agent as its model. Each profile gets its
// own isolated HOME and raw-output folder under runtimes/<runtime>/<name>;
// writes share the checkpoint store of the built-in tools, so undo works on
// them too.
func (a Adapter) Build(p profile.Profile, env runtime.Env) (runtime.Built, error) {
	cmd := p.Command.Line()
	if len(cmd) == 0 {
		cmd = a.DefaultCommand
	}
	return runtime.Built{Tools: ToolNames(), Model: NewModel(Config{Name: a.Runtime, Command: cmd, Gemini: a.Gemini,
		Model: p.Model, BaseURL: p.BaseURL, KeyEnv: p.KeyEnv, APIKey: env.Key, ModelProtocol: p.ModelProtocol,
		Dir:           filepath.Join(env.Home, "runtimes", a.Runtime, p.Name),
		CheckpointDir: filepath.Join(env.Home, "checkpoints")})}, nil
}

// validate checks an ACP profile. runtime = "acp" starts any agent that
// speaks ACP on stdio with its command line; runtime = "gemini" is Gemini
// CLI (command defaults to `gemini --acp`) against the profile's Gemini
// API server with the profile's model.
func validate(p profile.Profile, gemini bool) error {
	line := p.Command.Line()
	switch {
	case !gemini && (len(line) == 0 || line[0] == ""):
		return errors.New(`command is required: the agent's command line, e.g. command = ["my-agent", "--acp"]`)
	case !gemini && p.Model != "":
		return errors.New("model is not used by the acp runtime: configure the agent in its command line")
	case !gemini && p.BaseURL != "" && p.ModelProtocol == "":
		return errors.New(`base_url is used by the acp runtime only with model_protocol ("openai" or "anthropic"): ` +
			"the agent's model server, reached through AgentHub's key proxy")
	case p.ModelProtocol != "" && (gemini || (p.ModelProtocol != "openai" && p.ModelProtocol != "anthropic")):
		return fmt.Errorf(`model_protocol %q: use "openai" or "anthropic", for ACP agents other than Gemini CLI`, p.ModelProtocol)
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
		return runtime.CheckURL("base_url", p.BaseURL)
	}
	return nil
}
