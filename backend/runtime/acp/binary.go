package acp

import (
	"context"
	"fmt"

	"agenthub/backend"
	"agenthub/backend/proc"
	"agenthub/backend/runtime/agentbin"
)

// resolve finds the program and hashes it. A missing program is
// runtime_unavailable with the install step. The agent's version comes
// later, from initialize.
func (c Config) resolve(ctx context.Context) (agentbin.Info, error) {
	cmd := c.command()
	if len(cmd) == 0 || cmd[0] == "" {
		return agentbin.Info{}, &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "no_command",
			Message: "the ACP profile names no command; set command = [\"program\", \"args\"…]"}
	}
	path, err := agentbin.CLI{Label: c.label(), Hint: c.installHint()}.Find(cmd[0], proc.LoginPath(ctx))
	if err != nil {
		return agentbin.Info{}, err
	}
	sum, err := agentbin.Hash(path)
	if err != nil {
		return agentbin.Info{}, fmt.Errorf("hash the agent's program: %w", err)
	}
	return agentbin.Info{Path: path, SHA256: sum}, nil
}
