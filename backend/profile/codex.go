package profile

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Settings of the codex runtime.
const (
	GatingEnforced = "enforced" // app-server: every command and patch waits for AgentHub (the default)
	GatingAdvisory = "advisory" // exec --json: Codex acts in its sandbox, AgentHub only records it

	ModeAppServer = "app-server" // the default with enforced gating
	ModeExec      = "exec"       // the default with advisory gating; refused at run time without it

	SandboxReadOnly       = "read-only"
	SandboxWorkspaceWrite = "workspace-write"
)

// validateCodex checks a Codex profile: the CLI talks to the profile's
// OpenAI Responses server (base_url, including /v1) with the profile's
// model. gating = "advisory" must be said explicitly to run `codex exec`,
// which cannot ask before acting; Codex's sandbox can be narrowed but
// never turned off.
func (p Profile) validateCodex() error {
	switch {
	case p.Provider != "" && p.Provider != ProviderOpenAI:
		return fmt.Errorf("provider %q: a codex profile speaks the OpenAI Responses API; leave provider out", p.Provider)
	case p.Model == "":
		return errors.New("model is required (a model Codex knows, e.g. gpt-5.5: with another name Codex offers no apply_patch tool)")
	case p.BaseURL == "":
		return errors.New("base_url is required: the OpenAI Responses server Codex talks to, with its version path (Codex POSTs {base_url}/responses)")
	case strings.ContainsAny(p.KeyEnv, "= \t"):
		return fmt.Errorf("key_env %q must be the name of an environment variable, not a key", p.KeyEnv)
	case len(p.Fallback) > 0 || p.System != "" || p.MaxTokens != 0 || p.ContextWindow != 0:
		return errors.New("fallback_models, system, max_tokens and context_window are not supported by the codex runtime")
	case len(p.Tools) > 0 || len(p.MCP) > 0:
		return errors.New("tools, mcp_servers: the codex runtime uses Codex's own tools, each gated by AgentHub")
	case len(p.Command) > 1 || p.Command.Program() != "" && !filepath.IsAbs(p.Command.Program()) &&
		strings.ContainsAny(p.Command.Program(), " \t"):
		return fmt.Errorf("command %q: name one program, without arguments", strings.Join(p.Command, " "))
	case p.Gating != "" && p.Gating != GatingEnforced && p.Gating != GatingAdvisory:
		return fmt.Errorf("gating %q: use %q (the default) or %q", p.Gating, GatingEnforced, GatingAdvisory)
	case p.Mode != "" && p.Mode != ModeAppServer && p.Mode != ModeExec:
		return fmt.Errorf("mode %q: use %q (the default) or %q", p.Mode, ModeAppServer, ModeExec)
	case p.Mode == ModeAppServer && p.Gating == GatingAdvisory:
		return fmt.Errorf("mode %q always gates; leave gating out, or use mode %q for advisory gating", ModeAppServer, ModeExec)
	case p.Sandbox != "" && p.Sandbox != SandboxReadOnly && p.Sandbox != SandboxWorkspaceWrite:
		return fmt.Errorf("sandbox %q: use %q or %q; AgentHub never runs Codex without its sandbox",
			p.Sandbox, SandboxReadOnly, SandboxWorkspaceWrite)
	}
	u, err := url.Parse(p.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base_url %q: use an http or https URL", p.BaseURL)
	}
	return nil
}
