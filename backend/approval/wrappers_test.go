package approval

import (
	"testing"

	"agenthub/backend"
)

// denyRmPolicy denies rm and allows what a hostile model would hide it
// behind, so a wrapper the parser cannot see through shows as allow.
var denyRmPolicy = `version = 1

[[shell]]
id = "no-rm"
prefix = ["rm"]
verdict = "deny"

[[shell]]
id = "no-git-push-f"
prefix = ["git", "push", "-f"]
verdict = "deny"
` + allowEverythingRules

// allowEverythingRules allows the wrappers themselves and the usual
// commands: nothing below may turn a hidden command into allow.
var allowEverythingRules = func() string {
	s := ""
	for _, w := range []string{"ls", "echo", "env", "sudo", "doas", "su", "runuser", "xargs", "nice", "timeout",
		"nohup", "exec", "command", "builtin", "eval", "busybox", "setsid", "stdbuf", "ionice", "flock", "chrt",
		"taskset", "unshare", "nsenter", "chroot", "watch", "find", "time", "script", "parallel", "sg", "bash",
		"sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "python", "python2", "python3", "pypy", "pypy3", "perl",
		"ruby", "node", "nodejs", "bun", "deno", "php", "lua", "Rscript", "osascript", "tclsh", "awk", "gawk",
		"mawk", "nawk", "git", "true", "cat", "uv", "poetry", "pipenv", "bundle", "pnpm", "npm", "trap", "strace",
		"ltrace", "systemd-run", "alias", "source", ".", "l"} {
		s += "\n[[shell]]\nprefix = [\"" + w + "\"]\nverdict = \"allow\"\n"
	}
	return s
}()

