package approval

import (
	"path"
	"regexp"
	"strings"
)

// wrap is what a wrapper command does with its arguments, as read by one
// entry of [wrapperTable].
type wrap struct {
	inner    int      // argv index where the wrapped command starts; 0 = none (the wrapper runs nothing else)
	script   string   // a script the wrapper hands to a shell (bash -c, su -c, eval, watch)
	hasScr   bool     // script is set (it may be empty)
	execs    [][]int  // find: [start, end) ranges of commands it runs; the wrapper itself stays a part
	env      []string // names the wrapper sets (env NAME=value)
	elevated bool     // runs the command as another user
	dynamic  bool     // the command's arguments come from input (xargs, parallel, find {})
	opaque   string   // the wrapper cannot be seen through
}

// wrapperTable is the one table of commands that run another command. A
// test keeps it complete against the wrappers of issue 14: a deny rule for
// rm still denies `<wrapper> rm -rf /` through every entry.
var wrapperTable = map[string]func(argv []string) wrap{
	"env": envWrap, "sudo": sudoWrap, "doas": doasWrap, "su": suWrap, "runuser": runuserWrap,
	"xargs": xargsWrap, "nice": niceWrap, "timeout": timeoutWrap, "nohup": simpleWrap(""),
	"exec": optWrap(opts{withArg: "a", flags: "cl"}), "command": commandWrap, "builtin": simpleWrap(""),
	"eval": evalWrap, "busybox": busyboxWrap, "setsid": optWrap(opts{flags: "cfw", long: map[string]bool{"ctty": false, "fork": false, "wait": false}}),
	"stdbuf": optWrap(opts{withArg: "ioe", long: map[string]bool{"input": true, "output": true, "error": true}}),
	"ionice": ioniceWrap, "flock": flockWrap, "chrt": chrtWrap, "taskset": tasksetWrap, "unshare": unshareWrap,
	"nsenter": nsenterWrap, "chroot": chrootWrap, "watch": watchWrap, "find": findWrap, "time": timeWrap,
	"script": scriptWrap, "parallel": parallelWrap, "sg": sgWrap,
	"bash": shellWrap, "sh": shellWrap, "zsh": shellWrap, "dash": shellWrap, "ksh": shellWrap,
	"mksh": shellWrap, "ash": shellWrap, "fish": fishWrap,
	"python": interpWrap("c"), "python2": interpWrap("c"), "python3": interpWrap("c"), "pypy": interpWrap("c"),
	"pypy3": interpWrap("c"), "perl": interpWrap("eE"), "ruby": interpWrap("e"), "node": nodeWrap,
	"nodejs": nodeWrap, "bun": nodeWrap, "deno": denoWrap, "php": interpWrap("r"), "lua": interpWrap("e"),
	"Rscript": interpWrap("e"), "osascript": interpWrap("e"), "tclsh": interpWrap(""),
	"awk": awkWrap, "gawk": awkWrap, "mawk": awkWrap, "nawk": awkWrap,
	"uv":     subcommandWrap("run", opts{flags: "q", long: map[string]bool{"quiet": false, "frozen": false, "locked": false, "no-sync": false}}),
	"poetry": subcommandWrap("run", opts{flags: "q", long: map[string]bool{"quiet": false}}),
	"pipenv": subcommandWrap("run", opts{}),
	"bundle": subcommandWrap("exec", opts{}),
	"pnpm":   subcommandWrap("exec", opts{}),
	"npm":    subcommandWrap("exec", opts{}),
	"trap":   trapWrap,
	"strace": optWrap(opts{withArg: "abeEIoOpPsSuUX", flags: "cCdDfFhiknqrtTvVwxyzZ"}),
	"ltrace": optWrap(opts{withArg: "aAeFlLnopsuwxX", flags: "bcCdfhiLrStTV"}),
	"systemd-run": optWrap(opts{withArg: "pEMHu", flags: "dGPqrSt", long: map[string]bool{"user": false,
		"system": false, "scope": false, "unit": true, "property": true, "setenv": true, "wait": false, "pty": false,
		"pipe": false, "quiet": false, "collect": false, "same-dir": false, "working-directory": true,
		"description": true, "slice": true, "uid": true, "gid": true, "nice": true, "service-type": true,
		"remain-after-exit": false, "no-block": false, "machine": true, "host": true}}),
	"alias":  aliasWrap,
	"git":    gitWrap,
	"source": sourceWrap,
	".":      sourceWrap,
}

