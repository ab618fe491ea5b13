package git

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// Runner runs the git binary: args in dir, with exactly env as its
// environment, returning what it printed on standard output. A missing
// binary, a non-zero exit or output cut short must be an error. This package
// never starts processes itself (backend/proc is the one package that does),
// so whoever may start them passes a Runner in.
type Runner func(ctx context.Context, dir string, env, args []string) ([]byte, error)

// cliTimeout bounds one CLI status; past it [Repo.Status] falls back to go-git
// (a variable for the tests). The git CLI blocks in open(2) on a FIFO where a
// .gitignore is expected; go-git, which AgentHub opens non-blocking, does not.
var cliTimeout = 2 * time.Minute

var defaultRunner atomic.Pointer[Runner]

// SetRunner makes [Status] and [Repo.Status] ask the git CLI for candidate
// paths through run (nil: go-git only). It is set once, at start-up, by the
// package that owns process starting; tests call [Repo.StatusCLI] and
// [Repo.StatusGoGit] directly instead.
func SetRunner(run Runner) {
	if run == nil {
		defaultRunner.Store(nil)
		return
	}
	defaultRunner.Store(&run)
}

func currentRunner() Runner {
	if p := defaultRunner.Load(); p != nil {
		return *p
	}
	return nil
}

// statusArgs asks for the machine format with the base commit, every
// untracked file (not just directories), renames as a deletion plus an
// addition (per-path, as go-git sees them) and submodules left out. The -c
// options override user configuration that would start something: an
// fsmonitor hook or daemon. The user's excludes file and core.fileMode still
// apply, as they do in go-git's engine.
var statusArgs = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.quotePath=false",
	"status", "--porcelain=v2", "-z", "--branch", "--no-ahead-behind",
	"--untracked-files=all", "--no-renames", "--ignore-submodules=all", "--ignored=no",
}

// CLIEnv is the environment a status runs git with: the caller's, minus
// every GIT_* variable (GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE or
// GIT_CONFIG_PARAMETERS inherited from a parent git would point the command
// at something else), plus GIT_OPTIONAL_LOCKS=0 so git never rewrites the
// index to refresh its stat cache, no pager, no prompt, and no replace refs
// (go-git reads HEAD's tree as it is).
func CLIEnv(environ []string) []string {
	out := make([]string, 0, len(environ)+5)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(name), "GIT_") || strings.EqualFold(name, "LC_ALL") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1", "LC_ALL=C")
}

// StatusCLI is [Repo.Status] with the candidate paths from
// `git status --porcelain=v2 -z` run through run. It fails, rather than
// guess, when git fails, prints something it does not understand, or HEAD
// moves while it runs.
func (r *Repo) StatusCLI(ctx context.Context, run Runner, maxFiles int) (Report, error) {
	base, branch, err := r.Base()
	if err != nil {
		return Report{}, err
	}
	out, err := run(ctx, r.root, CLIEnv(os.Environ()), statusArgs)
	if err != nil {
		return Report{}, fmt.Errorf("git status: %w", err)
	}
	pc, err := parsePorcelainV2(out)
	if err != nil {
		return Report{}, fmt.Errorf("git status: %w", err)
	}
	if pc.oid != base {
		return Report{}, fmt.Errorf("git status: HEAD moved while it ran (%.12s, then %.12s)", base, pc.oid)
	}
	heads := r.heads(base)
	return r.report(base, branch, heads, pc.files, maxFiles)
}
