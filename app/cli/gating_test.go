package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
)

// TestAdvisoryGatingRefusedShowsNextStep runs an ACP profile (every kind of
// gating advisory) under the default policy with `agenthub run`: the run
// is refused before the agent starts (its program does not even exist),
// and both the followed run and `runs show` print the message naming the
// runtime and kinds and, as next step, the accept_advisory setting. With
// only some kinds accepted the refusal names the rest.
func TestAdvisoryGatingRefusedShowsNextStep(t *testing.T) {
	t.Parallel()
	env, dir := newGitWorkspace(t)
	missing := filepath.Join(t.TempDir(), "no-such-agent")
	writeACPProfile(t, env, "runtime = \"acp\"\ncommand = [\""+missing+"\"]\naccept_advisory = [\"write\", \"patch\"]")
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "gm", "do the task")
	if code != ExitFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"✗ failed: the acp runtime cannot enforce this run's policy for network, shell",
		"(runtime_unavailable)",
		`next: To run anyway and have AgentHub only record these actions, add accept_advisory = ["network", "shell"] to the profile "gm"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not installed") || strings.Contains(out, "Check the runtime CLI") {
		t.Errorf("the agent was started, or the default step shown:\n%s", out)
	}

	code, list, _ := runCLI(t, env, "runs", "list", "--json")
	var runs []backend.RunSummary
	if code != 0 || json.Unmarshal([]byte(list), &runs) != nil || len(runs) != 1 {
		t.Fatalf("runs list: exit %d\n%s", code, list)
	}
	code, show, _ := runCLI(t, env, "runs", "show", runs[0].ID)
	if code != 0 || !strings.Contains(show, "runtime_unavailable: the acp runtime cannot enforce this run's policy") ||
		!strings.Contains(show, `add accept_advisory = ["network", "shell"] to the profile "gm"`) {
		t.Fatalf("runs show: exit %d\n%s", code, show)
	}
}
