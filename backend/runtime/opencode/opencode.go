// Package opencode is OpenCode (runtime = "opencode"), an agent CLI that
// speaks ACP on stdio with `opencode acp`. It is the ACP adapter with its
// own name, default command and binary: what adding an agent CLI that
// speaks ACP costs, and the proof that the runtime interface carries it.
package opencode

import (
	"agenthub/backend/runtime"
	"agenthub/backend/runtime/acp"
)

// InstallHint is the install step doctor shows when the CLI is missing.
const InstallHint = "npm install -g opencode-ai@" + TestedVersion

// TestedVersion is the release the install hint pins. The adapter is the
// ACP adapter with another name; its tests drive a scripted ACP agent, not
// this release.
const TestedVersion = "1.18.33"

func init() {
	runtime.Register(acp.Adapter{Runtime: "opencode", DefaultCommand: []string{"opencode", "acp"},
		Bin: &runtime.Binary{Program: "opencode", Label: "OpenCode", Install: InstallHint}})
}
