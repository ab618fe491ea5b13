package api

import (
	"errors"
	"os"
	"path/filepath"
	"sort"

	"agenthub/backend"
	"agenthub/backend/engine"
	"agenthub/backend/profile"
	"agenthub/backend/redact"
	"agenthub/backend/runtime"
	_ "agenthub/backend/runtime/all" // every runtime's adapter
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
// engine and replaces the core's profile set whole. A broken file is logged,
// kept as a problem for the settings view, and skipped; the demo name is
// reserved.
func (c *Core) loadProfiles() {
	list, loadProblems := profile.LoadDir(filepath.Join(c.cfg.Home, ProfilesDir))
	var problems []ProfileProblem
	skip := func(file string, err error) {
		c.log.Warn("skip a profile file", "file", filepath.Base(file), "err", err)
		problems = append(problems, ProfileProblem{File: filepath.Base(file), Problem: err.Error()})
	}
	for _, p := range loadProblems {
		skip(p.File, p.Err)
	}
	infos := []ProfileInfo{{Name: DemoProfile, Runtime: profile.RuntimeScript, Scripted: true, Default: true}}
	for _, p := range list {
		if p.Name == DemoProfile {
			skip(p.File, errors.New("the name demo is reserved"))
			continue
		}
		ep, err := engineProfile(p, c.cfg.Home)
		if err != nil {
			skip(p.File, err)
			continue
		}
		c.engine.AddProfile(p.Name, ep)
		info := ProfileInfo{Name: p.Name, Runtime: p.Runtime, Provider: p.Provider,
			Model: p.Model, BaseURL: p.BaseURL, Scripted: ep.Scripted, Capabilities: ep.Capabilities,
			AcceptAdvisory: ep.AcceptAdvisory, Isolation: p.Isolation}
		if a, ok := runtime.Lookup(p.Runtime); ok {
			if pr, ok := a.(runtime.Provider); ok {
				info.Provider = pr.Provider()
			}
		}
		infos = append(infos, info)
	}
	sort.SliceStable(infos[1:], func(i, j int) bool { return infos[i+1].Name < infos[j+1].Name })
	c.prof.mu.Lock()
	c.prof.list, c.prof.problems = infos, problems
	c.prof.mu.Unlock()
}

// engineProfile builds the engine's profile with its runtime's adapter
// (backend/runtime): the settings every runtime shares here, the model
// and tools there. home is the data directory.
func engineProfile(p profile.Profile, home string) (engine.Profile, error) {
	a, ok := runtime.Lookup(p.Runtime)
	if !ok {
		return engine.Profile{}, runtime.Validate(p) // names the runtimes there are
	}
	if err := a.Validate(p); err != nil {
		return engine.Profile{}, err
	}
	ep := engine.Profile{Runtime: p.Runtime, Tools: p.Tools, Stop: stopConfig(p.Stop), RunTimeout: p.RunTimeout.Duration,
		StateKeys: p.StateKeys, Executor: engine.Executor(p.Executor)}
	if !p.Policy.Empty() {
		over := p.Policy
		ep.Policy = &over // the profile's overrides may only tighten the workspace gate
	}
	if len(ep.Tools) == 0 {
		ep.Tools = builtinTools() // never a runtime's proxy tools
	}
	ep.Capabilities = a.Capabilities(p)
	kinds, by := p.AcceptsAdvisory()
	for _, k := range kinds {
		ep.AcceptAdvisory = append(ep.AcceptAdvisory, backend.ActionKind(k))
	}
	ep.AcceptedBy = by
	b, err := a.Build(p, runtime.Env{Home: home, Key: keyOf(p)})
	if err != nil {
		return ep, err
	}
	ep.Model, ep.Scripted = b.Model, b.Scripted
	if b.Tools != nil {
		ep.Tools = b.Tools
	}
	if b.Source != nil {
		ep.Source = b.Source
	}
	return ep, nil
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
	return runtime.Tools(builtin)
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
	list, _ := r.core.prof.get()
	return list, nil
}
