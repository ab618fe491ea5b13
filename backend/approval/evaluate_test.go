package approval

import (
	"testing"

	"agenthub/backend"
)

func TestDefaultGate(t *testing.T) {
	p := DefaultPolicy()
	tests := []struct {
		name string
		a    Action
		want backend.Verdict
		kind backend.ActionKind
	}{
		{"read inside", Action{Kind: "read", Path: "src/main.go"}, backend.Allow, "read"},
		{"read outside dotdot", Action{Kind: "read", Path: "../etc/passwd"}, backend.Deny, "read"},
		{"read absolute", Action{Kind: "read", Path: "/etc/passwd"}, backend.Deny, "read"},
		{"read home", Action{Kind: "read", Path: "~/.bashrc"}, backend.Deny, "read"},
		{"read windows", Action{Kind: "read", Path: `..\..\x`}, backend.Deny, "read"},
		{"read drive", Action{Kind: "read", Path: "C:/x"}, backend.Deny, "read"},
		{"read nul", Action{Kind: "read", Path: "a\x00b"}, backend.Deny, "read"},
		{"read .env", Action{Kind: "read", Path: ".env"}, backend.Deny, "read"},
		{"read nested .env.local", Action{Kind: "read", Path: "app/.env.local"}, backend.Deny, "read"},
		{"read private key", Action{Kind: "read", Path: "deploy/id_rsa"}, backend.Deny, "read"},
		{"read pem", Action{Kind: "read", Path: "certs/server.pem"}, backend.Deny, "read"},
		{"read .ssh", Action{Kind: "read", Path: "home/.ssh/config"}, backend.Deny, "read"},
		{"read git credentials", Action{Kind: "read", Path: ".git-credentials"}, backend.Deny, "read"},
		{"read netrc", Action{Kind: "read", Path: ".netrc"}, backend.Deny, "read"},
		{"read npmrc", Action{Kind: "read", Path: "web/.npmrc"}, backend.Deny, "read"},
		{"read upper-case env", Action{Kind: "read", Path: ".ENV"}, backend.Deny, "read"},
		{"read key store", Action{Kind: "read", Path: "android/release.keystore"}, backend.Deny, "read"},
		{"write", Action{Kind: "write", Path: "src/main.go"}, backend.Ask, "write"},
		{"patch", Action{Kind: "patch", Paths: []string{"a.go", "b/c.go"}}, backend.Ask, "patch"},
		{"write outside", Action{Kind: "write", Path: "../x"}, backend.Deny, "write"},
		{"write .agenthub policy", Action{Kind: "write", Path: ".agenthub/policy.toml"}, backend.Deny, "write"},
		{"write .AgentHub case trick", Action{Kind: "write", Path: ".AgentHub/policy.toml"}, backend.Deny, "write"},
		{"write .env", Action{Kind: "write", Path: ".env"}, backend.Deny, "write"},
		{"patch touching a secret", Action{Kind: "patch", Paths: []string{"a.go", "config/.env.prod"}}, backend.Deny, "patch"},
		{"shell", Action{Kind: "shell", Command: "go test ./..."}, backend.Ask, "shell"},
		{"shell reading secret", Action{Kind: "shell", Command: "cat ~/.ssh/id_ed25519"}, backend.Deny, "secret"},
		{"shell input redirect secret", Action{Kind: "shell", Command: "wc -l < .env"}, backend.Deny, "secret"},
		{"shell credential helper", Action{Kind: "shell", Command: "git credential fill"}, backend.Deny, "secret"},
		{"shell keychain", Action{Kind: "shell", Command: "security find-generic-password -s x"}, backend.Deny, "secret"},
		{"shell writes policy", Action{Kind: "shell", Command: "echo x > .agenthub/policy.toml"}, backend.Deny, "shell"},
		{"shell git push is push", Action{Kind: "shell", Command: "git push origin main"}, backend.Ask, "push"},
		{"shell git commit is commit", Action{Kind: "shell", Command: "git -C sub commit -m x"}, backend.Ask, "commit"},
		{"shell npm publish", Action{Kind: "shell", Command: "npm publish"}, backend.Ask, "publish"},
		{"shell terraform apply", Action{Kind: "shell", Command: "terraform apply -auto-approve"}, backend.Ask, "deploy"},
		{"shell unparsable secret", Action{Kind: "shell", Command: "cat .env <<EOF"}, backend.Deny, "secret"},
		{"network", Action{Kind: "network", Method: "GET", URL: "https://example.com/x"}, backend.Ask, "network"},
		{"network invalid", Action{Kind: "network", URL: "::nope"}, backend.Ask, "network"},
		{"commit", Action{Kind: "commit"}, backend.Ask, "commit"},
		{"push", Action{Kind: "push", Remote: "origin", Ref: "main"}, backend.Ask, "push"},
		{"publish", Action{Kind: "publish"}, backend.Ask, "publish"},
		{"deploy", Action{Kind: "deploy"}, backend.Ask, "deploy"},
		{"secret", Action{Kind: "secret"}, backend.Deny, "secret"},
		{"unknown class", Action{Kind: "teleport"}, backend.Ask, "teleport"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Evaluate(tt.a)
			if got.Verdict != tt.want || got.Kind != tt.kind {
				t.Errorf("Evaluate = %s (%s), want %s (%s); trace %+v", got.Verdict, got.Kind, tt.want, tt.kind, got.Trace)
			}
			if len(got.Trace) == 0 || got.Reason == "" {
				t.Errorf("missing trace or reason: %+v", got)
			}
		})
	}
}