// aliasWrap: alias NAME=TEXT makes NAME run TEXT, so TEXT is read as the
// script it becomes (alias l=rm; l x runs rm).
func aliasWrap(argv []string) wrap {
	var bodies []string
	for _, a := range argv[1:] {
		if _, body, ok := strings.Cut(a, "="); ok {
			bodies = append(bodies, body)
		}
	}
	if len(bodies) == 0 {
		return wrap{}
	}
	return wrap{hasScr: true, script: strings.Join(bodies, "\n")}
}

// gitExecKeys are configuration keys whose value git runs as a command
// (an alias starting with "!" too): git -c KEY=VALUE makes VALUE a script.
var gitExecKeys = []string{"core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.askpass",
	"sequence.editor", "diff.external", "gpg.program", "credential.helper", "pager.", "uploadpack.packobjectshook",
	"difftool.", "mergetool.", "filter.", "diff.", "merge."}

// gitWrap: git -c alias.x='!cmd' and -c keys that name a program run a
// script the policy must see; another -c is configuration the policy
// cannot judge (core.hooksPath, include.path), so it is opaque.
func gitWrap(argv []string) wrap {
	var scripts []string
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			break // the subcommand
		}
		if strings.HasPrefix(a, "--config-env") {
			return wrap{opaque: "git --config-env sets configuration from the environment"}
		}
		if a != "-c" || i+1 >= len(argv) {
			continue
		}
		i++
		key, val, _ := strings.Cut(argv[i], "=")
		key = strings.ToLower(key)
		switch {
		case strings.HasPrefix(key, "alias."):
			if body, ok := strings.CutPrefix(val, "!"); ok {
				scripts = append(scripts, body)
			}
		case gitRunsValue(key):
			scripts = append(scripts, val)
		default:
			return wrap{opaque: "git -c " + key + ", configuration the policy cannot judge"}
		}
	}
	if len(scripts) == 0 {
		return wrap{}
	}
	return wrap{hasScr: true, script: strings.Join(scripts, "\n")}
}

func gitRunsValue(key string) bool {
	for _, k := range gitExecKeys {
		if key == k || (strings.HasSuffix(k, ".") && strings.HasPrefix(key, k)) {
			return true
		}
	}
	return false
}

// sourceWrap: source FILE runs FILE in this shell. A file named by a
// literal path is bound by its content (execbind.go); one the shell
// computes (. <(echo …), source $f) cannot be seen.
func sourceWrap(argv []string) wrap {
	if len(argv) < 2 {
		return wrap{}
	}
	if f := argv[1]; strings.ContainsAny(f, "$`") || strings.HasPrefix(f, "<(") || strings.HasPrefix(f, "/dev/") {
		return wrap{opaque: "source of a script the shell computes"}
	}
	return wrap{}
}

// trapWrap: trap ACTION SIGNALS runs ACTION as a script when a signal (or
// EXIT) arrives; trap -l, -p and trap - SIGNALS run nothing.
func trapWrap(argv []string) wrap {
	i := 1
	if i < len(argv) && argv[i] == "--" {
		i++
	}
	if i >= len(argv) || argv[i] == "-" || (strings.HasPrefix(argv[i], "-") && i == 1) {
		return wrap{}
	}
	return wrap{hasScr: true, script: argv[i]}
}

// subcommandWrap is a tool whose subcommand sub runs a command (uv run,
// bundle exec): its other subcommands are not wrappers, an option of sub
// the table does not know is opaque.
func subcommandWrap(sub string, o opts) func([]string) wrap {
	return func(argv []string) wrap {
		if len(argv) < 2 || argv[1] != sub {
			return wrap{}
		}
		i, _, bad := o.scan(argv, 2)
		if bad != "" {
			return wrap{opaque: bad}
		}
		return wrap{inner: i}
	}
}

// wrapperName is the table key of argv[0]: its base name, with a
// python3.12-style version dropped.
func wrapperName(argv0 string) string {
	name := path.Base(argv0)
	if m := versionedRE.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return name
}

var versionedRE = regexp.MustCompile(`^(python[23]?|pypy3?|perl|ruby|lua|php|node)[0-9.]+$`)

