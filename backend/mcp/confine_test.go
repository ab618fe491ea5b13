package mcp

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend/confine"
)

// TestStdioServerConfined: a stdio MCP server is a program AgentHub starts
// on the model's behalf, so a hostile tool (or a hostile model steering a
// generic one, such as a filesystem server) must not reach past what the
// profile gave it. The helper server writes where it is asked and dials
// what it is asked: outside its state dir, its private temp dir and the
// directories its arguments name, the kernel refuses the write; without
// network = true in its profile, the connection.
func TestStdioServerConfined(t *testing.T) {
	if confine.Probe().ABI < 1 {
		t.Skip("the kernel lacks Landlock: nothing to prove")
	}
	outside, state, root := t.TempDir(), filepath.Join(t.TempDir(), "state"), t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
	for _, tc := range []struct {
		name    string
		network bool
		path    string
		wrote   bool
	}{
		{"outside", false, filepath.Join(outside, "escaped.txt"), false},
		{"home-like", false, filepath.Join(filepath.Dir(state), "beside-state.txt"), false},
		{"state-dir", false, filepath.Join(state, "kept.txt"), true},
		{"private-temp", false, "$TMPDIR/scratch.txt", true},
		{"argument-root", false, filepath.Join(root, "in-root.txt"), true},
		{"outside-with-network", true, filepath.Join(outside, "escaped-net.txt"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := helperConfig(t, "demo", false)
			cfg.Args, cfg.StateDir, cfg.Network = []string{root}, state, tc.network
			s := NewSet([]Config{cfg}, nil)
			defer s.Close()
			res := call(t, toolByName(t, s, "mcp__demo__write"), `{"path":`+quote(tc.path)+`}`)
			if got := res.Content == "wrote"; got != tc.wrote {
				t.Errorf("write %s: %q, want wrote=%v", tc.name, res.Content, tc.wrote)
			}
			if !tc.wrote && !strings.HasPrefix(tc.path, "$") {
				if _, err := os.Stat(tc.path); err == nil {
					t.Errorf("the server wrote %s", tc.path)
				}
			}
			res = call(t, toolByName(t, s, "mcp__demo__dial"), `{"addr":"`+ln.Addr().String()+`"}`)
			if got := res.Content == "connected"; got != tc.network {
				t.Errorf("dial with network=%v: %q", tc.network, res.Content)
			}
		})
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
