package approval

import (
	"fmt"
	"regexp"
	"strings"
)

// SafeEnv is the built-in allow-list of environment variables a command
// under an allow rule may set in front of itself (NAME=value cmd, env
// NAME=value cmd, export NAME=…, or the tool's own env argument): they
// change how output looks, never what runs. A name ending in "_*" allows
// the prefix. Anything else (PS4, BASH_ENV, HOME, XDG_CONFIG_HOME, PATH,
// GIT_*, LD_*, NODE_OPTIONS…) can make the allowed command run another
// one, so the command asks, naming the variable. A deny-list is never
// complete (issue 14 item 2); this list only grows by the policy's own
// `env` (file-wide, or on one shell rule).
var SafeEnv = []string{
	"LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
	"CLICOLOR_FORCE", "COLUMNS", "LINES", "CI", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
	"RUST_BACKTRACE", "GOTRACEBACK",
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(_\*)?$`)

func validEnvNames(names []string) error {
	for _, n := range names {
		if !envNameRE.MatchString(n) {
			return fmt.Errorf("env: %q is not a variable name (NAME, or PREFIX_* for a prefix)", n)
		}
	}
	return nil
}

// envListed reports whether name is on one of the lists.
func envListed(name string, lists ...[]string) bool {
	for _, list := range lists {
		for _, pat := range list {
			if pre, ok := strings.CutSuffix(pat, "*"); ok {
				if strings.HasPrefix(name, pre) {
					return true
				}
			} else if pat == name {
				return true
			}
		}
	}
	return false
}
