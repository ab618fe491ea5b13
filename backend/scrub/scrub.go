// Package scrub makes text an agent CLI produced fit to show and record:
// the workspace root (in both spellings) becomes ".", the home directory
// "~", known secrets are redacted, and length is bounded on a rune
// boundary. Messages users see never carry a machine path or a secret
// (style.md: errors); every runtime adapter passes the CLI's text through
// here. It reads the file system only to resolve the root's symlinks.
package scrub

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"agenthub/backend"
	"agenthub/backend/redact"
	"agenthub/workspace"
)

// Home is the user's home directory, "" when unknown.
func Home() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}

// Paths rewrites the workspace root (both spellings) to "." and the home
// directory to "~".
func Paths(root, text string) string {
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		text = workspace.Scrub(text, real, "")
	}
	return workspace.Scrub(text, root, Home())
}

// Failure is a tool error the engine (and the transcript) sees, its paths
// scrubbed.
func Failure(root, format string, args ...any) backend.ToolResult {
	return backend.ToolResult{Content: Paths(root, fmt.Sprintf(format, args...)), IsError: true}
}

// Session scrubs what one session's CLI printed.
type Session struct {
	Root     string           // the workspace root, as the run names it
	RealRoot string           // the root with symlinks resolved, as CLIs report their cwd
	Dirs     []string         // AgentHub's own directories of the runtime, also rewritten
	Red      *redact.Redactor // the secrets of the CLI's environment; nil redacts nothing
}

// String removes machine paths and secrets from text.
func (s Session) String(text string) string {
	if s.RealRoot != "" && s.RealRoot != s.Root {
		text = workspace.Scrub(text, s.RealRoot, "")
	}
	text = workspace.Scrub(text, s.Root, Home())
	for _, d := range s.Dirs {
		if d != "" {
			text = workspace.Scrub(text, d, "")
		}
	}
	if s.Red == nil {
		return text
	}
	return s.Red.String(text)
}

// Clip cuts s to at most n bytes, on a rune boundary, marked when cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }

// FirstLine is the first line of s, at most n bytes, marked when cut.
func FirstLine(s string, n int) string {
	line, _, more := strings.Cut(s, "\n")
	if more {
		return Clip(line, n) + " …"
	}
	return Clip(line, n)
}

// LastLines is the last n non-empty lines of s.
func LastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.TrimSpace(strings.Join(ls, "\n"))
}

// Short is the first 12 hex digits of a hash.
func Short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
