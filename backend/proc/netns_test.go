//go:build linux

package proc

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend/confine"
)

// envNet makes the test binary the network client a confined command runs
// in TestNoNetworkWithoutGrant: it sends a UDP datagram, dials TCP, looks a
// name up and serves itself over its own loopback, and prints each outcome.
const envNet = "AGENTHUB_TEST_PROC_NET"

func TestNetHelperProcess(t *testing.T) {
	spec := os.Getenv(envNet)
	if spec == "" {
		return
	}
	udpAddr, tcpAddr, _ := strings.Cut(spec, ",")
	out := func(what string, err error) {
		if err != nil {
			fmt.Printf("%s: refused: %v\n", what, err)
		} else {
			fmt.Printf("%s: ok\n", what)
		}
	}
	// UDP: a connected socket's write fails at once when there is no
	// route; when it is sent the test's listener decides.
	c, err := net.Dial("udp", udpAddr)
	if err == nil {
		_, err = c.Write([]byte("PWNED-UDP"))
		_ = c.Close()
	}
	out("udp", err)
	tc, err := net.DialTimeout("tcp", tcpAddr, 10*time.Second)
	if err == nil {
		_ = tc.Close()
	}
	out("tcp", err)
	_, err = net.LookupHost("example.com")
	out("dns", err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		go func() {
			if c, err := ln.Accept(); err == nil {
				_ = c.Close()
			}
		}()
		var own net.Conn
		own, err = net.Dial("tcp", ln.Addr().String())
		if err == nil {
			_ = own.Close()
		}
		_ = ln.Close()
	}
	out("own-loopback", err)
	os.Exit(0)
}

// TestNoNetworkWithoutGrant is the attack of issue 14's network item: a
// command that was not granted the network sends a UDP datagram to a
// loopback listener the test owns, dials its TCP listener and looks a
// name up. None of it may get out (a namespace of its own, not only
// Landlock's TCP rules); its own loopback still works. With the network
// granted the same datagram and connection arrive.
func TestNoNetworkWithoutGrant(t *testing.T) {
	s := confine.Probe()
	if !s.NetNS {
		t.Skipf("this kernel refuses network namespaces (%s); TestNetworkFallbackIsDescribed covers it", s.NetNSReason)
	}
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	var mu sync.Mutex
	var got []string
	go func() {
		buf := make([]byte, 256)
		for {
			n, _, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			mu.Lock()
			got = append(got, string(buf[:n]))
			mu.Unlock()
		}
	}()
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	accepted := make(chan struct{}, 8)
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
			accepted <- struct{}{}
		}
	}()
	ws, _ := confinedSetup(t)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(network confine.Network) string {
		rules := confine.ForCommand(ws, "/usr/bin:/bin", "", network)
		rules.Read = append(rules.Read, confine.Dir{Path: filepath.Dir(bin), Label: "test binary"})
		res, err := Output(t.Context(), Spec{Path: bin, Args: []string{"-test.run=^TestNetHelperProcess$"}, Dir: ws,
			Env: []string{envNet + "=" + udp.LocalAddr().String() + "," + tcp.Addr().String()}, Confine: &rules,
			Timeout: 2 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return string(res.Stdout) + string(res.Stderr)
	}

	out := run(confine.Network{})
	for _, want := range []string{"tcp: refused", "dns: refused", "own-loopback: ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("without the network: no %q in\n%s", want, out)
		}
	}
	select {
	case <-accepted:
		t.Errorf("without the network the command connected to the test's TCP listener:\n%s", out)
	default:
	}
	// The datagram had its chance: a marker sent after it with the network
	// granted arrives, and by then the first would have too (same socket
	// queue, loopback keeps order).
	out = run(confine.Network{Any: true})
	if !strings.Contains(out, "udp: ok") || !strings.Contains(out, "tcp: ok") {
		t.Fatalf("with the network granted:\n%s", out)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Errorf("the listener received %d datagrams %q, want only the granted command's", len(got), got)
	}
	select {
	case <-accepted:
	case <-time.After(60 * time.Second):
		t.Errorf("with the network granted the TCP connection never arrived")
	}
}

// TestNetworkFallbackIsDescribed: where the namespace cannot be made (here
// switched off), the command falls back to Landlock's TCP rules and the
// summary says UDP is not restricted.
func TestNetworkFallbackIsDescribed(t *testing.T) {
	t.Setenv(confine.NetNSSwitchEnv, "off")
	s := confine.Probe()
	if s.NetNS {
		t.Fatal("the switch did not turn namespaces off")
	}
	rules := confine.ForCommand("/w", "/usr/bin:/bin", "", confine.Network{})
	sum := confine.Describe(rules, s)
	if s.ABI >= 4 && (sum.Network != confine.NetNoTCP || !strings.Contains(sum.Text(), "UDP and raw sockets are not restricted")) {
		t.Errorf("summary %q", sum.Text())
	}
	ws, _ := confinedSetup(t)
	if res := runConfined(t, ws, confine.ForCommand(ws, "/usr/bin:/bin", "", confine.Network{}), "echo ran"); string(res.Stdout) != "ran\n" {
		t.Errorf("without namespaces the command did not run: %q %q", res.Stdout, res.Stderr)
	}
}
