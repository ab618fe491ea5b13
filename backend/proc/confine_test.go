//go:build linux

package proc

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"agenthub/backend/confine"
)

// envDial makes the test binary a TCP client of the address it names.
const envDial = "AGENTHUB_TEST_PROC_DIAL"

// TestDialHelperProcess is not a test: it is the client a confined
// command runs in TestConfinedNetwork.
func TestDialHelperProcess(t *testing.T) {
	addr := os.Getenv(envDial)
	if addr == "" {
		return
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		os.Stdout.WriteString("dial: " + err.Error() + "\n")
		os.Exit(1)
	}
	_ = c.Close()
	os.Stdout.WriteString("connected\n")
	os.Exit(0)
}

func needLandlock(t *testing.T) int {
	t.Helper()
	s := confine.Probe()
	if s.ABI < 4 {
		t.Skipf("this kernel has no Landlock with TCP rules: %+v", s) // the unconfined path is tested below
	}
	return s.ABI
}

// confinedSetup is a workspace and, beside it, a sibling directory holding
// a file the command must neither read nor overwrite.
func confinedSetup(t *testing.T) (ws, sibling string) {
	t.Helper()
	base := t.TempDir()
	ws, sibling = filepath.Join(base, "ws"), filepath.Join(base, "sibling")
	for _, d := range []string{ws, sibling} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(sibling, "secret.txt"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, sibling
}

func runConfined(t *testing.T, ws string, rules confine.Rules, script string) Result {
	t.Helper()
	res, err := Output(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c", script}, Dir: ws,
		Env: []string{"PATH=/usr/bin:/bin", "LANG=C"}, Confine: &rules})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestConfinedFiles: a confined shell writes in the workspace and its
// private temp dir, and gets EACCES writing or reading outside them; the
// file outside is unchanged.
func TestConfinedFiles(t *testing.T) {
	needLandlock(t)
	ws, sibling := confinedSetup(t)
	secret := filepath.Join(sibling, "secret.txt")
	rules := confine.ForCommand(ws, "/usr/bin:/bin", "", confine.Network{})
	tests := []struct {
		name, script, want string
	}{
		{"write in the workspace", `echo ok > in.txt && cat in.txt`, "ok\n"},
		{"mkdir and rename in the workspace", `mkdir -p a/b && echo x > a/b/f && mv a/b/f a/g && cat a/g`, "x\n"},
		{"private temp", `case "$TMPDIR" in */agenthub-cmd-*) ;; *) echo "TMPDIR=$TMPDIR"; exit 1;; esac;
			echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`, "t\n"},
		{"overwrite outside", `echo pwned > ` + secret + ` 2>&1 || echo refused`, "refused\n"},
		{"create outside", `echo x > ` + filepath.Join(sibling, "new.txt") + ` || echo refused`, "refused\n"},
		{"read a sibling", `cat ` + secret + ` || echo refused`, "refused\n"},
		{"list a sibling", `ls ` + sibling + ` || echo refused`, "refused\n"},
		{"the shared /tmp", `echo x > /tmp/agenthub-confine-probe-$$ || echo refused`, "refused\n"},
		{"read the system", `test -r /etc/passwd && head -c 0 /etc/passwd && echo readable`, "readable\n"},
		{"read AgentHub's memory", `head -c 8 /proc/` + strconv.Itoa(os.Getpid()) + `/mem >/dev/null || echo refused`,
			"refused\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runConfined(t, ws, rules, tc.script)
			if string(res.Stdout) != tc.want {
				t.Fatalf("stdout %q, want %q (stderr %q)", res.Stdout, tc.want, res.Stderr)
			}
			if tc.want == "refused\n" && !strings.Contains(string(res.Stderr), "Permission denied") {
				t.Errorf("stderr %q, want EACCES (Permission denied)", res.Stderr)
			}
		})
	}
	// Signals to processes outside the domain are refused with EPERM.
	if res := runConfined(t, ws, rules, `kill -0 `+strconv.Itoa(os.Getpid())+` || echo refused`); string(res.Stdout) !=
		"refused\n" || !strings.Contains(string(res.Stderr), "not permitted") {
		t.Errorf("signal AgentHub: stdout %q, stderr %q", res.Stdout, res.Stderr)
	}
	if b, _ := os.ReadFile(secret); string(b) != "s3cret" {
		t.Errorf("the file outside the workspace now holds %q", b)
	}
}

