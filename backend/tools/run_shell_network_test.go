package tools

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/confine"
)

// TestRunShellNetworkIsAskedFor: the model asks for the network with the
// command (network: true); the subject binds it, so an approval of the
// command without it does not cover the command with it, and the title
// and preview say so.
func TestRunShellNetworkIsAskedFor(t *testing.T) {
	f := newFixture(t)
	without := f.action(t, RunShell, `{"command":"go mod download"}`)
	with := f.action(t, RunShell, `{"command":"go mod download","network":true}`)
	if with.Title != "Run with network: go mod download" || without.Title != "Run: go mod download" {
		t.Errorf("titles %q, %q", with.Title, without.Title)
	}
	if string(with.Subject) == string(without.Subject) {
		t.Fatalf("the network is not in the subject: %s", with.Subject)
	}
	var pv shellPreview
	mustJSON(t, with.Preview, &pv)
	if !pv.Network || pv.Confinement.Confined && pv.Confinement.Network != confine.NetAny {
		t.Errorf("preview %+v", pv)
	}
	a, err := approval.ActionOf(backend.GateRequest{Tool: RunShell, Action: *with})
	if err != nil || !a.Network {
		t.Errorf("the gate does not see the network: %+v %v", a, err)
	}
}

// TestRunShellWithoutNetworkSendsNothing: the attack. A command not granted
// the network sends a UDP datagram and opens a TCP connection to listeners
// the test owns on loopback, and resolves a name; nothing arrives and the
// lookup fails. Granted, the same command reaches both.
func TestRunShellWithoutNetworkSendsNothing(t *testing.T) {
	if s := confine.Probe(); !s.NetNS {
		t.Skipf("no network namespaces here (%s): backend/proc's TestNetworkFallbackIsDescribed", s.NetNSReason)
	}
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	var mu sync.Mutex
	var got []string
	add := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, s)
	}
	go func() {
		buf := make([]byte, 256)
		for {
			n, _, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			add(string(buf[:n]))
		}
	}()
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 256)
			n, _ := c.Read(buf)
			_ = c.Close()
			add(string(buf[:n]))
		}
	}()
	_, up, _ := net.SplitHostPort(udp.LocalAddr().String())
	_, tp, _ := net.SplitHostPort(tcp.Addr().String())
	f := newFixture(t)
	cmd := func(tag string) string {
		return `bash -c 'echo ` + tag + `-udp > /dev/udp/127.0.0.1/` + up + `; echo ` + tag + `-tcp > /dev/tcp/127.0.0.1/` + tp +
			`; getent hosts example.com >/dev/null && echo resolved || echo no-dns'`
	}
	res := f.execute(t, RunShell, `{"command":`+quoteJSON(cmd("DENIED"))+`}`)
	if !strings.Contains(res.Content, "no-dns") {
		t.Errorf("without the network a name resolved:\n%s", res.Content)
	}
	res = f.execute(t, RunShell, `{"command":`+quoteJSON(cmd("GRANTED"))+`,"network":true}`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		all := strings.Join(got, "")
		mu.Unlock()
		if strings.Contains(all, "GRANTED-udp") && strings.Contains(all, "GRANTED-tcp") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with the network granted the listeners received %q:\n%s", all, res.Content)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if all := strings.Join(got, ""); strings.Contains(all, "DENIED") {
		t.Errorf("a command without the network reached the test's listener: %q", all)
	}
}