// unwrap strips wrapper commands from p, recursively, and records the
// parts they run. A wrapper it cannot see through leaves an opaque part.
func (w *walker) unwrap(p Part, depth int) {
	for steps := 0; len(p.Argv) > 0 && p.Opaque == ""; steps++ {
		if w.work += len(p.Argv) + len(p.seen); w.work > maxShellWork {
			w.failf("command too complex")
			return
		}
		if p.dyn[0] {
			p.Opaque = "the command word is an expansion (" + p.Argv[0] + ")"
			break
		}
		fn, ok := wrapperTable[wrapperName(p.Argv[0])]
		if !ok || steps > 32 {
			break
		}
		name := wrapperName(p.Argv[0])
		r := fn(p.Argv)
		p.Env = append(p.Env, r.env...)
		p.Elevated = p.Elevated || r.elevated
		p.Dynamic = p.Dynamic || r.dynamic
		switch {
		case r.opaque != "":
			p.Opaque = r.opaque
		case r.hasScr:
			if dynamicAfter(p, 1) {
				p.Opaque = name + " runs a script built from expansions"
				break
			}
			scope := p
			scope.Argv, scope.dyn = nil, nil
			scope.Wrappers = append(clone(p.Wrappers), name+" -c")
			scope.seen = append(clone(p.seen), p.Argv...)
			w.parseScript(r.script, scope, depth)
			return
		case len(r.execs) > 0:
			for _, ex := range r.execs {
				q := p
				q.Argv, q.dyn = clone(p.Argv[ex[0]:ex[1]]), append([]bool(nil), p.dyn[ex[0]:ex[1]]...)
				q.Wrappers = append(clone(p.Wrappers), name+" "+p.Argv[ex[0]-1])
				q.Dynamic = true
				q.seen = append(clone(p.seen), staticWords(Part{Argv: p.Argv[:ex[0]], dyn: p.dyn[:ex[0]]})...)
				w.unwrap(q, depth)
			}
			w.parts = append(w.parts, p) // find itself still runs
			return
		case r.inner > 0 && r.inner < len(p.Argv):
			p.seen = append(p.seen, staticWords(Part{Argv: p.Argv[:r.inner], dyn: p.dyn[:r.inner]})...)
			p.Argv, p.dyn = p.Argv[r.inner:], p.dyn[r.inner:]
			p.Wrappers = append(clone(p.Wrappers), name)
			continue
		}
		break
	}
	if p.Opaque != "" {
		p.seen = append(p.seen, staticWords(p)...)
		p.seen = append(p.seen, programTokens(p.Argv)...)
	}
	w.parts = append(w.parts, p)
}

// dynamicAfter reports whether any word of p from index i on is dynamic.
func dynamicAfter(p Part, i int) bool {
	for ; i < len(p.dyn); i++ {
		if p.dyn[i] {
			return true
		}
	}
	return false
}

func staticWords(p Part) []string {
	out := make([]string, 0, len(p.Argv))
	for i, a := range p.Argv {
		if !p.dyn[i] {
			out = append(out, a)
		}
	}
	return out
}

