package api

import (
	"path/filepath"

	"agenthub/backend"
	"agenthub/backend/engine"
	"agenthub/backend/profile"
	"agenthub/backend/runtime/codex"
)

// codexProfile builds the engine's profile of the Codex CLI. Each profile
// gets its own isolated HOME, CODEX_HOME (whose config.toml names the
// profile's server) and raw-output folder under runtimes/codex/<name>;
// patches share the checkpoint store of the built-in tools, so undo works
// on them too.
func codexProfile(p profile.Profile, home string, ep engine.Profile) engine.Profile {
	ep.Model = codex.NewModel(codex.Config{Command: p.Command.Program(), Model: p.Model, BaseURL: p.BaseURL,
		APIKey: keyOf(p), Gating: p.Gating, Mode: p.Mode, Sandbox: p.Sandbox,
		Dir:         filepath.Join(home, "runtimes", "codex", p.Name),
		Checkpoints: filepath.Join(home, "checkpoints")})
	ep.Tools = codex.ToolNames()
	return ep
}

// codexCapabilities is what a Codex profile declares (AD2): enforced
// through app-server, advisory with gating = "advisory".
func codexCapabilities(p profile.Profile) (backend.Capabilities, bool) {
	if p.Runtime != profile.RuntimeCodex {
		return backend.Capabilities{}, false
	}
	return codex.Capabilities(p.Gating), true
}
