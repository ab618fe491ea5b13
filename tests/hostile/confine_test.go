package hostile

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// confineCase is a command the user approved that then reaches past the
// workspace: the operating system's confinement, not the parser, must
// stop it (issue 14: "a deny rule that the parser cannot see through then
// still cannot reach outside the workspace"). In command, {O} is the
// outside directory, {N} a per-case name, {TCP}/{UDP} loopback ports the
// test listens on, {PID} a process the test started, {PY} the system's
// python3.
type confineCase struct {
	name    string
	command string
}

var confineCases = []confineCase{
	{"write-outside-relative", "echo PWNED-{N} > ../outside/{N}.txt"},
	{"write-outside-absolute", "echo PWNED-{N} > {O}/{N}.txt"},
	{"append-outside", "echo PWNED-{N} >> {O}/canary.txt"},
	{"delete-outside", "rm -f {O}/keep-{N}.txt"},
	{"read-outside", "cat {O}/canary.txt"},
	{"write-through-own-symlink", "ln -s {O} out-{N} && echo PWNED-{N} > out-{N}/{N}.txt"},
	{"write-through-proc-root", "echo PWNED-{N} > /proc/self/root{O}/{N}.txt"},
	{"write-shared-tmp", "echo PWNED-{N} > /tmp/hostile-{N}.txt"},
	{"tcp-connect-loopback", "bash -c 'echo PWNED-{N} > /dev/tcp/127.0.0.1/{TCP}'"},
	{"udp-send-loopback", "bash -c 'echo PWNED-{N} > /dev/udp/127.0.0.1/{UDP}'"},
	{"udp-sendto-python", `{PY} -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"PWNED-{N}", ("127.0.0.1", {UDP}))'`},
	{"tcp-connect-python", `{PY} -c 'import socket; s = socket.create_connection(("127.0.0.1", {TCP})); s.send(b"PWNED-{N}")'`},
	{"unix-socket-outside", `{PY} -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect("{O}/sock"); s.send(b"PWNED-{N}")'`},
	{"abstract-unix-socket", `{PY} -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect("\0hostile-{N}"); s.send(b"PWNED-{N}")'`},
	{"signal-outside-process", "kill -9 {PID}"},
}

// playConfine runs every command approved in one run and checks what each
// reached: files outside, the test's listeners, its process.
func playConfine(t *testing.T, l *ledger) {
	w := newWorld(t)
	var received sync32
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer tcp.Close()
	go acceptAll(tcp, &received)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	must(t, err)
	defer udp.Close()
	go readPackets(udp, &received)
	unixLn, err := net.Listen("unix", filepath.Join(w.outside, "sock"))
	must(t, err)
	defer unixLn.Close()
	go acceptAll(unixLn, &received)
	nonce := fmt.Sprintf("%d", os.Getpid())
	abstract, err := net.Listen("unix", "@hostile-abstract-socket-"+nonce)
	must(t, err)
	defer abstract.Close()
	go acceptAll(abstract, &received)
	victim := exec.Command("sleep", "300")
	must(t, victim.Start())
	victimDone := make(chan struct{})
	go func() { _ = victim.Wait(); close(victimDone) }()
	defer func() { _ = victim.Process.Kill() }()

	var calls []call
	for _, c := range confineCases {
		n := c.name
		if c.name == "abstract-unix-socket" {
			n = "abstract-socket-" + nonce
		}
		must(t, os.WriteFile(filepath.Join(w.outside, "keep-"+n+".txt"), []byte("keep\n"), 0o644))
		cmd := strings.NewReplacer("{PY}", systemPython(), "{O}", w.outside, "{N}", n, "{TCP}", port(tcp.Addr()), "{UDP}", port(udp.LocalAddr()),
			"{PID}", fmt.Sprint(victim.Process.Pid)).Replace(c.command)
		calls = append(calls, call{Tool: "run_shell", Args: map[string]any{"command": cmd, "timeout_seconds": 15}})
	}
	w.putScriptProfile("confine", script(calls...), "5m")
	res := w.run("confine", "approve", 4*time.Minute, nil)
	if res.hung || terminal(res.events) == "" {
		t.Fatalf("the run did not end (hung %v, exit %d): %s", res.hung, res.code, res.stderr)
	}
	results := toolResults(res.events)
	defer os.Remove("/tmp/hostile-write-shared-tmp.txt")
	for i, c := range confineCases {
		n := c.name
		if c.name == "abstract-unix-socket" {
			n = "abstract-socket-" + nonce
		}
		var what []string
		if markerOutside(w, "PWNED-"+n) {
			what = append(what, "a file outside the workspace holds its text")
		}
		if b, err := os.ReadFile("/tmp/hostile-" + n + ".txt"); err == nil {
			what = append(what, "it wrote the shared /tmp: "+strings.TrimSpace(string(b)))
			_ = os.Remove("/tmp/hostile-" + n + ".txt")
		}
		if b, _ := os.ReadFile(filepath.Join(w.outside, "canary.txt")); string(b) != w.canary+"\n" {
			if c.name == "append-outside" {
				what = append(what, "the outside file changed")
			}
		}
		if _, err := os.Stat(filepath.Join(w.outside, "keep-"+n+".txt")); err != nil {
			what = append(what, "it deleted a file outside")
		}
		if i < len(results) && strings.Contains(results[i].text, w.canary) {
			what = append(what, "its output holds the outside file's text")
		}
		if received.has("PWNED-" + n) {
			what = append(what, "a listener of the test received its message")
		}
		if c.name == "signal-outside-process" {
			select {
			case <-victimDone:
				what = append(what, "it killed a process outside its own")
			case <-time.After(time.Second):
			}
		}
		if i >= len(results) {
			t.Errorf("%s: no tool result", c.name)
		}
		l.check(t, "confine/"+c.name, len(what) == 0, "an approved command %s", strings.Join(what, "; "))
	}
}

// systemPython is a python3 the confined command can run: the system's,
// not a shim under the home directory (pyenv's reads outside the tools on
// PATH, and the case would hold only because python never started).
func systemPython() string {
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "python3"
}

func port(a net.Addr) string {
	_, p, _ := net.SplitHostPort(a.String())
	return p
}

// sync32 collects what the listeners received.
type sync32 struct {
	mu   sync.Mutex
	text strings.Builder
}

func (s *sync32) add(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text.Write(b)
	s.text.WriteByte('\n')
}

func (s *sync32) has(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(s.text.String(), text)
}

func acceptAll(ln net.Listener, into *sync32) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			buf := make([]byte, 256)
			n, _ := c.Read(buf)
			into.add([]byte(fmt.Sprintf("connected %s", buf[:n])))
		}()
	}
}

func readPackets(pc net.PacketConn, into *sync32) {
	buf := make([]byte, 256)
	for {
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		into.add(buf[:n])
	}
}
