// Package agentbin finds an agent CLI's program, asks its version and
// hashes it, so that every run records exactly which CLI ran and warns
// when it is not the version its adapter was tested with (AD4). A missing
// or broken CLI is runtime_unavailable with the install step; messages name
// the program, never a machine path. It starts nothing but `--version`,
// through backend/proc.
package agentbin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"agenthub/backend"
	"agenthub/backend/proc"
)

// Info is a resolved agent program.
type Info struct {
	Path    string // absolute; never shown
	Version string // as the program reports it
	SHA256  string // of the program file, symlinks resolved
	Tested  string // the version the adapter was tested with
}

// Drift reports whether the program is another version than the tested one.
func (b Info) Drift() bool { return b.Version != b.Tested }

// CLI names an agent CLI in what users see.
type CLI struct {
	Label string // starts a message: "Claude Code", "the Codex CLI"
	Name  string // the command when the profile names none: "claude"
	Hint  string // the install step
}

// Find resolves a profile's command: a name is looked up on path (the
// login shell's PATH); an absolute path must be an executable file.
func (c CLI) Find(cmd, path string) (string, error) {
	if cmd == "" {
		cmd = c.Name
	}
	missing := &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "not_installed",
		Message: c.Label + " is not installed: no `" + filepath.Base(cmd) + "` on the login shell's PATH",
		Next:    "Install it with: " + c.Hint}
	if !filepath.IsAbs(cmd) {
		bin, err := proc.Look(cmd, path)
		if err != nil {
			return "", missing
		}
		return bin, nil
	}
	if !Executable(cmd) {
		missing.Message = c.Label + " is not installed at the profile's command"
		return "", missing
	}
	return cmd, nil
}

// Executable reports whether path is a regular file someone may execute.
func Executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// versionTimeout bounds `<cli> --version`.
const versionTimeout = 20 * time.Second

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+`)

// Version runs `bin --version` in dir with env and returns the first
// x.y.z it prints.
func (c CLI) Version(ctx context.Context, bin, dir string, env []string) (string, error) {
	res, err := proc.Output(ctx, proc.Spec{Path: bin, Args: []string{"--version"}, Dir: dir, Env: env,
		Timeout: versionTimeout, MaxOutput: 64 << 10})
	version := versionRE.FindString(string(res.Stdout))
	if err != nil || res.ExitCode != 0 || version == "" {
		return "", &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "version",
			Message: c.Label + " did not report its version (`" + c.Name + " --version` failed)",
			Next:    "Reinstall it with: " + c.Hint, Err: err}
	}
	return version, nil
}

// DriftWarning is the warning for a program of another version than the
// tested one, or, when tested is "", one its adapter was never tested
// with; "" when version is the tested one. name is how the warning calls
// it ("Codex").
func DriftWarning(name, version, tested, hint string) string {
	switch {
	case tested == "":
		return fmt.Sprintf("warning: AgentHub was not tested with %s %s; its output may not be understood",
			name, version)
	case version != tested:
		return fmt.Sprintf("warning: this is %s %s, but AgentHub was tested with %s; its output may not be "+
			"understood (install the tested version: %s)", name, version, tested, hint)
	}
	return ""
}
