package codex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"time"
	"unicode/utf8"

	"agenthub/backend"
	"agenthub/backend/proc"
)

// binary is the resolved CLI.
type binary struct {
	Path    string // absolute native binary; never shown
	Version string
	SHA256  string
}

// Drift reports whether the binary is another version than the tested one.
func (b binary) Drift() bool { return b.Version != TestedVersion }

// versionTimeout bounds `codex --version`.
const versionTimeout = 20 * time.Second

// resolve finds the CLI, asks its version and hashes it. A missing or
// broken CLI is runtime_unavailable with the install step.
func (c Config) resolve(ctx context.Context) (binary, error) {
	path := proc.LoginPath(ctx)
	bin, err := c.find(path)
	if err != nil {
		return binary{}, err
	}
	if err := os.MkdirAll(c.home(), 0o700); err != nil {
		return binary{}, fmt.Errorf("prepare the Codex home: %w", err)
	}
	res, err := proc.Output(ctx, proc.Spec{Path: bin, Args: []string{"--version"}, Dir: c.home(),
		Env: c.environ(path), Timeout: versionTimeout, MaxOutput: 64 << 10})
	version := versionRE.FindString(string(res.Stdout))
	if err != nil || res.ExitCode != 0 || version == "" {
		return binary{}, &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "version",
			Message: "the Codex CLI did not report its version (`codex --version` failed); reinstall it with: " + InstallHint,
			Err:     err}
	}
	sum, err := hashFile(bin)
	if err != nil {
		return binary{}, fmt.Errorf("hash the Codex binary: %w", err)
	}
	return binary{Path: bin, Version: version, SHA256: sum}, nil
}

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+`)

// find resolves the profile's command to the executable to start.
func (c Config) find(path string) (string, error) {
	cmd := c.Command
	if cmd == "" {
		cmd = "codex"
	}
	missing := &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "not_installed",
		Message: "the Codex CLI is not installed: no `" + filepath.Base(cmd) + "` on the login shell's PATH. Install it with: " + InstallHint}
	if !filepath.IsAbs(cmd) {
		bin, err := proc.Look(cmd, path)
		if err != nil {
			return "", missing
		}
		cmd = bin
	} else if fi, err := os.Stat(cmd); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		missing.Message = "the Codex CLI is not installed at the profile's command. Install it with: " + InstallHint
		return "", missing
	}
	return native(cmd)
}

// npmTargets maps GOOS/GOARCH to the target triple and platform package the
// npm package ships its native binary in.
var npmTargets = map[string][2]string{
	"linux/amd64":  {"x86_64-unknown-linux-musl", "codex-linux-x64"},
	"linux/arm64":  {"aarch64-unknown-linux-musl", "codex-linux-arm64"},
	"darwin/amd64": {"x86_64-apple-darwin", "codex-darwin-x64"},
	"darwin/arm64": {"aarch64-apple-darwin", "codex-darwin-arm64"},
}

// native returns the native binary a command starts. The npm package's
// `codex` is a Node script (bin/codex.js) that starts the binary of a
// platform package installed beside it; AgentHub starts that binary itself,
// so signals reach it directly, no Node process sits in between, and the
// hash recorded is that of the code that runs. Anything else is returned
// as it is.
func native(cmd string) (string, error) {
	real, err := filepath.EvalSymlinks(cmd)
	if err != nil {
		return cmd, nil // not a link that resolves: start it as named
	}
	if filepath.Base(real) != "codex.js" || filepath.Base(filepath.Dir(real)) != "bin" {
		return real, nil
	}
	pkg := filepath.Dir(filepath.Dir(real)) // …/node_modules/@openai/codex
	t, ok := npmTargets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		return "", &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "platform",
			Message: "the Codex CLI has no native binary for " + runtime.GOOS + "/" + runtime.GOARCH}
	}
	candidates := []string{
		filepath.Join(filepath.Dir(pkg), t[1], "vendor", t[0], "bin", "codex"),              // hoisted
		filepath.Join(pkg, "node_modules", "@openai", t[1], "vendor", t[0], "bin", "codex"), // nested
		filepath.Join(pkg, "vendor", t[0], "bin", "codex"),                                  // bundled
		filepath.Join(pkg, "vendor", t[0], "codex", "codex"),                                // older layout
	}
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "not_installed",
		Message: "the Codex npm package is installed without its native binary (@openai/" + t[1] +
			", an optional dependency). Reinstall it with: " + InstallHint}
}

// hashes caches binary hashes by path, size and modification time: the
// native CLI is about 300 megabytes.
var hashes = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

func hashFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s|%d|%d", path, fi.Size(), fi.ModTime().UnixNano())
	hashes.Lock()
	sum, ok := hashes.m[key]
	hashes.Unlock()
	if ok {
		return sum, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum = hex.EncodeToString(h.Sum(nil))
	hashes.Lock()
	hashes.m[key] = sum
	hashes.Unlock()
	return sum, nil
}

// short is the first 12 hex digits of a hash.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
