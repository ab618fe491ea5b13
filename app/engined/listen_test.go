package engined

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPeerListenerRefusesAnotherUID: a connection whose peer's uid is not
// the engine's is closed before any byte is served. The test cannot become
// another user, so the listener is told to expect one: the peer (this
// process) is then "another user".
func TestPeerListenerRefusesAnotherUID(t *testing.T) {
	dir, err := os.MkdirTemp("", "ah-peer-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, tc := range []struct {
		name   string
		uid    int
		served bool
	}{{"same user", os.Getuid(), true}, {"another user", os.Getuid() + 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := net.Listen("unix", filepath.Join(dir, tc.name+".sock"))
			if err != nil {
				t.Fatal(err)
			}
			ln := &peerListener{Listener: raw, uid: tc.uid}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					_, _ = c.Write([]byte("hello"))
					c.Close()
				}
			}()
			c, err := net.Dial("unix", raw.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
			got, _ := io.ReadAll(c)
			if served := string(got) == "hello"; served != tc.served {
				t.Fatalf("served %v (%q), want %v", served, got, tc.served)
			}
		})
	}
}

// TestListenSocketMode: the socket is created 0600 and replaces a stale one.
func TestListenSocketMode(t *testing.T) {
	dir, err := os.MkdirTemp("", "ah-mode-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	stale := filepath.Join(dir, "engine.sock")
	if err := os.WriteFile(stale, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Stat(stale)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v %v, want a 0600 socket", fi.Mode(), err)
	}
	if _, err := Listen(dir); err == nil {
		t.Fatal("a second Listen on a live socket succeeded")
	}
}
