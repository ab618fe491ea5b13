//go:build linux && cgo

package jscsignals

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"agenthub/app/jscsignals/jscprobe"
)

// childMode names what the re-executed test binary does: JavaScriptCore
// reads its options once per process, so each case needs its own.
const childMode = "AGENTHUB_JSC_PROBE"

// outcome is what a child reports: the SIGSEGV handler before and after a
// VM ran, and whether a recovered nil dereference afterwards survived.
type outcome struct {
	Before, After jscprobe.Handler
	Recovered     bool
}

func TestMain(m *testing.M) {
	if mode := os.Getenv(childMode); mode != "" {
		probe(mode == "keep")
		return
	}
	os.Exit(m.Run())
}

func probe(keep bool) {
	if keep {
		Keep()
	}
	var o outcome
	o.Before = jscprobe.SegvHandler()
	jscprobe.RunScript()
	o.After = jscprobe.SegvHandler()
	o.Recovered = recoversNilDereference()
	_ = json.NewEncoder(os.Stdout).Encode(o)
}

func recoversNilDereference() (ok bool) {
	defer func() { ok = recover() != nil }()
	var p *struct{ n int }
	fmt.Fprint(os.Stderr, p.n)
	return false
}

// runChild runs this test binary as a probe and decodes its report; a child
// that died has no report, and its stderr says why.
func runChild(t *testing.T, mode string, env ...string) (outcome, string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(withoutJSCOptions(os.Environ()), childMode+"="+mode), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var o outcome
	if err == nil {
		err = json.Unmarshal(out, &o)
	}
	return o, stderr.String(), err
}

func withoutJSCOptions(env []string) []string {
	var kept []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "JSC_") {
			kept = append(kept, kv)
		}
	}
	return kept
}

func TestKeepLeavesTheGoRuntimeItsSignalHandlers(t *testing.T) {
	o, stderr, err := runChild(t, "keep")
	if err != nil {
		t.Fatalf("probe with Keep: %v\n%s", err, stderr)
	}
	if o.After != o.Before || !o.After.OnStack {
		t.Errorf("SIGSEGV handler went from %+v to %+v: JavaScriptCore replaced Go's", o.Before, o.After)
	}
	if !o.Recovered {
		t.Error("a nil dereference after the VM ran was not recovered")
	}
}

// TestWithoutKeepTheEngineTakesSIGSEGV shows the probe sees the hazard Keep
// removes: without the options the engine's handler replaces Go's and the
// next recovered fault kills the process. Should a WebKit update stop doing
// that, this test says so and Keep can go.
func TestWithoutKeepTheEngineTakesSIGSEGV(t *testing.T) {
	_, stderr, err := runChild(t, "plain")
	if err == nil {
		t.Fatal("the probe survived a fault after JavaScriptCore started without the options; Keep may no longer be needed")
	}
	if !strings.Contains(stderr, "without SA_ONSTACK") {
		t.Fatalf("the probe died otherwise than expected: %v\n%s", err, stderr)
	}
}

func TestKeepRespectsTheUsersSetting(t *testing.T) {
	t.Setenv("JSC_usePollingTraps", "false")
	Keep()
	if got := os.Getenv("JSC_usePollingTraps"); got != "false" {
		t.Errorf("JSC_usePollingTraps = %q, want the user's false", got)
	}
	if got := os.Getenv("JSC_useWasmFastMemory"); got != "false" {
		t.Errorf("JSC_useWasmFastMemory = %q, want false", got)
	}
}
