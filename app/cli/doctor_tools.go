package cli

import (
	"context"
	"strings"
	"time"

	"agenthub/backend/proc"
	"agenthub/backend/runtime"
	_ "agenthub/backend/runtime/all" // every runtime's adapter
)

// versionTimeout bounds `<cli> --version`: Node-based CLIs take a second or
// two to start, and doctor must not hang on a broken install.
const versionTimeout = 15 * time.Second

// toolChecks look for git and every registered runtime's CLI on the login
// shell's PATH, the one a desktop launch uses too (see proc.LoginPath),
// each with its adapter's install hint, pinned to the version it was
// tested with.
func toolChecks(ctx context.Context, e *Env) []check {
	path := proc.CaptureLoginPath(ctx, e.Getenv("SHELL"), e.Getenv("PATH"))
	env := []string{"PATH=" + path, "HOME=" + e.Getenv("HOME")}
	out := []check{versionCheck(ctx, "git", "git", path, env, "install git with your package manager (e.g. sudo apt-get install git)")}
	for _, a := range runtime.All() {
		if b := a.Binary(); b != nil {
			out = append(out, versionCheck(ctx, b.Label, b.Program, path, env, b.Install+", then sign in once in a terminal"))
		}
	}
	out = append(out, chromiumCheck()) // doctor_chromium.go
	return out
}

func versionCheck(ctx context.Context, label, name, path string, env []string, fix string) check {
	c := check{name: label, optional: true, fix: fix}
	bin, err := proc.Look(name, path)
	if err != nil {
		c.detail = name + " not found on the login shell's PATH"
		return c
	}
	res, err := proc.Output(ctx, proc.Spec{Path: bin, Args: []string{"--version"}, Env: env, Timeout: versionTimeout, MaxOutput: 4096})
	if err != nil || res.ExitCode != 0 {
		c.detail = name + " found but `" + name + " --version` failed"
		c.fix = "reinstall it: " + fix
		return c
	}
	c.ok = true
	c.detail = firstLine(string(res.Stdout))
	return c
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
