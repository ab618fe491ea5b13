package approval

import (
	"path"
	"regexp"
	"strings"
)

// atRedirect reports whether a redirection operator starts at l.pos:
// [n]< [n]> &> (with an optional file-descriptor number in front).
func (l *lexer) atRedirect() bool {
	i := 0
	for l.peek(i) >= '0' && l.peek(i) <= '9' {
		i++
	}
	c := l.peek(i)
	if c == '<' || c == '>' {
		return true
	}
	return i == 0 && c == '&' && l.peek(1) == '>'
}

func (l *lexer) readRedirect(cur *Part, depth int) {
	for l.peek(0) >= '0' && l.peek(0) <= '9' {
		l.pos++
	}
	start := l.pos
	for !l.eof() && strings.ContainsRune("<>&|", l.peek(0)) && l.pos-start < 3 {
		l.pos++
	}
	op := string(l.src[start:l.pos])
	if l.peek(0) == '(' {
		l.fail("process substitution")
		return
	}
	switch op {
	case "<<", "<<-":
		l.fail("heredoc")
		return
	case "<", "<<<", "<&", ">", ">>", ">|", ">&", "&>", "&>>", "<>":
	default:
		l.fail("redirection " + op)
		return
	}
	l.skipBlanks()
	target, _ := l.readWord(depth)
	if l.failed() {
		return
	}
	if target == "" {
		l.fail("redirection without target")
		return
	}
	switch {
	case op == "<<<":
		// a here-string is data, not a file; substitutions in it were parsed
	case (op == ">&" || op == "<&") && isFDTarget(target):
		// duplicating a descriptor touches no file
	case op == "<" || op == "<&":
		cur.Inputs = append(cur.Inputs, target)
	case target == "/dev/null":
	default:
		cur.Outputs = append(cur.Outputs, target)
		cur.Redirect = true
	}
}

func isFDTarget(t string) bool {
	if t == "-" {
		return true
	}
	t = strings.TrimSuffix(t, "-")
	for _, c := range t {
		if c < '0' || c > '9' {
			return false
		}
	}
	return t != ""
}

// shift drops the first n words of p's argv.
func (p Part) shift(n int, wrapper string) Part {
	p.Argv = p.Argv[n:]
	p.dyn = p.dyn[n:]
	p.Wrappers = append(append([]string(nil), p.Wrappers...), wrapper)
	return p
}

// unwrap strips wrapper commands from p, recursively, and expands bash -c
// scripts into their own parts. A non-empty reason means fail closed.
func unwrap(p Part, depth int) ([]Part, string) {
	for steps := 0; len(p.Argv) > 0; steps++ {
		if p.dyn[0] || steps > 32 {
			return []Part{p}, ""
		}
		var n int
		var reason string
		name := path.Base(p.Argv[0])
		switch name {
		case "env":
			n, reason = envArgs(&p)
		case "sudo":
			n, reason = optionArgs(p.Argv, "ughpCDrtU", "EHnkKSbPA", "is")
			p.Elevated = true
		case "xargs":
			n, reason = optionArgs(p.Argv, "IndPLsEa", "0rtpx", "")
			p.Dynamic = true
		case "nice":
			n, reason = niceArgs(p.Argv)
		case "timeout":
			n, reason = timeoutArgs(p.Argv)
		case "nohup", "exec":
			n = 1
			if len(p.Argv) > 1 && strings.HasPrefix(p.Argv[1], "-") {
				reason = name + " options"
			}
		case "bash", "sh", "zsh", "dash", "ksh":
			return shellScript(p, depth)
		default:
			return []Part{p}, ""
		}
		if reason != "" {
			return nil, reason
		}
		if n >= len(p.Argv) {
			return []Part{p}, "" // the wrapper alone runs nothing else
		}
		p = p.shift(n, name)
	}
	return []Part{p}, ""
}

// envArgs skips env's options and VAR=value words.
func envArgs(p *Part) (int, string) {
	i := 1
	for ; i < len(p.Argv); i++ {
		w := p.Argv[i]
		switch {
		case w == "-i" || w == "-" || w == "--ignore-environment" || strings.HasPrefix(w, "--unset="):
		case w == "-u":
			i++
		case w == "--":
			return i + 1, ""
		case strings.HasPrefix(w, "-"):
			return 0, "env option " + w
		default:
			name, ok := assignment(w)
			if !ok {
				return i, ""
			}
			p.Env = append(p.Env, name)
		}
	}
	return i, ""
}

