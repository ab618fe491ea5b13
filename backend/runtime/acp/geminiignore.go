package acp

import (
	"fmt"
	"path/filepath"
	"strings"

	"agenthub/backend/approval"
	"agenthub/workspace"
)

// Gemini CLI reads the workspace itself (its reads are not served over ACP,
// see Config.servesReads), so without more its read_file would hand the
// model a private key. Its file tools refuse what an ignore file lists, and
// settings may name extra ignore files (context.fileFiltering.
// customIgnoreFilePaths). AgentHub writes the secret patterns of
// approval.SecretIgnorePatterns into the isolated HOME and names that file
// in the settings. Gemini CLI 0.61.0 joins the entry onto the workspace
// root, so it climbs to the file system root first ("../" more times than
// any workspace is deep; Node's path.join stops at the root) and the one
// settings file serves every workspace.
//
// Its grep_search honours no such file when it runs `git grep` (tracked
// files are searched whatever is ignored) or plain grep (outside a git
// repository), so the policy (geminipolicy.go) denies it: the model is not
// offered it and searches with glob and read_file, or asks to run grep.

// geminiIgnoreName is the ignore file in the isolated HOME's .gemini.
const geminiIgnoreName = "agenthub-secrets.ignore"

// climbToRoot is prefixed to an absolute path to make it a relative one
// that resolves to itself from any workspace root.
var climbToRoot = strings.Repeat("../", 64)

// writeGeminiIgnore writes the secret ignore file into the Gemini
// directory and returns the settings entry that names it.
func writeGeminiIgnore(geminiDir string) (string, error) {
	path := filepath.Join(geminiDir, geminiIgnoreName)
	text := "# Written by AgentHub: secret files Gemini CLI's file tools refuse.\n" +
		strings.Join(approval.SecretIgnorePatterns(), "\n") + "\n"
	if err := workspace.WriteFileAtomic(path, []byte(text)); err != nil {
		return "", fmt.Errorf("write Gemini CLI's secret ignore file: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("locate Gemini CLI's secret ignore file: %w", err)
	}
	return climbToRoot + strings.TrimPrefix(filepath.ToSlash(abs), "/"), nil
}
