package engine

import (
	"context"

	"agenthub/backend"
)

// ToolSource supplies a profile's own tools beyond the engine's table, such
// as the tools of the profile's MCP servers. Tools may start what it needs
// on first use (bounded by ctx) and must be safe for concurrent use; a tool
// it cannot provide is simply absent, so the model is never offered it.
type ToolSource interface {
	Tools(ctx context.Context) []backend.Tool
}

// tool finds a tool offered to this run by name: the profile's own tools
// first, then the engine's table.
func (rc *runCtl) tool(name string) (backend.Tool, bool) {
	if rc.p.Source != nil {
		for _, t := range rc.p.Source.Tools(rc.ctx) {
			if t.Spec().Name == name {
				return t, true
			}
		}
	}
	t, ok := rc.e.cfg.Tools[name]
	return t, ok
}

// ownToolNames names the profile's own tools.
func (rc *runCtl) ownToolNames() []string {
	if rc.p.Source == nil {
		return nil
	}
	var names []string
	for _, t := range rc.p.Source.Tools(rc.ctx) {
		names = append(names, t.Spec().Name)
	}
	return names
}

// replayTool is the tool of a call being replayed after a decision; nil
// when it is gone (e.g. an MCP server that no longer lists it), which the
// replay reports to the model as a tool error.
func (rc *runCtl) replayTool(name string) backend.Tool {
	t, _ := rc.tool(name)
	return t
}

// closer is a tool source that holds processes (an MCP server set).
type closer interface{ Close() }

// closeSources stops the profiles' tool sources once no run uses them.
func (e *Engine) closeSources() {
	e.profMu.RLock()
	defer e.profMu.RUnlock()
	for _, p := range e.cfg.Profiles {
		if c, ok := p.Source.(closer); ok {
			c.Close()
		}
	}
}