// TestPrivateTempIsRemoved: the private temp dir is the command's alone
// (0700) and is gone once it ended.
func TestPrivateTempIsRemoved(t *testing.T) {
	ws, _ := confinedSetup(t)
	rules := confine.ForCommand(ws, "/usr/bin:/bin", "", confine.Network{})
	res := runConfined(t, ws, rules, `echo x > "$TMPDIR/left"; stat -c %a "$TMPDIR"; echo "$TMPDIR"`)
	lines := strings.Fields(string(res.Stdout))
	if len(lines) != 2 || lines[0] != "700" || !strings.Contains(lines[1], "agenthub-cmd-") {
		t.Fatalf("stdout %q (stderr %q)", res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(lines[1]); !os.IsNotExist(err) {
		t.Errorf("the private temp dir %s is still there (%v)", lines[1], err)
	}
}

// TestConfinedNetwork: a confined command cannot connect to a loopback TCP
// server, unless its port is allowed or network access was; also where no
// network namespace can be made (Landlock's TCP rules alone).
func TestConfinedNetwork(t *testing.T) {
	for _, netns := range []string{"on", "off"} {
		t.Run("netns "+netns, func(t *testing.T) {
			t.Setenv(confine.NetNSSwitchEnv, netns)
			testConfinedNetwork(t)
		})
	}
}

func testConfinedNetwork(t *testing.T) {
	needLandlock(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	ws, _ := confinedSetup(t)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		network confine.Network
		want    string
	}{
		{"no network", confine.Network{}, "dial: "},
		{"another port allowed", confine.Network{ConnectTCP: []uint16{port + 1}}, "dial: "},
		{"its port allowed", confine.Network{ConnectTCP: []uint16{port}}, "connected"},
		{"network approved", confine.Network{Any: true}, "connected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rules := confine.ForCommand(ws, "/usr/bin:/bin", "", tc.network)
			rules.Read = append(rules.Read, confine.Dir{Path: filepath.Dir(bin), Label: "test binary"})
			res, err := Output(t.Context(), Spec{Path: bin, Args: []string{"-test.run=^TestDialHelperProcess$"},
				Dir: ws, Env: []string{envDial + "=" + ln.Addr().String()}, Confine: &rules})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(res.Stdout), tc.want) {
				t.Fatalf("stdout %q, want %q (stderr %q)", res.Stdout, tc.want, res.Stderr)
			}
			// Without any network the command is in a namespace of its own
			// (nothing listens on its loopback); with a port allowed,
			// Landlock refuses the others with EACCES.
			refusal := "permission denied"
			if rules.Isolated(confine.Probe()) {
				refusal = "connection refused"
			}
			if tc.want == "dial: " && !strings.Contains(string(res.Stdout), refusal) {
				t.Errorf("the refusal is not %q: %q", refusal, res.Stdout)
			}
		})
	}
}

// TestConfinementSwitchedOff: with Landlock switched off (as on a kernel
// without it) the command runs as before, unconfined, and Describe says so.
func TestConfinementSwitchedOff(t *testing.T) {
	t.Setenv(confine.SwitchEnv, "off")
	ws, sibling := confinedSetup(t)
	rules := confine.ForCommand(ws, "/usr/bin:/bin", "", confine.Network{})
	res := runConfined(t, ws, rules, `cat `+filepath.Join(sibling, "secret.txt")+`; echo x > `+
		filepath.Join(sibling, "new.txt")+` && echo wrote`)
	if string(res.Stdout) != "s3cret"+"wrote\n" {
		t.Fatalf("stdout %q (stderr %q)", res.Stdout, res.Stderr)
	}
	if s := confine.Describe(rules, confine.Probe()); s.Confined || !strings.Contains(s.Text(), "not confined") {
		t.Errorf("summary %+v", s)
	}
}

// TestPIDsAreThePIDsOutside: the command is in no PID namespace of its
// own, so a pid it reports is the one AgentHub sees.
func TestPIDsAreThePIDsOutside(t *testing.T) {
	got := make(chan string, 1)
	p, err := Start(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c", `echo $$; exec sleep 60`},
		Lines: func(b []byte, _ bool) { got <- string(b) }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Stop(0) }()
	pid, _ := strconv.Atoi(<-got)
	id, ok := identify(pid)
	if !ok {
		t.Fatalf("the pid %d the command printed is no process here", pid)
	}
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != p.Pid() {
		t.Errorf("the command's group is %d (%v), want the supervisor's %d", pgid, err, p.Pid())
	}
	_ = p.Stop(0)
	waitGoneID(t, id)
}
