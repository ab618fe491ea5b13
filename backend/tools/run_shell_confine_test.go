package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"agenthub/backend/confine"
)

// wantConfinement is what the approval of a command shows on this kernel.
func wantConfinement() confine.Summary {
	s := confine.Probe()
	if s.ABI < 1 {
		if s.NetNS {
			return confine.Summary{Reason: s.Reason, Network: confine.NetNone, NetworkBy: confine.NetByNamespace,
				NoUnixSockets: true}
		}
		return confine.Summary{Reason: s.Reason, NoUnixSockets: true}
	}
	want := confine.Summary{Confined: true, ABI: s.ABI,
		Reads: []string{confine.LabelSystem, confine.LabelDevices, confine.LabelTools, confine.LabelGitConfig, confine.LabelWorkspace,
			confine.LabelCaches},
		Writes:  []string{confine.LabelWorkspace, confine.LabelCaches, confine.LabelTemp},
		Network: confine.NetNone, NetworkBy: confine.NetByNamespace, NoUnixSockets: true}
	switch {
	case s.NetNS:
	case s.ABI < 4:
		want.Network, want.NetworkBy = confine.NetUnrestricted, ""
		want.Reason = "Landlock ABI " + strconv.Itoa(s.ABI) + " cannot restrict TCP (4 can); " + s.NetNSReason
	default:
		want.Network, want.NetworkBy = confine.NetNoTCP, confine.NetByLandlock
		want.Reason = "UDP and raw sockets are not restricted: " + s.NetNSReason
	}
	return want
}

// TestRunShellIsConfined: an approved command whose argument a hostile
// model chose writes in the workspace and its private temp dir only; a
// write beside the workspace and a read of a sibling's file fail with
// EACCES, whatever the parser made of the command.
func TestRunShellIsConfined(t *testing.T) {
	if confine.Probe().ABI < 1 {
		t.Skip("no Landlock on this kernel; the unconfined path is backend/proc's TestConfinementSwitchedOff")
	}
	f := newFixture(t)
	outside := filepath.Join(filepath.Dir(f.root), "outside-"+filepath.Base(f.root))
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(outside) })
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := `echo in > inside.txt; echo t > "$TMPDIR/t" && echo temp-ok; eval "echo pwned > ` + secret + `"; cat ` + secret + `; true`
	res := f.execute(t, RunShell, `{"command":`+quoteJSON(cmd)+`}`)
	if strings.Contains(res.Content, "s3cret") || !strings.Contains(res.Content, "temp-ok") ||
		strings.Count(res.Content, "Permission denied") != 2 {
		t.Fatalf("result:\n%s", res.Content)
	}
	if b, _ := os.ReadFile(secret); string(b) != "s3cret" {
		t.Errorf("the file outside the workspace holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.root, "inside.txt")); string(b) != "in\n" {
		t.Errorf("inside.txt holds %q", b)
	}
}

func quoteJSON(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// TestRunShellBuildCaches: a confined command cannot write the build
// tools' default caches under HOME, so each workspace gets its own, in the
// data directory: `go build` works, its cache lands there and outlives the
// command, and two workspaces never share one.
func TestRunShellBuildCaches(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	f := newFixture(t)
	f.write(t, "go.mod", "module example.com/x\n\ngo 1.21\n")
	f.write(t, "main.go", "package main\n\nfunc main() {}\n")
	res := f.execute(t, RunShell, `{"command":"go build -o /dev/null . && echo built; go env GOCACHE","timeout_seconds":300}`)
	if !strings.Contains(res.Content, "built") {
		t.Fatalf("go build under confinement:\n%s", res.Content)
	}
	root := cacheRoot(Config{CheckpointDir: f.ckDir})
	caches := workspaceCaches(root, f.env().WorkspaceID)
	if caches == "" {
		t.Fatalf("no caches for workspace %q under %q", f.env().WorkspaceID, root)
	}
	entries, err := os.ReadDir(filepath.Join(caches, "go-build"))
	if err != nil || len(entries) == 0 {
		t.Errorf("the build cache %s is empty after the build (%v)", caches, err)
	}
	if strings.Contains(res.Content, f.root) {
		t.Errorf("a machine path in the result:\n%s", res.Content)
	}
	if workspaceCaches(root, "ws_other") == caches || workspaceCaches(root, "../x") != "" {
		t.Error("workspaces share a cache, or an id leaves the cache root")
	}
}