// optionArgs skips short options of a wrapper: withArg options take a value
// (attached or next word), flags take none, refused ones fail closed.
func optionArgs(argv []string, withArg, flags, refused string) (int, string) {
	i := 1
	for ; i < len(argv); i++ {
		w := argv[i]
		if w == "--" {
			return i + 1, ""
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			return i, ""
		}
		if strings.HasPrefix(w, "--") {
			if w == "--null" || w == "--no-run-if-empty" || w == "--preserve-env" {
				continue
			}
			return 0, argv[0] + " option " + w
		}
		for j := 1; j < len(w); j++ {
			c := rune(w[j])
			switch {
			case strings.ContainsRune(refused, c):
				return 0, argv[0] + " option -" + string(c)
			case strings.ContainsRune(withArg, c):
				if j == len(w)-1 {
					i++
				}
				j = len(w)
			case !strings.ContainsRune(flags, c):
				return 0, argv[0] + " option " + w
			}
		}
	}
	return i, ""
}

var numberRE = regexp.MustCompile(`^[+-]?[0-9]+$`)

func niceArgs(argv []string) (int, string) {
	i := 1
	for ; i < len(argv); i++ {
		w := argv[i]
		switch {
		case w == "-n":
			i++
		case strings.HasPrefix(w, "--adjustment=") || (strings.HasPrefix(w, "-") && numberRE.MatchString(w[1:])) ||
			(strings.HasPrefix(w, "-n") && numberRE.MatchString(w[2:])):
		case w == "--":
			return i + 1, ""
		case strings.HasPrefix(w, "-"):
			return 0, "nice option " + w
		default:
			return i, ""
		}
	}
	return i, ""
}

var durationRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[smhd]?$`)

func timeoutArgs(argv []string) (int, string) {
	i := 1
	for ; i < len(argv); i++ {
		w := argv[i]
		switch {
		case w == "-s" || w == "-k":
			i++
		case w == "--preserve-status" || w == "--foreground" || w == "-v" || w == "--verbose" ||
			strings.HasPrefix(w, "--signal=") || strings.HasPrefix(w, "--kill-after="):
		case strings.HasPrefix(w, "-"):
			return 0, "timeout option " + w
		case durationRE.MatchString(w):
			return i + 1, ""
		default:
			return 0, "timeout duration " + w
		}
	}
	return i, ""
}

// shellScript unwraps `bash [options] -c SCRIPT [args…]`: the script's own
// parts replace p and inherit its wrappers, environment and elevation.
func shellScript(p Part, depth int) ([]Part, string) {
	script := -1
	for i := 1; i < len(p.Argv) && script < 0; i++ {
		w := p.Argv[i]
		switch {
		case w == "-o" || w == "+o":
			i++
		case w == "--login" || w == "--norc" || w == "--noprofile" || w == "--posix":
		case strings.HasPrefix(w, "--"):
			return nil, "shell option " + w
		case (strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+")) && len(w) > 1:
			for _, c := range w[1:] {
				if !strings.ContainsRune("abefhklmnptuvxBCEHPTcils", c) {
					return nil, "shell option " + w
				}
			}
			if strings.ContainsRune(w, 'c') {
				script = i + 1
			}
		default:
			return []Part{p}, "" // runs a script file or stdin: matched as is
		}
	}
	if script < 0 {
		return []Part{p}, ""
	}
	if script >= len(p.Argv) {
		return nil, "shell -c without a script"
	}
	if p.dyn[script] {
		return nil, "shell -c with a dynamic script"
	}
	if depth+1 > maxShellDepth {
		return nil, "nesting too deep"
	}
	inner := Parsed{}
	sub := &lexer{src: []rune(p.Argv[script]), out: &inner}
	sub.parseList(depth+1, false)
	if inner.Unsupported != "" {
		return nil, inner.Unsupported
	}
	wrapper := path.Base(p.Argv[0]) + " -c"
	for i := range inner.Parts {
		q := &inner.Parts[i]
		q.Elevated = q.Elevated || p.Elevated
		q.Env = append(append([]string(nil), p.Env...), q.Env...)
		q.Wrappers = append(append(append([]string(nil), p.Wrappers...), wrapper), q.Wrappers...)
		q.Dynamic = q.Dynamic || (p.Dynamic && len(p.Argv) > script+1)
	}
	return inner.Parts, ""
}