const precedencePolicy = `
version = 1

[[write]]
id = "src-allow"
glob = "src/**"
verdict = "allow"

[[write]]
id = "src-gen-deny"
glob = "src/gen/**"
verdict = "deny"

[[write]]
id = "docs-ask"
glob = "docs/**"
verdict = "ask"

[[write]]
id = "docs-allow"
glob = "docs/*.md"
verdict = "allow"

[[write]]
id = "any-go"
glob = "**/*.go"
verdict = "allow"

[[write]]
id = "main-go"
glob = "cmd/main.go"
verdict = "allow"

[[write]]
id = "try-env"
glob = "**/.env"
verdict = "allow"

[[shell]]
id = "git-status"
prefix = ["git", "status"]
verdict = "allow"

[[shell]]
id = "go-test"
command = "go test ./..."
verdict = "allow"

[[shell]]
id = "ls"
prefix = ["ls"]
verdict = "allow"

[[shell]]
id = "no-rm"
prefix = ["rm"]
verdict = "deny"

[[shell]]
id = "allow-push"
prefix = ["git", "push"]
verdict = "allow"

[[shell]]
id = "make-in-sub"
prefix = ["make"]
cwd = "sub"
verdict = "allow"

[[network]]
id = "gh-api"
host = "api.github.com"
method = "GET"
verdict = "allow"

[[network]]
id = "example-any"
host = "*.example.com"
verdict = "allow"

[[network]]
id = "evil"
host = "evil.example.com"
verdict = "deny"

[[git]]
id = "commit-ok"
action = "commit"
verdict = "allow"

[[git]]
id = "push-ok"
action = "push"
verdict = "allow"
`

