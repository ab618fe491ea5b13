//go:build linux

package proc

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"agenthub/backend/confine"
)

// envUnixDial makes the test binary a client of the UNIX socket it names;
// envSocketPair makes it open a socketpair instead.
const (
	envUnixDial   = "AGENTHUB_TEST_PROC_UNIX_DIAL"
	envSocketPair = "AGENTHUB_TEST_PROC_SOCKETPAIR"
)

// TestUnixDialHelperProcess is not a test: it is the process a confined
// command runs in TestConfinedCommandReachesNoUnixSocket.
func TestUnixDialHelperProcess(t *testing.T) {
	if os.Getenv(envSocketPair) != "" {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			os.Stdout.WriteString("socketpair: " + err.Error() + "\n")
			os.Exit(1)
		}
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		os.Stdout.WriteString("paired\n")
		os.Exit(0)
	}
	addr := os.Getenv(envUnixDial)
	if addr == "" {
		return
	}
	c, err := net.Dial("unix", addr)
	if err != nil {
		os.Stdout.WriteString("dial: " + err.Error() + "\n")
		os.Exit(1)
	}
	_, _ = c.Write([]byte("PWNED"))
	_ = c.Close()
	os.Stdout.WriteString("connected\n")
	os.Exit(0)
}

// TestConfinedCommandReachesNoUnixSocket: the attack is a command that
// connects to a UNIX socket outside the workspace (here the test's own; in
// life the Docker daemon's or ssh-agent's), which Landlock before ABI 9
// does not govern. Under a command's rules it fails with EACCES and the
// listener receives nothing, whatever the network setting; a socketpair,
// which reaches nothing outside, still works; and a process not confined
// for a command (an agent CLI's rules) still connects.
func TestConfinedCommandReachesNoUnixSocket(t *testing.T) {
	ws, sibling := confinedSetup(t)
	sock := filepath.Join(sibling, "daemon.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	received := make(chan string, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 16)
			n, _ := c.Read(b)
			received <- string(b[:n])
			_ = c.Close()
		}
	}()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(rules confine.Rules, env string) Result {
		t.Helper()
		rules.Read = append(rules.Read, confine.Dir{Path: filepath.Dir(bin), Label: "test binary"})
		res, err := Output(t.Context(), Spec{Path: bin, Args: []string{"-test.run=^TestUnixDialHelperProcess$"},
			Dir: ws, Env: []string{env}, Confine: &rules})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, network := range []confine.Network{{}, {Any: true}} {
		res := run(confine.ForCommand(ws, "/usr/bin:/bin", "", network), envUnixDial+"="+sock)
		if !strings.HasPrefix(string(res.Stdout), "dial: ") || !strings.Contains(string(res.Stdout), "permission denied") {
			t.Fatalf("network %+v: a confined command reached the socket outside: %q (stderr %q)", network, res.Stdout, res.Stderr)
		}
	}
	select {
	case got := <-received:
		t.Fatalf("the socket outside received %q from a confined command", got)
	default:
	}
	if res := run(confine.ForCommand(ws, "/usr/bin:/bin", "", confine.Network{}), envSocketPair+"=1"); string(res.Stdout) != "paired\n" {
		t.Fatalf("a socketpair under a command's rules: %q (stderr %q)", res.Stdout, res.Stderr)
	}
	agent := confine.ForCommand(ws, "/usr/bin:/bin", "", confine.Network{Any: true})
	agent.NoUnixSockets = false
	agent.Read = append(agent.Read, confine.Dir{Path: sibling, Label: "socket dir"})
	if res := run(agent, envUnixDial+"="+sock); string(res.Stdout) != "connected\n" {
		t.Fatalf("without the filter the helper could not connect, so the test proves nothing: %q (stderr %q)", res.Stdout, res.Stderr)
	}
}
