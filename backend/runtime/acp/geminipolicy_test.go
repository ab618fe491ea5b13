package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeminiPolicyIsWritten: every Gemini session's isolated HOME holds the
// user-tier policy that makes every command and fetch ask and denies web
// search (the real CLI's behaviour is pinned by app/cli's
// TestGeminiReadOnlyCommandsAsk); another ACP agent gets none.
func TestGeminiPolicyIsWritten(t *testing.T) {
	c := Config{Gemini: true, Dir: t.TempDir()}
	if err := c.prepareHome(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(c.home(), ".gemini", "policies", "agenthub.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"toolName = \"run_shell_command\"\ncommandRegex = \".*\"\ndecision = \"ask_user\"",
		"toolName = \"web_fetch\"\ndecision = \"ask_user\"",
		"toolName = \"google_web_search\"\ndecision = \"deny\"",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the policy lacks %q:\n%s", want, b)
		}
	}
	other := Config{Dir: t.TempDir()}
	if err := other.prepareHome(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(other.home(), ".gemini")); !os.IsNotExist(err) {
		t.Fatalf("another ACP agent got Gemini's files: %v", err)
	}
}
