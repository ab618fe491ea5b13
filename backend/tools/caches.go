package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

// A confined command writes only the workspace and its private temp dir,
// so the build tools' default caches under HOME (~/.cache/go-build,
// ~/go/pkg/mod, ~/.npm, ~/.cache/pip) are out of its reach and `go build`
// or `npm ci` fail. Each workspace gets caches of its own instead, in
// AgentHub's data directory beside the checkpoints, never inside the
// workspace: one workspace's commands cannot poison another's cache, and
// what they cache survives from one command to the next.

// cacheVars are the variables that move each tool's cache, with the
// subdirectory of the workspace's cache dir each gets.
var cacheVars = []struct{ name, sub string }{
	{"GOCACHE", "go-build"},
	{"GOMODCACHE", "go-mod"},
	{"npm_config_cache", "npm"},
	{"YARN_CACHE_FOLDER", "yarn"},
	{"PIP_CACHE_DIR", "pip"},
	{"XDG_CACHE_HOME", "xdg"},
}

// cacheRoot is where the workspaces' caches live: beside the checkpoint
// store, in the data directory; "" without one.
func cacheRoot(cfg Config) string {
	if cfg.CheckpointDir == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(cfg.CheckpointDir), "cache")
}

// cacheID is what a workspace id must look like to name a directory.
var cacheID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// workspaceCaches is one workspace's cache dir, "" when there is no root or
// the id cannot name a directory.
func workspaceCaches(root, workspaceID string) string {
	if root == "" || !cacheID.MatchString(workspaceID) {
		return ""
	}
	return filepath.Join(root, workspaceID)
}

// cacheEnv points the build tools' caches into the workspace's cache dir.
func (sh Shell) cacheEnv() []string {
	if sh.Caches == "" {
		return nil
	}
	out := make([]string, 0, len(cacheVars))
	for _, v := range cacheVars {
		out = append(out, v.name+"="+filepath.Join(sh.Caches, v.sub))
	}
	return out
}

// makeCaches creates the workspace's cache dir, private to the user.
func (sh Shell) makeCaches() error {
	if sh.Caches == "" {
		return nil
	}
	if err := os.MkdirAll(sh.Caches, 0o700); err != nil {
		return fmt.Errorf("the workspace's build caches: %w", err)
	}
	return nil
}

// envNames are the names of the command's environment, for the preview.
func (sh Shell) envNames() []string {
	names := slices.Clone(shellEnvNames)
	for _, v := range cacheVars {
		if sh.Caches != "" {
			names = append(names, v.name)
		}
	}
	return names
}
