package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestACPCommandUsage: `agenthub acp` speaks only ACP on stdout, so every
// mistake on its command line (an unknown profile too) is said on stderr,
// before any protocol.
func TestACPCommandUsage(t *testing.T) {
	env := map[string]string{"AGENTHUB_HOME": t.TempDir()}
	cases := []struct {
		args     []string
		code     int
		inStderr string
	}{
		{[]string{"acp", "extra"}, ExitUsage, "acp takes no arguments"},
		{[]string{"acp", "--profile", "demo", "--playbook", "x.toml"}, ExitUsage, "not both"},
		{[]string{"acp", "--playbook", filepath.Join(t.TempDir(), "missing.toml")}, ExitFailed, "(invalid_input)"},
		{[]string{"acp", "--profile", "no-such-profile"}, ExitFailed, "unknown profile \"no-such-profile\" (invalid_input)\nnext: Choose one of: demo"},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(t, env, c.args...)
		if code != c.code || out != "" || !strings.Contains(errOut, c.inStderr) {
			t.Errorf("agenthub %s: exit %d, stdout %q, stderr %q; want exit %d, nothing on stdout, %q on stderr",
				strings.Join(c.args, " "), code, out, errOut, c.code, c.inStderr)
		}
	}
}
