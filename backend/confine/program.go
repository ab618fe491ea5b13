package confine

import (
	"os"
	"path/filepath"
	"strings"
)

// InstallDirs are the directories a configured program needs to read: where
// it is linked from and where it really lives, up to the node_modules
// directory of an npm package (its dependencies and native binaries).
// Agent CLIs and MCP servers share it.
func InstallDirs(path string) []Dir {
	out := []Dir{{Path: filepath.Dir(path), Label: LabelInstall}}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return out
	}
	dir := filepath.Dir(real)
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if filepath.Base(d) == "node_modules" {
			dir = d
			break
		}
	}
	return append(out, Dir{Path: dir, Label: LabelInstall})
}

// ArgumentPaths are the existing files and directories a program's own
// command line names by absolute path (a profile's command = ["agent",
// "--config", "/…/agent.json"], an MCP server's root directory): the user's
// configuration, not the model's choice. They carry label.
func ArgumentPaths(args []string, label string) []Dir {
	var out []Dir
	for _, a := range args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		if !filepath.IsAbs(a) {
			continue
		}
		if _, err := os.Stat(a); err == nil {
			out = append(out, Dir{Path: filepath.Clean(a), Label: label})
		}
	}
	return out
}