// wrapperCases are, per entry of wrapperTable, commands that run rm through
// it (issue 14 item 4, and more).
var wrapperCases = map[string][]string{
	"env":         {"env rm -rf /", "env -i FOO=1 rm x", "env -u HOME -- rm x", "env -S 'rm -rf /'", "env -C /tmp rm x", "/usr/bin/env rm x"},
	"sudo":        {"sudo rm -rf /", "sudo -u root -E rm x", "sudo -s rm x", "sudo --chdir=/ rm x", "sudo -h rm x"},
	"doas":        {"doas rm x", "doas -u root rm x"},
	"su":          {"su -c 'rm -rf /'", "su root -c 'rm x'", "su - root -c 'rm x'", "su --command='rm x' root"},
	"runuser":     {"runuser -u nobody -- rm x", "runuser -l nobody -c 'rm x'"},
	"xargs":       {"ls | xargs rm", "xargs -0 -n1 rm", "xargs -I{} rm {}", "xargs -i rm {}"},
	"nice":        {"nice rm x", "nice -n 5 rm x", "nice -5 rm x"},
	"timeout":     {"timeout 5 rm x", "timeout -s KILL 5 rm x", "timeout --weird 5 rm x"},
	"nohup":       {"nohup rm x"},
	"strace":      {"strace rm x", "strace -o /dev/null rm x", "strace -f -e trace=file rm x"},
	"ltrace":      {"ltrace rm x", "ltrace -o out rm x"},
	"systemd-run": {"systemd-run --user rm x", "systemd-run --scope -p CPUQuota=5% rm x", "systemd-run --unknown rm x"},
	"alias":       {"alias l=rm; l x", "alias l='rm -rf'; l /"},
	"git":         {"git -c alias.x='!rm x' x", "git -c core.pager='rm x' log", "git -c core.hooksPath=h commit -m x; rm x"},
	"source":      {"source <(echo rm x)", "source $f; rm x"},
	".":           {". <(echo rm x)", `. "$f" && rm x`},
	"exec":        {"exec rm x", "exec -a name rm x"},
	"command":     {"command rm x", "command -p rm x"},
	"builtin":     {"builtin rm x"},
	"eval":        {"eval rm -rf /", "eval 'rm -rf /'", `eval "$(echo rm) x"`, `eval "$v"; rm x`},
	"busybox":     {"busybox rm -rf /", "busybox sh -c 'rm x'"},
	"setsid":      {"setsid rm x", "setsid -f rm x"},
	"stdbuf":      {"stdbuf -oL rm x", "stdbuf -o L rm x", "stdbuf --output=L rm x"},
	"ionice":      {"ionice -c3 rm x", "ionice -c 2 -n 7 rm x"},
	"flock":       {"flock /tmp/l rm x", "flock -x /tmp/l -c 'rm x'", "flock -w 5 /tmp/l rm x"},
	"chrt":        {"chrt 10 rm x", "chrt -f 10 rm x"},
	"taskset":     {"taskset 0x1 rm x", "taskset -c 0 rm x"},
	"unshare":     {"unshare rm x", "unshare -r rm x", "unshare --net rm x", "unshare -R / rm x"},
	"nsenter":     {"nsenter -t 1 -m rm x", "nsenter --target 1 rm x"},
	"chroot":      {"chroot / rm x", "chroot --userspec=0:0 / rm x"},
	"watch":       {"watch rm x", "watch -n 1 'rm x'", "watch -x rm x"},
	"find":        {"find . -exec rm {} \\;", "find . -execdir rm {} +", "find . -ok rm {} \\;", "find . -okdir rm {} \\;"},
	"time":        {"/usr/bin/time rm x", "time rm x", "command time -o out rm x"},
	"script":      {"script -c 'rm x' /dev/null", "script -qc 'rm x'"},
	"parallel":    {"parallel rm ::: a b", "parallel -j2 rm ::: a"},
	"sg":          {"sg wheel 'rm x'", "sg wheel -c 'rm x'"},
	"bash":        {"bash -c 'rm x'", "bash -lc 'ls; rm x'", "bash -x -c 'rm x'", "bash -c \"$v\" rm x", "echo 'rm x' | bash", "bash <<< 'rm x'"},
	"sh":          {"sh -c 'rm x'", "sh -c 'sh -c \"rm x\"'"},
	"zsh":         {"zsh -c 'rm x'"},
	"dash":        {"dash -c 'rm x'"},
	"ksh":         {"ksh -c 'rm x'"},
	"mksh":        {"mksh -c 'rm x'"},
	"ash":         {"ash -c 'rm x'"},
	"fish":        {"fish -c 'rm x'"},
	"python":      {"python -c 'import os; os.system(\"rm x\")'"},
	"python2":     {"python2 -c 'import os; os.system(\"rm x\")'"},
	"python3":     {"python3 -c 'import os; os.system(\"rm -rf /\")'", "python3.12 -c 'import subprocess; subprocess.run([\"rm\", \"x\"])'", "python3 - <<< 'import os; os.system(\"rm x\")'"},
	"pypy":        {"pypy -c 'import os; os.system(\"rm x\")'"},
	"pypy3":       {"pypy3 -c 'import os; os.system(\"rm x\")'"},
	"perl":        {"perl -e 'system(\"rm x\")'", "perl -E 'system qw(rm x)'"},
	"ruby":        {"ruby -e 'system(\"rm x\")'"},
	"node":        {"node -e 'require(\"child_process\").execSync(\"rm x\")'", "node --eval='execSync(\"rm x\")'"},
	"nodejs":      {"nodejs -e 'execSync(\"rm x\")'"},
	"bun":         {"bun -e 'Bun.spawn([\"rm\",\"x\"])'"},
	"deno":        {"deno eval 'Deno.run({cmd:[\"rm\",\"x\"]})'"},
	"php":         {"php -r 'system(\"rm x\");'"},
	"lua":         {"lua -e 'os.execute(\"rm x\")'"},
	"Rscript":     {"Rscript -e 'system(\"rm x\")'"},
	"osascript":   {"osascript -e 'do shell script \"rm x\"'"},
	"tclsh":       {"echo 'exec rm x' | tclsh"},
	"awk":         {"awk 'BEGIN{system(\"rm x\")}'", "awk -f prog.awk rm"},
	"gawk":        {"gawk 'BEGIN{system(\"rm x\")}'"},
	"mawk":        {"mawk 'BEGIN{print | \"rm x\"}'"},
	"nawk":        {"nawk 'BEGIN{system(\"rm x\")}'"},
	"uv":          {"uv run rm x", "uv run --with evil rm x"},
	"poetry":      {"poetry run rm x"},
	"pipenv":      {"pipenv run rm x"},
	"bundle":      {"bundle exec rm x"},
	"pnpm":        {"pnpm exec rm x"},
	"npm":         {"npm exec -- rm x", "npm exec rm x"},
	"trap":        {"trap 'rm x' EXIT; ls", "trap -- 'rm x' INT"},
}

// structureCases hide rm in shell structure rather than a wrapper.
var structureCases = []string{
	"! rm x", "{ rm x; }", "( rm x )", "ls; rm x", "ls && rm x", "ls || rm x", "ls | rm x", "ls & rm x",
	"echo $(rm x)", "echo `rm x`", "echo \"$(rm x)\"", "cat <(rm x)", "ls > >(rm x)", "f() { rm x; }; f",
	"if true; then rm x; fi", "if rm x; then :; fi", "while true; do rm x; done", "until rm x; do :; done",
	"for f in a; do rm $f; done", "for f in $(rm x); do :; done", "case a in a) rm x;; esac",
	"cat <<EOF\n$(rm x)\nEOF", "cat <<< $(rm x)", "X=$(rm x) ls", "export X=$(rm x)", "time rm x",
	"coproc rm x", "[[ $(rm x) ]]", "(( $(rm x) ))", "echo ${X:-$(rm x)}", "$x rm -rf /", "${x} rm -rf /",
	"\"$x\" rm x", "$(echo) rm x", "/bin/rm x", "./rm x", "\\rm x", "r\\m x", "'rm' x", "\"rm\" x",
	"timeout 5 nice -n 2 env A=1 sudo bash -c 'xargs rm'", "git push -f", "sudo git push -f origin",
	"bash -c 'git push -f'", "$'\\x72\\x6d' -rf /", "$'\\162m' x", "$'r\\x00' x; rm x",
}

