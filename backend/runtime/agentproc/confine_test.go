//go:build linux

package agentproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"agenthub/backend/confine"
	"agenthub/backend/runtime/rawlog"
)

func TestConfinementOfACLI(t *testing.T) {
	env := []string{"HOME=/data/claude/home", "PATH=/usr/bin:/bin", "ANTHROPIC_BASE_URL=http://127.0.0.1:8089",
		"HTTPS_PROXY=http://proxy:3128"}
	r := Spec{Path: "/bin/sh", Dir: "/ws", Env: env}.Confinement()
	if !r.PrivateTemp || !slices.Contains(r.Write, confine.Dir{Path: "/ws", Label: confine.LabelWorkspace}) ||
		!slices.Contains(r.Write, confine.Dir{Path: "/data/claude/home", Label: confine.LabelState}) || len(r.Write) != 2 {
		t.Errorf("writes %+v", r.Write)
	}
	if r.Network.Any || !slices.Equal(r.Network.ConnectTCP, []uint16{8089, 3128}) {
		t.Errorf("network %+v, want the model's and the proxy's port", r.Network)
	}
	if r := (Spec{Path: "/bin/sh", Dir: "/ws", Env: env, ModelURL: "https://api.example.com/v1"}).Confinement(); !slices.Equal(
		r.Network.ConnectTCP, []uint16{443, 3128}) {
		t.Errorf("explicit model URL: %+v", r.Network)
	}
	if r := (Spec{Path: "/bin/sh", Dir: "/ws", Env: []string{"PATH=/bin"}}).Confinement(); !r.Network.Any {
		t.Errorf("no endpoint known: %+v, want TCP left unrestricted", r.Network)
	}
}

// TestCLIIsConfined: a CLI (a shell standing in for one) and the commands
// it runs write in the workspace and its state dir, not beside them.
func TestCLIIsConfined(t *testing.T) {
	if confine.Probe().ABI < 1 {
		t.Skip("no Landlock on this kernel")
	}
	base := t.TempDir()
	ws, home, outside := filepath.Join(base, "ws"), filepath.Join(base, "home"), filepath.Join(base, "outside")
	for _, d := range []string{ws, home, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := rawlog.Open(t.TempDir(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	lines := make(chan string, 10)
	p, err := Start(Spec{Label: "Tool", Path: "/bin/sh", Dir: ws, Env: []string{"HOME=" + home, "PATH=/usr/bin:/bin"},
		Args: []string{"-c", `echo a > ws.txt && echo b > "$HOME/state" && echo ok; sh -c 'echo c > ` + outside +
			`/x' 2>/dev/null || echo refused`}, Raw: raw, Lines: func(b []byte, _ bool) { lines <- string(b) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	close(lines)
	var got []string
	for l := range lines {
		got = append(got, l)
	}
	if strings.Join(got, ",") != "ok,refused" {
		t.Fatalf("lines %q", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); !os.IsNotExist(err) {
		t.Errorf("the CLI's command wrote beside the workspace (%v)", err)
	}
}

const envOwner = "AGENTHUB_TEST_AGENTPROC_OWNER" // the workspace of the owner's CLI

// TestCLIOwnerHelperProcess is not a test: it is the "engine" of
// TestNothingOfACLIOutlivesItsOwner, which starts a CLI the way the runtime
// adapters do and waits to be killed.
func TestCLIOwnerHelperProcess(t *testing.T) {
	ws := os.Getenv(envOwner)
	if ws == "" {
		return
	}
	raw, err := rawlog.Open(t.TempDir(), "owner")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	// A claude-like CLI: it runs an approved command in the background (its
	// Bash tool), which sleeps, then writes; the CLI itself waits on its
	// input, as a CLI between turns does.
	_, err = Start(Spec{Label: "Tool", Path: "/bin/sh", Dir: ws, Env: []string{"HOME=" + ws, "PATH=/usr/bin:/bin"},
		Stdin: true, Raw: raw, Lines: func([]byte, bool) {}, Args: []string{"-c",
			`echo $$ > cli.pid; sh -c 'echo $$ > command.pid; sleep 3; echo late > side-effect' & cat`}})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	select {}
}

// TestNothingOfACLIOutlivesItsOwner: SIGKILL of the engine while its CLI
// runs a command: the CLI and the command leave the process table and the
// command's side effect never lands.
func TestNothingOfACLIOutlivesItsOwner(t *testing.T) {
	ws := t.TempDir()
	owner := exec.Command(os.Args[0], "-test.run=^TestCLIOwnerHelperProcess$", "-test.count=1")
	owner.Env = append(os.Environ(), envOwner+"="+ws)
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	owner.Stderr = os.Stderr
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		_ = owner.Process.Kill()
		t.Fatalf("owner: %q, %v", line, err)
	}
	starts := map[int]string{}
	for _, f := range []string{"cli.pid", "command.pid"} {
		pid := waitPID(t, filepath.Join(ws, f))
		starts[pid] = startTime(pid)
	}
	if err := owner.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = owner.Wait()
	for pid, start := range starts {
		for deadline := time.Now().Add(30 * time.Second); startTime(pid) == start; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs 30 s after the engine was killed", pid)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "side-effect")); !os.IsNotExist(err) {
		t.Fatalf("the CLI's command wrote its side effect after the engine died (%v)", err)
	}
}

func waitPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
	}
}

// startTime is field 22 of /proc/PID/stat ("" once the process is gone or
// a zombie): with the pid it names one process.
func startTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 || f[0] == "Z" {
		return ""
	}
	return f[19]
}

// TestConfinementReadsTheFilesItsCommandNames: a file the profile's own
// command line names by absolute path (a generic ACP agent's config, the
// scripted agent's script) is readable; a missing or relative one adds
// nothing.
func TestConfinementReadsTheFilesItsCommandNames(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(cfg, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.json")
	for _, args := range [][]string{{cfg}, {"--config=" + cfg}, {"--config", cfg}} {
		r := Spec{Path: "/bin/sh", Dir: "/ws", Args: args}.Confinement()
		if !slices.Contains(r.Read, confine.Dir{Path: cfg, Label: confine.LabelInstall}) {
			t.Errorf("args %q: reads %+v, want %s", args, r.Read, cfg)
		}
	}
	r := Spec{Path: "/bin/sh", Dir: "/ws", Args: []string{missing, "relative.json", "--x=" + missing}}.Confinement()
	for _, d := range r.Read {
		if d.Path == missing || d.Path == "relative.json" {
			t.Errorf("read %+v: a missing or relative argument is not a file to grant", d)
		}
	}
}
