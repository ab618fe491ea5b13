package mcp

import (
	"fmt"
	"os"
	"strings"

	"agenthub/backend/confine"
)

// LabelRoot names, in approvals and doctor, the directories a server's
// arguments name (a filesystem server's root): the profile gave them to it.
const LabelRoot = "server arguments"

// confinement is what a stdio server and everything it starts may do
// (issue 14): read the system, the tools on its PATH, its install
// directory and the paths its arguments name; write only its state dir
// (its HOME), a private temp dir and the directories its arguments name;
// open TCP connections only when its profile says network = true. A tool
// is code AgentHub runs on the model's behalf, so what its approval shows
// ("call tool X with these arguments") must not become a write anywhere
// else on the disk.
func (s *server) confinement(path string, env []string) confine.Rules {
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	read := append(confine.System(), confine.PathDirs(pathVar)...)
	read = append(read, confine.InstallDirs(path)...)
	var write []confine.Dir
	for _, d := range confine.ArgumentPaths(s.cfg.Args, LabelRoot) {
		if st, err := os.Stat(d.Path); err == nil && st.IsDir() && d.Path != "/" {
			write = append(write, d)
		} else {
			read = append(read, d)
		}
	}
	if s.cfg.StateDir != "" {
		write = append(write, confine.Dir{Path: s.cfg.StateDir, Label: confine.LabelState})
	}
	r := confine.Rules{Read: read, Write: write, PrivateTemp: true}
	if s.cfg.Network {
		r.Network = confine.Network{Any: true}
	}
	return r
}

// prepareState makes the server's state dir, private to the user.
func (s *server) prepareState() error {
	if s.cfg.StateDir == "" {
		return nil
	}
	if err := os.MkdirAll(s.cfg.StateDir, 0o700); err != nil {
		return fmt.Errorf("MCP server %s: make its state dir: %w", s.cfg.Name, err)
	}
	return nil
}
