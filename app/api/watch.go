package api

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"agenthub/backend/approval"
)

// watchEvery is how often the run owner looks at the files the window shows
// live. Polling a handful of stat calls is cheaper than it sounds, needs no
// platform notifier, and also sees a folder on a network mount vanish.
var watchEvery = time.Second

// watchFiles makes edits made outside AgentHub (an editor, a git checkout,
// rm -rf) show in every window and tab without a restart (issue 21): the
// profiles directory (reloaded, then system.changed "profiles"), each
// workspace's policy files (system.changed "policy") and the workspace
// folders themselves (system.changed "workspaces" when one goes missing or
// comes back). Only the run owner watches: it is the process whose profiles
// start runs, and its stream reaches every surface.
func (c *Core) watchFiles() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.stopWatch = func() {
		cancel()
		<-done
	}
	profiles := c.profilesSignature()
	policy, folders := c.workspaceSignatures(ctx)
	go func() {
		defer close(done)
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if sig := c.profilesSignature(); sig != profiles {
				profiles = sig
				c.loadProfiles()
				c.changed("profiles")
			}
			p, f := c.workspaceSignatures(ctx)
			if p != policy {
				policy = p
				c.changed("policy")
			}
			if f != folders {
				folders = f
				c.changed("workspaces")
			}
		}
	}()
}

// profilesSignature names every file of the profiles directory (profiles
// and the playbooks beside them) with its size and time, so any edit,
// addition or removal changes it.
func (c *Core) profilesSignature() string {
	return dirSig(filepath.Join(c.cfg.Home, ProfilesDir))
}

// workspaceSignatures are the policy files of every workspace (in the data
// directory and in the repository) and which workspace folders exist.
func (c *Core) workspaceSignatures(ctx context.Context) (policy, folders string) {
	list, err := c.store.Workspaces(ctx)
	if err != nil {
		return "", "" // a closing store: the next tick (or none) decides
	}
	var p, f strings.Builder
	p.WriteString(dirSig(filepath.Join(c.cfg.Home, "policy")))
	for _, ws := range list {
		p.WriteString(statSig(filepath.Join(ws.Path, filepath.FromSlash(approval.PolicyPath))))
		fmt.Fprintf(&f, "%s:%t\n", ws.ID, dirMissing(ws.Path))
	}
	return p.String(), f.String()
}

// statSig is a file's name, size and modification time, or its absence.
func statSig(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return path + ":-\n"
	}
	return fmt.Sprintf("%s:%d:%d\n", path, fi.Size(), fi.ModTime().UnixNano())
}

// dirSig is the signature of every file directly in dir.
func dirSig(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		b.WriteString(statSig(f))
	}
	return b.String()
}