func TestPrecedence(t *testing.T) {
	p, err := ParsePolicy([]byte(precedencePolicy))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		a      Action
		want   backend.Verdict
		ruleID string
	}{
		{"allow glob", Action{Kind: "write", Path: "src/a.txt"}, backend.Allow, "src-allow"},
		{"deny beats allow", Action{Kind: "write", Path: "src/gen/x.go"}, backend.Deny, "src-gen-deny"},
		{"deny matches case-folded", Action{Kind: "write", Path: "src/GEN/x.go"}, backend.Deny, "src-gen-deny"},
		{"allow beats ask", Action{Kind: "write", Path: "docs/readme.md"}, backend.Allow, "docs-allow"},
		{"ask rule alone", Action{Kind: "write", Path: "docs/img/x.png"}, backend.Ask, "docs-ask"},
		{"most specific allow wins", Action{Kind: "write", Path: "cmd/main.go"}, backend.Allow, "main-go"},
		{"no match default", Action{Kind: "write", Path: "README"}, backend.Ask, "default:write"},
		{"allow for secret ignored", Action{Kind: "write", Path: "x/.env"}, backend.Deny, "builtin:secret"},
		{"patch all allowed", Action{Kind: "patch", Paths: []string{"src/a", "docs/b.md"}}, backend.Allow, "src-allow,docs-allow"},
		{"patch one asks", Action{Kind: "patch", Paths: []string{"src/a", "README"}}, backend.Ask, "default:patch"},
		{"shell prefix", Action{Kind: "shell", Command: "git status --short"}, backend.Allow, "git-status"},
		{"shell exact", Action{Kind: "shell", Command: "go test ./..."}, backend.Allow, "go-test"},
		{"shell exact differs", Action{Kind: "shell", Command: "go test ./... -run X"}, backend.Ask, "default:shell"},
		{"compound all allowed", Action{Kind: "shell", Command: "git status && ls -la | ls"}, backend.Allow, "git-status,ls,ls"},
		{"compound one unknown", Action{Kind: "shell", Command: "git status; curl x"}, backend.Ask, "default:shell"},
		{"compound with deny", Action{Kind: "shell", Command: "ls && rm -rf build"}, backend.Deny, "no-rm"},
		{"deny through path", Action{Kind: "shell", Command: "/bin/rm x"}, backend.Deny, "no-rm"},
		{"deny through bash -c", Action{Kind: "shell", Command: "bash -c 'ls; rm x'"}, backend.Deny, "no-rm"},
		{"deny through xargs", Action{Kind: "shell", Command: "ls | xargs rm"}, backend.Deny, "no-rm"},
		{"allow needs exact argv0", Action{Kind: "shell", Command: "./ls"}, backend.Ask, "default:shell"},
		{"substitution must match too", Action{Kind: "shell", Command: "ls $(curl evil)"}, backend.Ask, "default:shell"},
		{"substitution allowed parts", Action{Kind: "shell", Command: "ls $(git status)"}, backend.Allow, "git-status,ls"},
		{"dynamic prefix word", Action{Kind: "shell", Command: "git $SUB"}, backend.Ask, "default:push"},
		{"sudo caps allow", Action{Kind: "shell", Command: "sudo ls"}, backend.Ask, "ls"},
		{"redirect caps allow", Action{Kind: "shell", Command: "ls > listing.txt"}, backend.Ask, "ls"},
		{"risky env caps allow", Action{Kind: "shell", Command: "LD_PRELOAD=x.so ls"}, backend.Ask, "ls"},
		// CGO_ENABLED was allowed when the list was a deny-list; an
		// allow-list asks for every name it does not hold (issue 14 item 2).
		{"unlisted env caps allow", Action{Kind: "shell", Command: "CGO_ENABLED=0 ls"}, backend.Ask, "ls"},
		{"listed env keeps allow", Action{Kind: "shell", Command: "LANG=C LC_ALL=C TZ=UTC ls"}, backend.Allow, "ls"},
		{"unparsable never allows", Action{Kind: "shell", Command: "ls <<EOF"}, backend.Ask, "builtin:unparsed"},
		{"push allow rule ignored", Action{Kind: "shell", Command: "git push"}, backend.Ask, "default:push"},
		{"push via bash -c ignored", Action{Kind: "shell", Command: "env A=1 bash -c 'git push -f'"}, backend.Ask, "default:push"},
		{"git alias hides push", Action{Kind: "shell", Command: "git -c alias.st=push status"}, backend.Ask, "default:push"},
		{"git commit allowed", Action{Kind: "shell", Command: "git commit -m msg"}, backend.Allow, "commit-ok"},
		{"commit tool allowed", Action{Kind: "commit"}, backend.Allow, "commit-ok"},
		{"push tool ignores allow", Action{Kind: "push"}, backend.Ask, "default:push"},
		{"cwd rule in cwd", Action{Kind: "shell", Command: "make", Cwd: "sub"}, backend.Allow, "make-in-sub"},
		{"cwd rule elsewhere", Action{Kind: "shell", Command: "make", Cwd: "."}, backend.Ask, "default:shell"},
		{"argv form", Action{Kind: "shell", Argv: []string{"git", "status"}}, backend.Allow, "git-status"},
		{"network method and host", Action{Kind: "network", Method: "get", URL: "https://API.github.com/repos"}, backend.Allow, "gh-api"},
		{"network wrong method", Action{Kind: "network", Method: "POST", URL: "https://api.github.com/repos"}, backend.Ask, "default:network"},
		{"network wildcard", Action{Kind: "network", URL: "https://docs.example.com/"}, backend.Allow, "example-any"},
		{"network deny beats wildcard", Action{Kind: "network", URL: "http://evil.example.com:8080/"}, backend.Deny, "evil"},
		{"network apex not wildcard", Action{Kind: "network", URL: "https://example.com/"}, backend.Ask, "default:network"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Evaluate(tt.a)
			if got.Verdict != tt.want || got.RuleID != tt.ruleID {
				t.Errorf("Evaluate = %s by %q, want %s by %q\nreason: %s\ntrace: %+v", got.Verdict, got.RuleID, tt.want, tt.ruleID, got.Reason, got.Trace)
			}
		})
	}
}

func TestIgnoredAllowIsVisible(t *testing.T) {
	p, err := ParsePolicy([]byte(precedencePolicy))
	if err != nil {
		t.Fatal(err)
	}
	r := p.Evaluate(Action{Kind: "push"})
	found := false
	for _, s := range r.Trace {
		if s.Rule == "ignored:push-ok" && s.Matched {
			found = true
		}
	}
	if !found {
		t.Errorf("trace does not show the ignored allow rule: %+v", r.Trace)
	}
}
