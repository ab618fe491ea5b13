package approval

import (
	"path"
	"strings"

	"agenthub/backend"
)

// readOnlyCommands are commands that only read files and print (issue 21:
// `git status --short` was "medium risk" with the banner of any command).
// A command is in the class only as written here: its own words, no
// redirection, no variable in front, nothing dynamic, no network. The
// class lowers the risk label an approval shows; the verdict stays the
// policy's (a read-only command still asks unless a rule allows it).
var readOnlyCommands = map[string]bool{
	"ls": true, "pwd": true, "cat": true, "head": true, "tail": true, "wc": true, "grep": true, "egrep": true,
	"fgrep": true, "stat": true, "file": true, "tree": true, "du": true, "df": true, "echo": true, "which": true,
	"whoami": true, "date": true, "basename": true, "dirname": true, "realpath": true, "diff": true, "cmp": true,
	"md5sum": true, "sha256sum": true, "sha1sum": true, "uname": true, "true": true,
}

// readOnlyGit are git subcommands that only read the repository, named
// right after git (a global option such as -c could run a program).
var readOnlyGit = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "rev-parse": true, "ls-files": true, "blame": true,
	"describe": true, "shortlog": true, "cat-file": true, "ls-tree": true,
}

// writingOptions are options with which a read-only command writes a file
// or runs a program.
var writingOptions = []string{"--output", "-o", "--ext-diff", "--textconv", "--exec", "--pre", "-exec", "-delete"}

// ReadOnly reports whether a shell action only reads: every part of the
// command line is a read-only command as [readOnlyCommands] and
// [readOnlyGit] name them, with literal words, no redirection, no
// environment assignment, no elevation and no network.
func ReadOnly(a Action) bool {
	if a.Kind != backend.ActionShell || a.Network || len(a.Env) > 0 {
		return false
	}
	parsed := ParseShell(a.commandLine())
	if parsed.Unsupported != "" || len(parsed.Parts) == 0 {
		return false
	}
	for _, p := range parsed.Parts {
		if !readOnlyPart(p) {
			return false
		}
	}
	return true
}

func readOnlyPart(p Part) bool {
	if len(p.Argv) == 0 || p.Dynamic || p.Redirect || len(p.Outputs) > 0 || p.Elevated || p.Opaque != "" ||
		len(p.Env) > 0 || len(p.Wrappers) > 0 {
		return false
	}
	for _, w := range p.Argv[1:] {
		for _, o := range writingOptions {
			if w == o || strings.HasPrefix(w, o+"=") {
				return false
			}
		}
		if secret, _ := SecretPath(w); secret {
			return false
		}
	}
	name := path.Base(p.Argv[0])
	if name != p.Argv[0] { // a path (./ls) may be anything
		return false
	}
	if name == "git" {
		return len(p.Argv) > 1 && readOnlyGit[p.Argv[1]]
	}
	return readOnlyCommands[name]
}
