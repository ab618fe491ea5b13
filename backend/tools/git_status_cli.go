package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"

	"agenthub/backend/proc"
	"agenthub/workspace/git"
)

// The git tools read status through workspace/git, which prefers the git
// CLI (several times faster than go-git on a large tree) but may not start
// processes. Installing the runner here, where the tools that need it live,
// gives every binary with the tools the fast path; without git installed,
// workspace/git falls back to go-git.
func init() { git.SetRunner(runGit) }

// maxGitOutput bounds what a status may print; a bigger one is cut, which
// runGit reports as an error, so go-git answers instead of a partial list.
const maxGitOutput = 64 << 20

// gitBinary finds git once per process: on this process's PATH, else on the
// login shell's (an app started from a desktop menu inherits a minimal PATH).
var gitBinary = sync.OnceValues(func() (string, error) {
	if bin, err := proc.Look("git", os.Getenv("PATH")); err == nil {
		return bin, nil
	}
	return proc.Look("git", proc.LoginPath(context.Background()))
})

// runGit is the [git.Runner]: git in its own process group through
// backend/proc, stopped with its children when ctx ends.
func runGit(ctx context.Context, dir string, env, args []string) ([]byte, error) {
	bin, err := gitBinary()
	if err != nil {
		return nil, fmt.Errorf("find git: %w", err)
	}
	res, err := proc.Output(ctx, proc.Spec{Path: bin, Args: args, Dir: dir, Env: env, MaxOutput: maxGitOutput})
	switch {
	case err != nil:
		return nil, fmt.Errorf("run git: %w", err)
	case res.ExitCode != 0:
		return nil, fmt.Errorf("git exited with status %d: %s", res.ExitCode, stderrLine(res.Stderr))
	case res.StdoutDropped > 0:
		return nil, fmt.Errorf("git printed more than %d bytes", maxGitOutput)
	}
	return res.Stdout, nil
}

// stderrLine is the first line git printed on standard error: its message.
func stderrLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
