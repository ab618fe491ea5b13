package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/runtime/acp/acptest"
)

// TestAFourthAgentCLIIsOnePackage: OpenCode (backend/runtime/opencode, one
// file registering an ACP adapter with its own name, default command and
// binary) is a runtime like the others without any change to the API,
// the CLI or doctor, which loop over the registered adapters: its profile
// loads with its capabilities, doctor looks for its binary, and a run on it
// writes through AgentHub's gate.
func TestAFourthAgentCLIIsOnePackage(t *testing.T) {
	t.Parallel()
	env, dir := newGitWorkspace(t)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := acptest.WriteScript(t.TempDir(), bin, acptest.Script{Steps: []acptest.Step{
		{Write: &acptest.File{Path: "new.txt", Content: "from opencode\n"}}, {Say: "end"}}})
	if err != nil {
		t.Fatal(err)
	}
	putProfile(t, env, "oc", fmt.Sprintf("name = \"oc\"\nruntime = \"opencode\"\ncommand = [%q, %q, %q]\nrun_timeout = \"1m\"%s\n",
		cmd[0], cmd[1], cmd[2], acceptAll))
	putProfile(t, env, "oc-default", "name = \"oc-default\"\nruntime = \"opencode\"\n"+acceptAll+"\n")

	code, out, errOut := runCLI(t, env, "profiles", "--json")
	if code != 0 {
		t.Fatalf("profiles: exit %d\n%s%s", code, out, errOut)
	}
	var list []struct {
		Name         string                `json:"name"`
		Runtime      string                `json:"runtime"`
		Capabilities *backend.Capabilities `json:"capabilities"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("profiles --json: %v\n%s", err, out)
	}
	found := map[string]bool{}
	for _, p := range list {
		if p.Runtime == "opencode" {
			if p.Capabilities == nil || p.Capabilities.Gating[backend.ActionWrite] != backend.Advisory {
				t.Errorf("%s: capabilities %+v, want the ACP adapter's (advisory writes)", p.Name, p.Capabilities)
			}
			found[p.Name] = true
		}
	}
	if !found["oc"] || !found["oc-default"] {
		t.Fatalf("opencode profiles listed: %v (a profile without command takes `opencode acp`)\n%s", found, errOut)
	}

	code, out, errOut = runCLI(t, env, "doctor")
	if !strings.Contains(out+errOut, "OpenCode") {
		t.Errorf("doctor does not look for OpenCode (exit %d):\n%s%s", code, out, errOut)
	}

	code, out, errOut = runCLI(t, env, "run", "--workspace", dir, "--profile", "oc", "--json", "--on-approval", "approve", "write it")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "from opencode\n" {
		t.Fatalf("new.txt: %q %v", b, err)
	}
	evs := decodeNDJSON(t, out, 0)
	if asked := eventsOf(evs, backend.EvApprovalRequested); len(asked) != 1 || asked[0]["kind"] != "patch" {
		t.Fatalf("the write was not gated: %v", asked)
	}
}
