package api

import (
	"path/filepath"

	"agenthub/backend"
	"agenthub/backend/engine"
	"agenthub/backend/profile"
	"agenthub/backend/runtime/acp"
)

// acpProfile builds the engine's profile of an ACP agent: runtime "acp"
// runs the profile's command line, runtime "gemini" is Gemini CLI over ACP
// (`gemini --acp` unless the profile names another command). Each profile
// gets its own isolated HOME and raw-output folder under
// runtimes/<runtime>/<name>; writes share the checkpoint store of the
// built-in tools, so undo works on them too.
func acpProfile(p profile.Profile, home string, ep engine.Profile) engine.Profile {
	gemini := p.Runtime == profile.RuntimeGemini
	ep.Model = acp.NewModel(acp.Config{Name: p.Runtime, Command: p.Command.Line(), Gemini: gemini, Model: p.Model,
		BaseURL: p.BaseURL, KeyEnv: p.KeyEnv, APIKey: keyOf(p), ModelProtocol: p.ModelProtocol,
		Dir:           filepath.Join(home, "runtimes", p.Runtime, p.Name),
		CheckpointDir: filepath.Join(home, "checkpoints")})
	ep.Tools = acp.ToolNames()
	return ep
}

// acpCapabilities is what an ACP profile declares (AD2).
func acpCapabilities(p profile.Profile) (backend.Capabilities, bool) {
	if p.Runtime != profile.RuntimeACP && p.Runtime != profile.RuntimeGemini {
		return backend.Capabilities{}, false
	}
	return acp.Capabilities(p.Runtime == profile.RuntimeGemini), true
}
