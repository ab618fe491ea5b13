package acp

import (
	"fmt"
	"os"
	"path/filepath"
)

// geminiPolicy is a policy file of Gemini CLI's policy engine, written to
// the user tier of the isolated HOME ($HOME/.gemini/policies/), which ranks
// above Gemini's defaults and above a workspace's policies (and those do
// not load: the workspace is untrusted).
//
// Gemini CLI 0.61.0 turns the ask_user of a rule without an argument
// pattern into allow for commands it deems read-only (ls, cat, grep, head,
// echo… inside the workspace: PolicyEngine.applyShellHeuristics with
// isKnownSafeCommand). A rule with an argument pattern skips that
// heuristic, so the first rule makes every shell command, and every part
// of a compound one, ask the client: AgentHub's gate sees every command,
// and shell gating is enforced. The second keeps every fetch asking. The
// third denies google_web_search, which Gemini's defaults allow without
// asking and whose request AgentHub cannot see; with it, network gating
// is enforced too. The fourth denies grep_search, which searches secret
// files (geminiignore.go). Priorities are tier 4 + n/1000, above every
// default rule (tier 1).
const geminiPolicy = `# Written by AgentHub for this isolated HOME; rewritten before every session.
[[rule]]
toolName = "run_shell_command"
commandRegex = ".*"
decision = "ask_user"
priority = 900

[[rule]]
toolName = "web_fetch"
decision = "ask_user"
priority = 900

[[rule]]
toolName = "google_web_search"
decision = "deny"
priority = 900
denyMessage = "AgentHub cannot gate web searches; fetch a URL with web_fetch instead, which asks."

[[rule]]
toolName = "grep_search"
decision = "deny"
priority = 900
denyMessage = "AgentHub cannot keep this search out of secret files; use glob and read_file, or run grep with run_shell_command, which asks."
`

// writeGeminiPolicy writes [geminiPolicy] into the Gemini directory of the
// isolated HOME.
func writeGeminiPolicy(geminiDir string) error {
	dir := filepath.Join(geminiDir, "policies")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("prepare Gemini CLI's policies: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agenthub.toml"), []byte(geminiPolicy), 0o600); err != nil {
		return fmt.Errorf("write Gemini CLI's policy: %w", err)
	}
	return nil
}
