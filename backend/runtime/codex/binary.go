package codex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"agenthub/backend"
	"agenthub/backend/proc"
	"agenthub/backend/runtime/agentbin"
)

// cli names the Codex CLI in messages.
var cli = agentbin.CLI{Label: "the Codex CLI", Name: "codex", Hint: InstallHint}

// resolve finds the CLI, asks its version and hashes it. A missing or
// broken CLI is runtime_unavailable with the install step.
func (c Config) resolve(ctx context.Context) (agentbin.Info, error) {
	path := proc.LoginPath(ctx)
	bin, err := c.find(path)
	if err != nil {
		return agentbin.Info{}, err
	}
	if err := os.MkdirAll(c.home(), 0o700); err != nil {
		return agentbin.Info{}, fmt.Errorf("prepare the Codex home: %w", err)
	}
	version, err := cli.Version(ctx, bin, c.home(), c.environ(path, c.direct()))
	if err != nil {
		return agentbin.Info{}, err
	}
	sum, err := agentbin.Hash(bin)
	if err != nil {
		return agentbin.Info{}, fmt.Errorf("hash the Codex binary: %w", err)
	}
	return agentbin.Info{Path: bin, Version: version, SHA256: sum, Tested: TestedVersion}, nil
}

// find resolves the profile's command to the executable to start.
func (c Config) find(path string) (string, error) {
	cmd, err := cli.Find(c.Command, path)
	if err != nil {
		return "", err
	}
	return native(cmd)
}

// npmTargets maps GOOS/GOARCH to the target triple and platform package the
// npm package ships its native binary in.
var npmTargets = map[string][2]string{
	"linux/amd64":  {"x86_64-unknown-linux-musl", "codex-linux-x64"},
	"linux/arm64":  {"aarch64-unknown-linux-musl", "codex-linux-arm64"},
	"darwin/amd64": {"x86_64-apple-darwin", "codex-darwin-x64"},
	"darwin/arm64": {"aarch64-apple-darwin", "codex-darwin-arm64"},
}

// native returns the native binary a command starts. The npm package's
// `codex` is a Node script (bin/codex.js) that starts the binary of a
// platform package installed beside it; AgentHub starts that binary itself,
// so signals reach it directly, no Node process sits in between, and the
// hash recorded is that of the code that runs. Anything else is returned
// as it is.
func native(cmd string) (string, error) {
	real, err := filepath.EvalSymlinks(cmd)
	if err != nil {
		return cmd, nil // not a link that resolves: start it as named
	}
	if filepath.Base(real) != "codex.js" || filepath.Base(filepath.Dir(real)) != "bin" {
		return real, nil
	}
	pkg := filepath.Dir(filepath.Dir(real)) // …/node_modules/@openai/codex
	t, ok := npmTargets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		return "", &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "platform",
			Message: "the Codex CLI has no native binary for " + runtime.GOOS + "/" + runtime.GOARCH}
	}
	candidates := []string{
		filepath.Join(filepath.Dir(pkg), t[1], "vendor", t[0], "bin", "codex"),              // hoisted
		filepath.Join(pkg, "node_modules", "@openai", t[1], "vendor", t[0], "bin", "codex"), // nested
		filepath.Join(pkg, "vendor", t[0], "bin", "codex"),                                  // bundled
		filepath.Join(pkg, "vendor", t[0], "codex", "codex"),                                // older layout
	}
	for _, p := range candidates {
		if agentbin.Executable(p) {
			return p, nil
		}
	}
	return "", &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "not_installed",
		Message: "the Codex npm package is installed without its native binary (@openai/" + t[1] +
			", an optional dependency). Reinstall it with: " + InstallHint}
}
