package approval

import (
	"path"
	"strings"

	"agenthub/backend"
)

// subcommandKinds maps a command to the subcommands that publish or deploy.
// An empty subcommand list means the command itself is the action.
var subcommandKinds = map[string]struct {
	kind backend.ActionKind
	subs []string
}{
	"npm":        {backend.ActionPublish, []string{"publish"}},
	"yarn":       {backend.ActionPublish, []string{"publish", "npm"}},
	"pnpm":       {backend.ActionPublish, []string{"publish"}},
	"bun":        {backend.ActionPublish, []string{"publish"}},
	"cargo":      {backend.ActionPublish, []string{"publish"}},
	"gem":        {backend.ActionPublish, []string{"push"}},
	"twine":      {backend.ActionPublish, []string{"upload"}},
	"poetry":     {backend.ActionPublish, []string{"publish"}},
	"docker":     {backend.ActionPublish, []string{"push"}},
	"podman":     {backend.ActionPublish, []string{"push"}},
	"goreleaser": {backend.ActionPublish, nil},
	"gh":         {backend.ActionPublish, []string{"release"}},
	"kubectl":    {backend.ActionDeploy, []string{"apply", "create", "delete", "replace", "rollout", "scale", "set", "patch"}},
	"helm":       {backend.ActionDeploy, []string{"install", "upgrade", "uninstall", "rollback"}},
	"terraform":  {backend.ActionDeploy, []string{"apply", "destroy", "import"}},
	"tofu":       {backend.ActionDeploy, []string{"apply", "destroy", "import"}},
	"pulumi":     {backend.ActionDeploy, []string{"up", "destroy"}},
	"vercel":     {backend.ActionDeploy, nil},
	"netlify":    {backend.ActionDeploy, []string{"deploy"}},
	"fly":        {backend.ActionDeploy, []string{"deploy"}},
	"flyctl":     {backend.ActionDeploy, []string{"deploy"}},
	"firebase":   {backend.ActionDeploy, []string{"deploy"}},
	"wrangler":   {backend.ActionDeploy, []string{"deploy", "publish"}},
	"serverless": {backend.ActionDeploy, []string{"deploy"}},
	"sls":        {backend.ActionDeploy, []string{"deploy"}},
	"cdk":        {backend.ActionDeploy, []string{"deploy", "destroy"}},
	"mvn":        {backend.ActionDeploy, []string{"deploy"}},
}

// classify finds the action a simple command really performs: git push and
// git commit, publishing and deploying. A subcommand that is dynamic (or fed
// by xargs) is assumed to be the most dangerous one (fail closed).
func classify(part Part) backend.ActionKind {
	if len(part.Argv) == 0 || part.dyn[0] {
		return backend.ActionShell
	}
	name := path.Base(part.Argv[0])
	if name == "git" {
		return gitKind(part)
	}
	entry, ok := subcommandKinds[name]
	if !ok {
		if hasWord(part, "deploy") && (name == "gcloud" || name == "aws" || name == "az" || name == "heroku") {
			return backend.ActionDeploy
		}
		return backend.ActionShell
	}
	if len(entry.subs) == 0 {
		return entry.kind
	}
	i := firstArg(part.Argv)
	if i < 0 {
		if part.Dynamic {
			return entry.kind
		}
		return backend.ActionShell
	}
	if part.dyn[i] {
		return entry.kind
	}
	for _, s := range entry.subs {
		if part.Argv[i] == s {
			return entry.kind
		}
	}
	return backend.ActionShell
}

func hasWord(part Part, w string) bool {
	for _, a := range part.Argv[1:] {
		if a == w {
			return true
		}
	}
	return false
}

// firstArg is the index of the first word after argv[0] that is not an
// option, or -1.
func firstArg(argv []string) int {
	for i := 1; i < len(argv); i++ {
		if !strings.HasPrefix(argv[i], "-") {
			return i
		}
	}
	return -1
}

func gitKind(part Part) backend.ActionKind {
	i := gitSubIndex(part.Argv)
	if i < 0 {
		if part.Dynamic {
			return backend.ActionPush
		}
		return backend.ActionShell
	}
	if part.dyn[i] || gitAliasDefined(part.Argv[:i]) {
		return backend.ActionPush
	}
	switch part.Argv[i] {
	case "push":
		return backend.ActionPush
	case "commit":
		return backend.ActionCommit
	}
	return backend.ActionShell
}

// gitSubIndex skips git's global options and returns the subcommand index.
func gitSubIndex(argv []string) int {
	for i := 1; i < len(argv); i++ {
		w := argv[i]
		switch {
		case w == "-C" || w == "-c" || w == "--git-dir" || w == "--work-tree" || w == "--namespace" ||
			w == "--config-env":
			i++
		case strings.HasPrefix(w, "-"):
		default:
			return i
		}
	}
	return -1
}

// gitAliasDefined reports an alias set on the command line (git -c
// alias.p=push p), which hides the real subcommand.
func gitAliasDefined(global []string) bool {
	for _, w := range global {
		if strings.HasPrefix(strings.ToLower(w), "alias.") {
			return true
		}
	}
	return false
}

// gitSubcommand returns git's subcommand word, or "".
func gitSubcommand(argv []string) string {
	if i := gitSubIndex(argv); i >= 0 {
		return argv[i]
	}
	return ""
}
