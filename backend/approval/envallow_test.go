package approval

import (
	"strings"
	"testing"

	"agenthub/backend"
)

// TestEnvAllowList is the attack of issue 14 item 2: an allowed command
// becomes any command through its environment. Every assignment in front
// of an allowed command must be on the allow-list, else it asks and the
// trace names the variable.
func TestEnvAllowList(t *testing.T) {
	p, err := ParsePolicy([]byte(`version = 1
env = ["MY_FLAG", "MYAPP_*"]

[[shell]]
id = "ls"
prefix = ["ls"]
verdict = "allow"

[[shell]]
id = "git-status"
prefix = ["git", "status"]
verdict = "allow"

[[shell]]
id = "make"
prefix = ["make"]
env = ["CFLAGS"]
verdict = "allow"
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd   string
		env   map[string]string
		want  backend.Verdict
		names string // the variable the trace must name
	}{
		{cmd: "PS4='$(touch pwned)' bash -xc ls", want: backend.Ask, names: "PS4"},
		{cmd: "env PS4='$(touch pwned)' bash -x -c ls", want: backend.Ask, names: "PS4"},
		{cmd: "PS4='$(id)' bash -o xtrace -c ls", want: backend.Ask, names: "PS4"},
		{cmd: "export PS4='$(id)'; bash -xc ls", want: backend.Ask},
		{cmd: "PS4='$(id)'; set -x; ls", want: backend.Ask},
		{cmd: "XDG_CONFIG_HOME=src git status", want: backend.Ask, names: "XDG_CONFIG_HOME"},
		{cmd: "HOME=src git status", want: backend.Ask, names: "HOME"},
		{cmd: "GIT_CONFIG_GLOBAL=src/x git status", want: backend.Ask, names: "GIT_CONFIG_GLOBAL"},
		{cmd: "GIT_DIR=x git status", want: backend.Ask, names: "GIT_DIR"},
		{cmd: "BASH_ENV=x bash -c ls", want: backend.Ask, names: "BASH_ENV"},
		{cmd: "ENV=x sh -c ls", want: backend.Ask, names: "ENV"},
		{cmd: "PATH=./bin ls", want: backend.Ask, names: "PATH"},
		{cmd: "LD_PRELOAD=x.so ls", want: backend.Ask, names: "LD_PRELOAD"},
		{cmd: "PAGER='sh -c id' git status", want: backend.Ask, names: "PAGER"},
		{cmd: "env -i GIT_EXTERNAL_DIFF=x git status", want: backend.Ask, names: "GIT_EXTERNAL_DIFF"},
		{cmd: "sudo env XDG_CONFIG_HOME=src git status", want: backend.Ask},
		{cmd: "git status", env: map[string]string{"HOME": "src"}, want: backend.Ask, names: "HOME"},
		{cmd: "ls", env: map[string]string{"PATH": "./bin"}, want: backend.Ask, names: "PATH"},
		{cmd: "CFLAGS=-O2 ls", want: backend.Ask, names: "CFLAGS"}, // listed on make's rule only
		{cmd: "LANG=C LC_ALL=C TZ=UTC NO_COLOR=1 ls", want: backend.Allow},
		{cmd: "env TERM=dumb CI=1 ls", want: backend.Allow},
		{cmd: "ls", env: map[string]string{"LANG": "C", "TERM": "xterm"}, want: backend.Allow},
		{cmd: "MY_FLAG=1 MYAPP_MODE=x ls", want: backend.Allow},
		{cmd: "CFLAGS=-O2 make", want: backend.Allow},
	}
	for _, tt := range tests {
		r := p.Evaluate(Action{Kind: backend.ActionShell, Command: tt.cmd, Cwd: ".", Env: tt.env})
		if r.Verdict != tt.want {
			t.Errorf("%q (env %v): %s by %s (%s), want %s", tt.cmd, tt.env, r.Verdict, r.RuleID, r.Reason, tt.want)
			continue
		}
		if tt.names == "" {
			continue
		}
		named := false
		for _, s := range r.Trace {
			named = named || (s.Matched && s.Verdict == backend.Ask && strings.Contains(s.Rule, "environment variable "+tt.names+" "))
		}
		if !named {
			t.Errorf("%q: no trace step names %s: %+v", tt.cmd, tt.names, r.Trace)
		}
	}
}

func TestEnvListValidation(t *testing.T) {
	for _, bad := range []string{`env = ["A B"]`, `env = ["*"]`, `env = ["1X"]`, `env = ["A*"]`} {
		if _, err := ParsePolicy([]byte("version = 1\n" + bad + "\n")); err == nil {
			t.Errorf("ParsePolicy accepted %s", bad)
		}
	}
	over := &Policy{Env: []string{"PS4"}}
	if err := over.ValidateOverrides(); err == nil {
		t.Error("a profile override may widen the environment allow-list")
	}
}

// TestGrantNeverCoversUnlistedEnv: a run grant for a command does not
// cover it with a variable the allow-list lacks, whether the command sets
// it or the tool's env argument does.
func TestGrantNeverCoversUnlistedEnv(t *testing.T) {
	g, err := GrantPattern(Action{Kind: backend.ActionShell, Command: "git status", Cwd: "."})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []Action{
		{Kind: backend.ActionShell, Command: "git status", Cwd: ".", Env: map[string]string{"HOME": "src"}},
		{Kind: backend.ActionShell, Command: "XDG_CONFIG_HOME=src git status", Cwd: "."},
		{Kind: backend.ActionShell, Command: "env PS4=x git status", Cwd: "."},
	} {
		if g.Covers(a) {
			t.Errorf("grant %s covers %q with env %v", g.Preview(), a.Command, a.Env)
		}
		if _, err := GrantPattern(a); err == nil {
			t.Errorf("a grant is offered for %q with env %v", a.Command, a.Env)
		}
	}
	if !g.Covers(Action{Kind: backend.ActionShell, Command: "LANG=C git status", Cwd: "."}) {
		t.Error("the grant does not cover its command with a listed variable")
	}
}