// TestWrapperTableComplete: every wrapper of the table has its cases, and
// a deny rule for rm stays deny through each of them.
func TestWrapperTableComplete(t *testing.T) {
	for name := range wrapperTable {
		if len(wrapperCases[name]) == 0 {
			t.Errorf("wrapper %q has no case in wrapperCases", name)
		}
	}
	for name := range wrapperCases {
		if _, ok := wrapperTable[name]; !ok {
			t.Errorf("wrapperCases names %q, which is not in wrapperTable", name)
		}
	}
}

func TestDenyThroughWrappers(t *testing.T) {
	p, err := ParsePolicy([]byte(denyRmPolicy))
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, cases := range wrapperCases {
		all = append(all, cases...)
	}
	all = append(all, structureCases...)
	for _, cmd := range all {
		r := p.Evaluate(Action{Kind: backend.ActionShell, Command: cmd, Cwd: "."})
		if r.Verdict != backend.Deny {
			t.Errorf("%q: %s by %s (%s), want deny", cmd, r.Verdict, r.RuleID, r.Reason)
		}
	}
}

// TestOpaqueNeverAllows: what the decision cannot see through asks, even
// under allow rules for every word in it.
func TestOpaqueNeverAllows(t *testing.T) {
	p, err := ParsePolicy([]byte("version = 1\n" + allowEverythingRules))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"$x", "$x ls", "${x}", "\"$x\"", "$(echo ls)", "`echo ls`", "eval \"$v\"", "eval $v", "sh -c \"$v\"",
		"bash -c \"$v\"", "bash -c \"ls $v\"", "python3 -c 'print(1)'", "perl -e 'print 1'", "node -e '1'",
		"ruby -e 1", "php -r 1", "echo ls | sh", "bash", "sh -s", "bash -i -c ls", "bash --rcfile x -c ls",
		"awk 'BEGIN{system(\"ls\")}'", "X=1", "PATH=/tmp; ls", "echo $((1+2))", "(( x ))", "let x=1",
		"echo ${!x}", "echo ${x@P}", "echo ${a[$i]}", "[[ -f x ]]", "for ((i=0;i<1;i++)); do ls; done",
		"env -C sub ls", "xargs $x", "timeout --weird 5 ls", "su", "script", "fish -c ls", "parallel -j2 ls",
		"command $x", "exec $x", "find . -exec $x {} \\;", "watch \"$x\"",
	} {
		r := p.Evaluate(Action{Kind: backend.ActionShell, Command: cmd, Cwd: "."})
		if r.Verdict == backend.Allow {
			t.Errorf("%q: allowed by %s, want ask", cmd, r.RuleID)
		}
	}
}

// TestSeenThroughStillAllows: wrappers the table sees through keep an
// allow rule for the command inside.
func TestSeenThroughStillAllows(t *testing.T) {
	p, err := ParsePolicy([]byte("version = 1\n[[shell]]\nprefix = [\"ls\"]\nverdict = \"allow\"\n" +
		"[[shell]]\nprefix = [\"go\", \"test\"]\nverdict = \"allow\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"ls", "ls -la | ls", "if ls; then ls; fi", "{ ls; }", "! ls", "time ls", "timeout 60 go test ./...",
		"nice -n 5 ls", "bash -c 'ls && go test'", "env LANG=C ls", "LC_ALL=C ls", "eval ls", "command ls",
		"stdbuf -oL go test ./...", "setsid ls", "ls <<'EOF'\nx\nEOF", "for d in a b; do ls $d; done",
		"find . -exec ls {} \\;",
	} {
		r := p.Evaluate(Action{Kind: backend.ActionShell, Command: cmd, Cwd: "."})
		if cmd == "find . -exec ls {} \\;" {
			if r.Verdict == backend.Deny {
				t.Errorf("%q: denied", cmd)
			}
			continue // find itself has no allow rule
		}
		if r.Verdict != backend.Allow {
			t.Errorf("%q: %s by %s (%s), want allow", cmd, r.Verdict, r.RuleID, r.Reason)
		}
	}
}

// TestCheckAgreesOnOpaque: policy check says an allow rule does not match
// what evaluation will not allow it for.
func TestCheckAgreesOnOpaque(t *testing.T) {
	p, err := ParsePolicy([]byte("version = 1\n[[shell]]\nid = \"py\"\nprefix = [\"python3\"]\nverdict = \"allow\"\n" +
		"match = [\"python3 -c 'print(1)'\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fails := p.Check(); len(fails) != 1 || fails[0].Example != "python3 -c 'print(1)'" {
		t.Errorf("Check = %v, want the opaque example to fail to match", fails)
	}
}