// programTokens splits the words of an opaque part (an inline program, a
// dynamic script) into tokens, so a deny rule whose words appear in it
// still denies it.
func programTokens(argv []string) []string {
	var out []string
	for _, a := range argv {
		for _, tok := range strings.FieldsFunc(a, func(r rune) bool {
			return !(r == '_' || r == '-' || r == '.' || r == '/' || r == '+' || r == ':' || r == '@' || r == '=' ||
				(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
		}) {
			out = append(out, tok)
			// x=rm; $x victim: the value of an assignment may become a
			// command word, so it counts as one for deny rules.
			if _, val, ok := strings.Cut(tok, "="); ok && val != "" {
				out = append(out, val)
			}
		}
	}
	return out
}

// opts describes a wrapper's options: short ones with a value (attached or
// the next word), short flags, and long ones (true: takes a value).
type opts struct {
	withArg string
	flags   string
	long    map[string]bool
}

// scan reads options from argv[from:] and returns the index of the first
// word that is not one, the values seen (by "-x" or "--name"), and a
// reason when an option is unknown (the wrapper is then opaque).
func (o opts) scan(argv []string, from int) (int, map[string]string, string) {
	vals := map[string]string{}
	i := from
	for ; i < len(argv); i++ {
		word := argv[i]
		if word == "--" {
			return i + 1, vals, ""
		}
		if !strings.HasPrefix(word, "-") || word == "-" {
			return i, vals, ""
		}
		if long, ok := strings.CutPrefix(word, "--"); ok {
			name, val, hasVal := strings.Cut(long, "=")
			takes, known := o.long[name]
			if !known {
				return i, vals, argv[0] + " option " + word
			}
			if takes && !hasVal {
				if i+1 >= len(argv) {
					return i, vals, argv[0] + " option " + word + " without a value"
				}
				i++
				val = argv[i]
			}
			vals["--"+name] = val
			continue
		}
		for j := 1; j < len(word); j++ {
			c := word[j]
			switch {
			case strings.IndexByte(o.withArg, c) >= 0:
				val := word[j+1:]
				if val == "" {
					if i+1 >= len(argv) {
						return i, vals, argv[0] + " option -" + string(c) + " without a value"
					}
					i++
					val = argv[i]
				}
				vals["-"+string(c)] = val
				j = len(word)
			case strings.IndexByte(o.flags, c) >= 0:
				vals["-"+string(c)] = ""
			default:
				return i, vals, argv[0] + " option " + word
			}
		}
	}
	return i, vals, ""
}

// optWrap is a wrapper with options and then the command.
func optWrap(o opts) func([]string) wrap {
	return func(argv []string) wrap {
		i, _, bad := o.scan(argv, 1)
		if bad != "" {
			return wrap{opaque: bad}
		}
		return wrap{inner: i}
	}
}

// simpleWrap is a wrapper without options (nohup, builtin).
func simpleWrap(string) func([]string) wrap { return optWrap(opts{}) }

func envWrap(argv []string) wrap {
	o := opts{withArg: "uCS", flags: "i0v", long: map[string]bool{"ignore-environment": false, "null": false,
		"unset": true, "chdir": true, "split-string": true, "debug": false}}
	var r wrap
	i := 1
	for i < len(argv) {
		next, vals, bad := o.scan(argv, i)
		if bad != "" {
			return wrap{opaque: bad}
		}
		if _, ok := vals["-C"]; ok {
			return wrap{opaque: "env --chdir runs the command in another directory"}
		}
		if _, ok := vals["--chdir"]; ok {
			return wrap{opaque: "env --chdir runs the command in another directory"}
		}
		s, ok := vals["-S"]
		if !ok {
			s, ok = vals["--split-string"]
		}
		if ok {
			r.hasScr, r.script = true, strings.Join(append([]string{s}, argv[next:]...), " ")
			return r
		}
		i = next
		if i < len(argv) {
			if name, ok := assignment(argv[i]); ok {
				r.env = append(r.env, name)
				i++
				continue
			}
		}
		break
	}
	r.inner = i
	return r
}

// assignment reports whether w is NAME=value and returns NAME.
func assignment(w string) (string, bool) {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return "", false
	}
	for i, c := range w[:eq] {
		alpha := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !alpha && (i == 0 || c < '0' || c > '9') {
			return "", false
		}
	}
	return w[:eq], true
}

var sudoOpts = opts{withArg: "ughpCDrtUTRh", flags: "EHnkKSbPAlvisB", long: map[string]bool{
	"preserve-env": false, "login": false, "shell": false, "non-interactive": false, "user": true, "group": true,
	"set-home": false, "background": false, "reset-timestamp": false, "remove-timestamp": false,
	"stdin": false, "bell": false, "chdir": true, "close-from": true, "prompt": true, "other-user": true,
	"host": true, "role": true, "type": true, "command-timeout": true, "preserve-groups": false}}

func sudoWrap(argv []string) wrap {
	i, vals, bad := sudoOpts.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad, elevated: true}
	}
	if _, ok := vals["-D"]; ok {
		return wrap{opaque: "sudo --chdir runs the command in another directory", elevated: true}
	}
	if _, ok := vals["--chdir"]; ok {
		return wrap{opaque: "sudo --chdir runs the command in another directory", elevated: true}
	}
	return wrap{inner: i, elevated: true}
}

func doasWrap(argv []string) wrap {
	i, _, bad := opts{withArg: "uC", flags: "ns"}.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad, elevated: true}
	}
	return wrap{inner: i, elevated: true}
}

