package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// loginPathTimeout bounds the login shell: a slow rc file must not stall
// start-up.
const loginPathTimeout = 5 * time.Second

// pathMarker frames the PATH in the shell's output, so that whatever rc
// files print around it is ignored.
const pathMarker = "__AGENTHUB_PATH__"

var (
	loginOnce sync.Once
	loginPath string
)

// LoginPath is the PATH of the user's login shell, captured once per
// process. An app started from a desktop menu inherits a minimal PATH that
// misses CLIs installed through nvm, npm or Homebrew; the login shell's PATH
// has them. It falls back to this process's PATH.
func LoginPath(ctx context.Context) string {
	loginOnce.Do(func() {
		loginPath = CaptureLoginPath(ctx, os.Getenv("SHELL"), os.Getenv("PATH"))
	})
	return loginPath
}

// CaptureLoginPath asks shell, as a login shell, for its PATH and merges it
// before fallback (deduplicated, order kept).
func CaptureLoginPath(ctx context.Context, shell, fallback string) string {
	if shell == "" || !filepath.IsAbs(shell) {
		return fallback
	}
	env := []string{"HOME=" + os.Getenv("HOME"), "USER=" + os.Getenv("USER"), "PATH=" + fallback, "TERM=dumb"}
	res, err := Output(ctx, Spec{Path: shell, Args: []string{"-l", "-c", `printf '%s%s%s' "` + pathMarker + `" "$PATH" "` + pathMarker + `"`},
		Env: env, Timeout: loginPathTimeout, MaxOutput: 64 << 10})
	if err != nil || res.ExitCode != 0 {
		return fallback
	}
	parts := strings.Split(string(res.Stdout), pathMarker)
	if len(parts) < 3 {
		return fallback
	}
	return mergePath(parts[1], fallback)
}

func mergePath(first, second string) string {
	seen := map[string]bool{}
	var out []string
	for _, dir := range filepath.SplitList(first + string(os.PathListSeparator) + second) {
		if dir != "" && !seen[dir] {
			seen[dir] = true
			out = append(out, dir)
		}
	}
	return strings.Join(out, string(os.PathListSeparator))
}

// ErrNotFound reports that a command is on none of the PATH's directories.
var ErrNotFound = errors.New("executable not found")

// Look finds name in the directories of path, like a shell would.
func Look(name, path string) (string, error) {
	if strings.ContainsRune(name, os.PathSeparator) {
		return "", errors.New("look up " + name + ": a command name, not a path")
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrNotFound
}
