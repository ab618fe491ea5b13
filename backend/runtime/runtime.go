// Package runtime is the one interface every runtime implements: AgentHub's
// own loop, playbooks, and each external agent CLI (Claude Code, Codex,
// Gemini CLI and other ACP agents). A runtime lives in one package beneath
// this one and registers its Adapter from an init function; the profile
// loader, the API facades and doctor loop over the registered adapters and
// never name a runtime. Adding an agent CLI is one package and one blank
// import in backend/runtime/all.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"agenthub/backend"
	"agenthub/backend/profile"
)

// Adapter is one runtime: what a profile's `runtime = "NAME"` selects.
type Adapter interface {
	// Name is the profile's runtime value, e.g. "claude".
	Name() string
	// Validate checks the runtime's own settings of a profile, after the
	// profile package's checks common to all runtimes.
	Validate(p profile.Profile) error
	// Capabilities is what the runtime declares about gating (AD2); nil for
	// runtimes that AgentHub gates itself, action by action.
	Capabilities(p profile.Profile) *backend.Capabilities
	// Build makes the runtime's part of the engine's profile: its model and
	// the tools it offers (the settings common to every runtime, such as
	// stop rules and policy overrides, are the caller's).
	Build(p profile.Profile, env Env) (Built, error)
	// Tools are the proxy tools the engine's tool table needs for this
	// runtime (an agent CLI's permission requests); nil for none.
	Tools() map[string]backend.Tool
	// Binary is the command-line program doctor looks for; nil when the
	// runtime runs inside AgentHub.
	Binary() *Binary
}

// Built is what an adapter makes of a profile. The runtime packages stay
// beneath the engine: they never import it.
type Built struct {
	Model backend.Model
	// Tools names the tools the runtime offers (its proxy tools); nil keeps
	// the profile's or the built-in ones.
	Tools    []string
	Scripted bool // a playbook, never an AI model
	// Source offers the profile's own tools (MCP servers) besides Tools.
	Source ToolSource
}

// ToolSource offers tools that come and go with a profile (its MCP
// servers); the engine's ToolSource has the same method.
type ToolSource interface {
	Tools(ctx context.Context) []backend.Tool
}

// Provider is implemented by adapters whose runtime always speaks one model
// provider's API (Claude Code speaks Anthropic's), for lists that show it.
type Provider interface {
	Provider() string
}

// Env is what an adapter may use to build: the data directory and the
// profile's key, resolved by the caller (and registered with the redactor),
// never stored.
type Env struct {
	Home string // the data directory
	Key  string // the value of the profile's key_env, "" when none
}

// Binary is an agent CLI as doctor reports it.
type Binary struct {
	Program string // looked up on the login shell's PATH
	Label   string // as people call it: "Claude Code"
	Install string // the pinned install step
}

var (
	mu       sync.RWMutex
	adapters = map[string]Adapter{}
)

// Register adds an adapter; a second adapter of the same name is a
// programming error.
func Register(a Adapter) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := adapters[a.Name()]; dup {
		panic("runtime: two adapters named " + a.Name())
	}
	adapters[a.Name()] = a
}

// Lookup returns the adapter of a runtime name.
func Lookup(name string) (Adapter, bool) {
	mu.RLock()
	defer mu.RUnlock()
	a, ok := adapters[name]
	return a, ok
}

// All lists the registered adapters by name.
func All() []Adapter {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Adapter, 0, len(adapters))
	for _, a := range adapters {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// Names lists the registered runtime names, sorted.
func Names() []string {
	var names []string
	for _, a := range All() {
		names = append(names, a.Name())
	}
	return names
}

// ErrUnknown is a profile naming a runtime no adapter serves.
var ErrUnknown = errors.New("unknown runtime")

// Validate checks a profile's runtime section with its adapter.
func Validate(p profile.Profile) error {
	a, ok := Lookup(p.Runtime)
	if !ok {
		return fmt.Errorf("runtime %q: use %s: %w", p.Runtime, strings.Join(Names(), ", "), ErrUnknown)
	}
	return a.Validate(p)
}

// Tools gathers every registered runtime's proxy tools into table, the
// engine's tool table, and returns it.
func Tools(table map[string]backend.Tool) map[string]backend.Tool {
	for _, a := range All() {
		for name, t := range a.Tools() {
			table[name] = t
		}
	}
	return table
}