var suOpts = opts{withArg: "csgGw", flags: "lmpfP", long: map[string]bool{"command": true, "session-command": true,
	"shell": true, "group": true, "supp-group": true, "login": false, "preserve-environment": false,
	"fast": false, "pty": false, "whitelist-environment": true}}

// suWrap reads su [options] [-] [user] [-c command].
func suWrap(argv []string) wrap {
	i, vals, bad := suOpts.scan(argv, 1)
	if bad == "" && i < len(argv) && argv[i] == "-" {
		i, vals, bad = scanMore(suOpts, argv, i+1, vals)
	}
	if bad == "" && i < len(argv) && !strings.HasPrefix(argv[i], "-") {
		i, vals, bad = scanMore(suOpts, argv, i+1, vals) // the user, then more options
	}
	if bad != "" {
		return wrap{opaque: bad, elevated: true}
	}
	if _, ok := vals["-s"]; ok {
		return wrap{opaque: "su with another shell", elevated: true}
	}
	for _, k := range []string{"-c", "--command", "--session-command"} {
		if s, ok := vals[k]; ok {
			return wrap{hasScr: true, script: s, elevated: true}
		}
	}
	if i < len(argv) {
		return wrap{opaque: "su passes arguments to a shell", elevated: true}
	}
	return wrap{elevated: true}
}

func scanMore(o opts, argv []string, from int, vals map[string]string) (int, map[string]string, string) {
	i, more, bad := o.scan(argv, from)
	for k, v := range more {
		vals[k] = v
	}
	return i, vals, bad
}

// runuserWrap reads runuser -u user [--] command, or the su form.
func runuserWrap(argv []string) wrap {
	o := suOpts
	o.withArg += "u"
	o.long = map[string]bool{"user": true}
	for k, v := range suOpts.long {
		o.long[k] = v
	}
	i, vals, bad := o.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad, elevated: true}
	}
	_, u := vals["-u"]
	_, user := vals["--user"]
	if u || user {
		return wrap{inner: i, elevated: true}
	}
	return suWrap(argv)
}

func xargsWrap(argv []string) wrap {
	o := opts{withArg: "IdEsLnPa", flags: "0rtpxo", long: map[string]bool{"null": false, "no-run-if-empty": false,
		"verbose": false, "interactive": false, "exit": false, "open-tty": false, "arg-file": true,
		"delimiter": true, "max-args": true, "max-procs": true, "max-lines": true, "replace": true, "eof": true,
		"max-chars": true, "process-slot-var": true, "show-limits": false}}
	// -i, -e and -l take an optional value attached to them.
	for j := 1; j < len(argv); j++ {
		a := argv[j]
		if len(a) >= 2 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:2], "iel") {
			argv = append(append(clone(argv[:j]), "-0"), argv[j+1:]...) // stands in for it, takes no word
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
	}
	i, _, bad := o.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad, dynamic: true}
	}
	return wrap{inner: i, dynamic: true}
}

var numberRE = regexp.MustCompile(`^[+-]?[0-9]+$`)

func niceWrap(argv []string) wrap {
	i := 1
	for ; i < len(argv); i++ {
		w := argv[i]
		switch {
		case w == "-n" || w == "--adjustment":
			i++
		case strings.HasPrefix(w, "--adjustment=") || (strings.HasPrefix(w, "-") && numberRE.MatchString(w[1:])) ||
			(strings.HasPrefix(w, "-n") && numberRE.MatchString(w[2:])):
		case w == "--":
			return wrap{inner: i + 1}
		case strings.HasPrefix(w, "-"):
			return wrap{opaque: "nice option " + w}
		default:
			return wrap{inner: i}
		}
	}
	return wrap{inner: i}
}

var durationRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[smhd]?$`)

func timeoutWrap(argv []string) wrap {
	o := opts{withArg: "sk", flags: "v", long: map[string]bool{"signal": true, "kill-after": true,
		"preserve-status": false, "foreground": false, "verbose": false}}
	i, _, bad := o.scan(argv, 1)
	switch {
	case bad != "":
		return wrap{opaque: bad}
	case i < len(argv) && durationRE.MatchString(argv[i]):
		return wrap{inner: i + 1}
	case i < len(argv):
		return wrap{opaque: "timeout duration " + argv[i]}
	}
	return wrap{}
}

// commandWrap unwraps command [-p] cmd; command -v and -V only look a name
// up.
func commandWrap(argv []string) wrap {
	i, vals, bad := opts{flags: "pvV"}.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad}
	}
	_, v := vals["-v"]
	_, V := vals["-V"]
	if v || V {
		return wrap{}
	}
	return wrap{inner: i}
}

// evalWrap: eval joins its words with spaces and runs them as a script.
func evalWrap(argv []string) wrap {
	i := 1
	if i < len(argv) && argv[i] == "--" {
		i++
	}
	return wrap{hasScr: true, script: strings.Join(argv[i:], " ")}
}

func busyboxWrap(argv []string) wrap {
	if len(argv) > 1 && strings.HasPrefix(argv[1], "-") {
		return wrap{} // --install, --list: no applet runs
	}
	return wrap{inner: 1}
}

func ioniceWrap(argv []string) wrap {
	i, vals, bad := opts{withArg: "cnpPu", flags: "t", long: map[string]bool{"class": true, "classdata": true,
		"pid": true, "pgid": true, "uid": true, "ignore": false}}.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad}
	}
	for _, k := range []string{"-p", "-P", "-u", "--pid", "--pgid", "--uid"} {
		if _, ok := vals[k]; ok {
			return wrap{} // changes running processes, runs nothing
		}
	}
	return wrap{inner: i}
}

// flockWrap reads flock [options] file [options] (command | -c script).
func flockWrap(argv []string) wrap {
	o := opts{withArg: "wEc", flags: "sxenuoFv", long: map[string]bool{"shared": false, "exclusive": false,
		"nonblock": false, "nb": false, "unlock": false, "close": false, "timeout": true, "wait": true,
		"conflict-exit-code": true, "command": true, "no-fork": false, "verbose": false}}
	i, vals, bad := o.scan(argv, 1)
	if bad == "" && i < len(argv) {
		i, vals, bad = scanMore(o, argv, i+1, vals) // the lock file, then more options
	}
	if bad != "" {
		return wrap{opaque: bad}
	}
	for _, k := range []string{"-c", "--command"} {
		if s, ok := vals[k]; ok {
			return wrap{hasScr: true, script: s}
		}
	}
	return wrap{inner: i}
}

func chrtWrap(argv []string) wrap {
	i, vals, bad := opts{withArg: "TPD", flags: "bfiordRavmp", long: map[string]bool{"batch": false, "fifo": false,
		"idle": false, "other": false, "rr": false, "deadline": false, "reset-on-fork": false, "all-tasks": false,
		"verbose": false, "max": false, "pid": false, "sched-runtime": true, "sched-period": true,
		"sched-deadline": true}}.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad}
	}
	_, p := vals["-p"]
	_, pid := vals["--pid"]
	_, m := vals["-m"]
	if p || pid || m {
		return wrap{}
	}
	if i < len(argv) && numberRE.MatchString(argv[i]) {
		return wrap{inner: i + 1}
	}
	return wrap{inner: i}
}

func tasksetWrap(argv []string) wrap {
	i, vals, bad := opts{flags: "acp", long: map[string]bool{"all-tasks": false, "cpu-list": false,
		"pid": false}}.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad}
	}
	_, p := vals["-p"]
	_, pid := vals["--pid"]
	if p || pid || i >= len(argv) {
		return wrap{}
	}
	return wrap{inner: i + 1} // the mask, then the command
}

func unshareWrap(argv []string) wrap {
	long := map[string]bool{"setuid": true, "setgid": true, "root": true, "wd": true, "propagation": true,
		"map-user": true, "map-group": true, "map-users": true, "map-groups": true, "setgroups": true,
		"fork": false, "map-root-user": false, "map-current-user": false, "map-auto": false, "keep-caps": false,
		"kill-child": false, "mount-proc": false, "mount-binfmt": false, "boottime": true, "monotonic": true}
	for _, ns := range []string{"mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time"} {
		long[ns] = false
	}
	i, vals, bad := opts{withArg: "SGRw", flags: "muinpUCTfrcK", long: long}.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad}
	}
	for _, k := range []string{"-R", "-w", "--root", "--wd"} {
		if _, ok := vals[k]; ok {
			return wrap{opaque: "unshare runs the command in another directory or root"}
		}
	}
	return wrap{inner: i}
}

func nsenterWrap(argv []string) wrap {
	long := map[string]bool{"target": true, "setuid": true, "setgid": true, "all": false, "preserve-credentials": false,
		"no-fork": false, "follow-context": false, "user-parent": false, "env": false, "join-cgroup": false}
	for _, ns := range []string{"mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time"} {
		long[ns] = false
	}
	i, vals, bad := opts{withArg: "tSG", flags: "amuinpUCTFZe", long: long}.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad}
	}
	_ = vals
	return wrap{inner: i}
}

func chrootWrap(argv []string) wrap {
	i, _, bad := opts{long: map[string]bool{"userspec": true, "groups": true, "skip-chdir": false}}.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad}
	}
	if i >= len(argv) {
		return wrap{}
	}
	return wrap{opaque: "chroot runs the command under another root"}
}

// watchWrap: watch joins its words and runs them with sh -c, or execs them
// directly with -x.
func watchWrap(argv []string) wrap {
	i, vals, bad := opts{withArg: "nq", flags: "bdeghtcxprwC", long: map[string]bool{"interval": true,
		"differences": false, "errexit": false, "beep": false, "chgexit": false, "equexit": true, "exec": false,
		"no-title": false, "color": false, "no-color": false, "precise": false, "no-linewrap": false,
		"no-rerun": false}}.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad}
	}
	_, x := vals["-x"]
	_, exec := vals["--exec"]
	if x || exec {
		return wrap{inner: i}
	}
	return wrap{hasScr: true, script: strings.Join(argv[i:], " ")}
}

// findWrap finds the commands of -exec, -execdir, -ok and -okdir, each
// ended by ";" or "+".
func findWrap(argv []string) wrap {
	var r wrap
	for i := 1; i < len(argv); i++ {
		switch argv[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			start, end := i+1, i+1
			for end < len(argv) && argv[end] != ";" && argv[end] != "+" {
				end++
			}
			if end == start {
				return wrap{opaque: "find " + argv[i] + " without a command"}
			}
			r.execs = append(r.execs, []int{start, end})
			i = end
		}
	}
	if len(r.execs) == 0 {
		return wrap{}
	}
	return r
}

// timeWrap is the time program (the shell keyword is parsed as such).
func timeWrap(argv []string) wrap {
	i, vals, bad := opts{withArg: "fo", flags: "apvq", long: map[string]bool{"format": true, "output": true,
		"append": false, "portability": false, "verbose": false, "quiet": false}}.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad}
	}
	_, o := vals["-o"]
	_, out := vals["--output"]
	if o || out {
		return wrap{opaque: "time -o writes a file"}
	}
	return wrap{inner: i}
}

// scriptWrap: script -c command runs it through a shell; without -c it
// starts an interactive shell.
func scriptWrap(argv []string) wrap {
	_, vals, bad := opts{withArg: "cEIOBTm", flags: "aefqtkh", long: map[string]bool{"command": true, "echo": true,
		"log-in": true, "log-out": true, "log-io": true, "log-timing": true, "logging-format": true,
		"append": false, "flush": false, "force": false, "quiet": false, "return": false}}.scan(argv, 1)
	if bad != "" {
		return wrap{opaque: bad}
	}
	for _, k := range []string{"-c", "--command"} {
		if s, ok := vals[k]; ok {
			return wrap{hasScr: true, script: s}
		}
	}
	return wrap{opaque: "script without -c starts a shell"}
}

// parallelWrap: GNU parallel runs its command template through a shell,
// once per input.
func parallelWrap(argv []string) wrap {
	if len(argv) < 2 || strings.HasPrefix(argv[1], "-") {
		return wrap{opaque: "parallel with options or commands from its input", dynamic: true}
	}
	end := 1
	for end < len(argv) && !strings.HasPrefix(argv[end], ":::") {
		end++
	}
	return wrap{hasScr: true, script: strings.Join(argv[1:end], " "), dynamic: true}
}

// sgWrap: sg group [-c] command runs the command through /bin/sh -c.
func sgWrap(argv []string) wrap {
	i := 1
	if i < len(argv) && argv[i] == "-" {
		i++
	}
	if i >= len(argv) {
		return wrap{}
	}
	i++ // the group
	if i < len(argv) && argv[i] == "-c" {
		i++
	}
	return wrap{hasScr: true, script: strings.Join(argv[i:], " ")}
}

// shellWrap unwraps `bash [options] -c SCRIPT [args…]`: the script's parts
// inherit the wrapper's environment and elevation. A script file runs as
// it is (its content is bound by the approval's subject); a shell that
// reads its commands from input, or sources an rc file, is opaque.
func shellWrap(argv []string) wrap {
	script := -1
	for i := 1; i < len(argv) && script < 0; i++ {
		w := argv[i]
		switch {
		case w == "-o" || w == "+o" || w == "-O" || w == "+O":
			i++
		case w == "--login" || w == "--norc" || w == "--noprofile" || w == "--posix" || w == "--restricted" ||
			w == "--verbose" || w == "--noediting":
		case w == "--":
			if i+1 >= len(argv) {
				return wrap{opaque: "a shell reading commands from its input"}
			}
			return wrap{}
		case strings.HasPrefix(w, "--"):
			return wrap{opaque: "shell option " + w}
		case (strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+")) && len(w) > 1:
			for _, c := range w[1:] {
				if !strings.ContainsRune("abefhkmnptuvxBCEHPTcl", c) {
					return wrap{opaque: "shell option " + w}
				}
			}
			if strings.ContainsRune(w, 'c') {
				script = i + 1
			}
		default:
			return wrap{} // runs a script file: matched as it is
		}
	}
	if script < 0 {
		return wrap{opaque: "a shell reading commands from its input"}
	}
	if script >= len(argv) {
		return wrap{opaque: "shell -c without a script"}
	}
	return wrap{hasScr: true, script: argv[script]}
}

// fishWrap: fish scripts are not bash; fish -c is opaque.
func fishWrap(argv []string) wrap {
	for _, a := range argv[1:] {
		if a == "-c" || strings.HasPrefix(a, "--command") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c")) {
			return wrap{opaque: "fish -c runs a fish script"}
		}
	}
	if len(argv) == 1 {
		return wrap{opaque: "a shell reading commands from its input"}
	}
	return wrap{}
}

// interpWrap: an interpreter given its program inline (python3 -c, perl -e)
// or on its input is opaque; one running a script file is not.
func interpWrap(inline string) func([]string) wrap {
	return func(argv []string) wrap {
		for _, a := range argv[1:] {
			if a == "-" {
				return wrap{opaque: argv[0] + " reading its program from input"}
			}
			if !strings.HasPrefix(a, "-") || a == "--" {
				return wrap{}
			}
			if !strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], inline) && inline != "" {
				return wrap{opaque: argv[0] + " runs an inline program (" + a + ")"}
			}
		}
		for _, a := range argv[1:] {
			if a == "--version" || a == "-V" || a == "--help" || a == "-h" {
				return wrap{}
			}
		}
		return wrap{opaque: argv[0] + " reading its program from input"}
	}
}

func nodeWrap(argv []string) wrap {
	for _, a := range argv[1:] {
		switch {
		case a == "-e" || a == "-p" || a == "--eval" || a == "--print" || strings.HasPrefix(a, "--eval=") ||
			strings.HasPrefix(a, "--print=") || a == "-pe" || a == "-" || a == "-r" || a == "--require" ||
			strings.HasPrefix(a, "--import") || strings.HasPrefix(a, "--loader"):
			return wrap{opaque: argv[0] + " runs an inline program (" + a + ")"}
		case !strings.HasPrefix(a, "-"):
			return wrap{}
		}
	}
	if len(argv) == 1 {
		return wrap{opaque: argv[0] + " reading its program from input"}
	}
	return wrap{}
}

func denoWrap(argv []string) wrap {
	if len(argv) > 1 && (argv[1] == "eval" || argv[1] == "repl") {
		return wrap{opaque: "deno " + argv[1] + " runs an inline program"}
	}
	return wrap{}
}

// awkWrap: an awk program can run commands (system(), print | "cmd",
// getline); a program file is not seen at all.
func awkWrap(argv []string) wrap {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-f" || strings.HasPrefix(a, "--file") || strings.HasPrefix(a, "-f"):
			return wrap{opaque: argv[0] + " runs a program file"}
		case a == "-v" || a == "-F":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			if strings.Contains(a, "system") || strings.Contains(a, "|") || strings.Contains(a, "getline") {
				return wrap{opaque: argv[0] + " program that runs commands"}
			}
			return wrap{}
		}
	}
	return wrap{}
}
