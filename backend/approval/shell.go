package approval

import (
	"strings"
)

// Part is one simple command of a shell command line, after unwrapping
// bash -c, sh -c, env, sudo, xargs, nice, timeout, nohup and exec.
type Part struct {
	Argv     []string // words; a dynamic word keeps its source text
	Env      []string // names of VAR=value assignments in front of the command
	Dynamic  bool     // some word comes from an expansion, a substitution, a glob or xargs input
	Redirect bool     // output is redirected to a file (a write)
	Inputs   []string // files read through input redirection
	Outputs  []string // files written through output redirection
	Elevated bool     // run through sudo
	Wrappers []string // unwrapped wrappers, outermost first
	dyn      []bool   // per word of Argv
}

// staticPrefix is the number of leading words that are literal text.
func (p Part) staticPrefix() int {
	for i, d := range p.dyn {
		if d {
			return i
		}
	}
	return len(p.Argv)
}

// Parsed is the result of [ParseShell]. When Unsupported is set the command
// contains a construct the parser does not model (heredocs, control
// structures, arithmetic, unbalanced quotes…) and must be treated as Ask.
type Parsed struct {
	Parts       []Part
	Unsupported string
}

// maxShellDepth bounds nested substitutions and bash -c unwrapping.
const maxShellDepth = 8

// maxShellLen bounds the text the parser looks at; longer commands are Ask.
const maxShellLen = 64 << 10

// ParseShell splits a POSIX-ish command line into simple commands: it
// honours quotes and escapes, splits on ; && || | & newlines and subshell
// parentheses, parses $( ) and backtick substitutions as parts of their own,
// records redirections, and unwraps wrapper commands recursively. It never
// panics and never fails: what it cannot model is reported in Unsupported.
func ParseShell(s string) Parsed {
	var out Parsed
	if len(s) > maxShellLen {
		out.Unsupported = "command too long"
		return out
	}
	lx := &lexer{src: []rune(s), out: &out}
	lx.parseList(0, false)
	if out.Unsupported != "" {
		out.Parts = nil
	}
	return out
}

type lexer struct {
	src []rune
	pos int
	out *Parsed
}

func (l *lexer) fail(reason string) {
	if l.out.Unsupported == "" {
		l.out.Unsupported = reason
	}
}

func (l *lexer) failed() bool { return l.out.Unsupported != "" }

func (l *lexer) peek(off int) rune {
	if l.pos+off < len(l.src) && l.pos+off >= 0 {
		return l.src[l.pos+off]
	}
	return 0
}

func (l *lexer) eof() bool { return l.pos >= len(l.src) }

// parseList parses commands until the end of input or, inside $( ), the
// matching close parenthesis, which it consumes.
func (l *lexer) parseList(depth int, inSubst bool) {
	if depth > maxShellDepth {
		l.fail("nesting too deep")
		return
	}
	cur := &Part{}
	parens := 0
	finish := func() {
		l.finish(cur, depth)
		cur = &Part{}
	}
	for !l.failed() {
		l.skipBlanks()
		if l.eof() {
			break
		}
		start := l.pos
		c := l.peek(0)
		switch {
		case c == '#':
			for !l.eof() && l.peek(0) != '\n' {
				l.pos++
			}
		case c == '\n' || c == ';':
			if c == ';' && l.peek(1) == ';' {
				l.fail("case clause")
			}
			l.pos++
			finish()
		case c == '&' && l.peek(1) != '>':
			l.pos++
			if l.peek(0) == '&' {
				l.pos++
			}
			finish()
		case c == '|':
			l.pos++
			if l.peek(0) == '|' || l.peek(0) == '&' {
				l.pos++
			}
			finish()
		case c == '(':
			if len(cur.Argv) > 0 || len(cur.Env) > 0 {
				l.fail("unexpected (")
				break
			}
			l.pos++
			parens++
		case c == ')':
			l.pos++
			finish()
			if parens > 0 {
				parens--
				break
			}
			if inSubst {
				return
			}
			l.fail("unbalanced )")
		case l.atRedirect():
			l.readRedirect(cur, depth)
		default:
			l.readCommandWord(cur, depth)
		}
		if l.pos == start && !l.failed() {
			l.fail("unexpected " + string(c)) // guarantees progress: fail closed rather than loop
		}
	}
	finish()
	if parens > 0 || inSubst {
		l.fail("unbalanced (")
	}
}

func (l *lexer) skipBlanks() {
	for !l.eof() {
		c := l.peek(0)
		if c == ' ' || c == '\t' || c == '\r' {
			l.pos++
			continue
		}
		if c == '\\' && l.peek(1) == '\n' {
			l.pos += 2
			continue
		}
		return
	}
}

// reserved words open control structures the parser does not model.
var reserved = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "for": true, "while": true,
	"until": true, "do": true, "done": true, "case": true, "esac": true, "function": true,
	"select": true, "{": true, "}": true, "[[": true, "]]": true, "!": true, "coproc": true, "time": true,
}

func (l *lexer) readCommandWord(cur *Part, depth int) {
	text, dyn := l.readWord(depth)
	if l.failed() {
		return
	}
	if len(cur.Argv) == 0 {
		if name, ok := assignment(text); ok {
			cur.Env = append(cur.Env, name)
			cur.Dynamic = cur.Dynamic || dyn
			return
		}
		if reserved[text] {
			l.fail("shell keyword " + text)
			return
		}
	}
	cur.Argv = append(cur.Argv, text)
	cur.dyn = append(cur.dyn, dyn)
	cur.Dynamic = cur.Dynamic || dyn
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

func (l *lexer) finish(cur *Part, depth int) {
	if l.failed() {
		return
	}
	if len(cur.Argv) == 0 {
		if len(cur.Env) > 0 {
			l.fail("variable assignment")
			return
		}
		if cur.Redirect || len(cur.Inputs) > 0 {
			l.out.Parts = append(l.out.Parts, *cur)
		}
		return
	}
	parts, reason := unwrap(*cur, depth)
	if reason != "" {
		l.fail(reason)
		return
	}
	l.out.Parts = append(l.out.Parts, parts...)
}

func isOperator(c rune) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

// readWord reads one word and reports whether any of it is dynamic.
func (l *lexer) readWord(depth int) (string, bool) {
	var b strings.Builder
	dyn := false
	for !l.eof() && !l.failed() {
		c := l.peek(0)
		if isOperator(c) {
			if c == '(' {
				l.fail("unexpected ( in word")
			}
			break
		}
		switch c {
		case '\\':
			if l.peek(1) == '\n' {
				l.pos += 2
				continue
			}
			if l.pos+1 < len(l.src) {
				b.WriteRune(l.src[l.pos+1])
				l.pos += 2
				continue
			}
			b.WriteRune(c)
			l.pos++
		case '\'':
			end := indexRune(l.src, l.pos+1, '\'')
			if end < 0 {
				l.fail("unterminated single quote")
				return "", false
			}
			b.WriteString(string(l.src[l.pos+1 : end]))
			l.pos = end + 1
		case '"':
			dyn = l.readDoubleQuoted(&b, depth) || dyn
		case '$':
			dyn = l.readDollar(&b, depth) || dyn
		case '`':
			l.readBacktick(&b, depth)
			dyn = true
		case '*', '?', '[', '{':
			b.WriteRune(c)
			l.pos++
			dyn = true
		default:
			b.WriteRune(c)
			l.pos++
		}
	}
	return b.String(), dyn
}

func indexRune(src []rune, from int, r rune) int {
	for i := from; i < len(src); i++ {
		if src[i] == r {
			return i
		}
	}
	return -1
}

func (l *lexer) readDoubleQuoted(b *strings.Builder, depth int) bool {
	l.pos++ // opening quote
	dyn := false
	for !l.failed() {
		if l.eof() {
			l.fail("unterminated double quote")
			return dyn
		}
		c := l.peek(0)
		switch c {
		case '"':
			l.pos++
			return dyn
		case '\\':
			n := l.peek(1)
			switch n {
			case '\n':
				l.pos += 2
			case '$', '`', '"', '\\':
				b.WriteRune(n)
				l.pos += 2
			default:
				b.WriteRune(c)
				l.pos++
			}
		case '$':
			dyn = l.readDollar(b, depth) || dyn
		case '`':
			l.readBacktick(b, depth)
			dyn = true
		default:
			b.WriteRune(c)
			l.pos++
		}
	}
	return dyn
}

// readDollar handles $ at l.pos; it reports whether an expansion was seen.
func (l *lexer) readDollar(b *strings.Builder, depth int) bool {
	n := l.peek(1)
	switch {
	case n == '(' && l.peek(2) == '(':
		l.fail("arithmetic expansion")
		return true
	case n == '(':
		start := l.pos
		l.pos += 2
		l.parseList(depth+1, true)
		b.WriteString(string(l.src[start:min(l.pos, len(l.src))]))
		return true
	case n == '{':
		end := indexRune(l.src, l.pos+2, '}')
		if end < 0 {
			l.fail("unterminated ${")
			return true
		}
		inner := string(l.src[l.pos+2 : end])
		if strings.ContainsAny(inner, "$`({") {
			l.fail("nested parameter expansion")
			return true
		}
		b.WriteString(string(l.src[l.pos : end+1]))
		l.pos = end + 1
		return true
	case n == '\'':
		l.fail("ANSI-C quoting")
		return true
	case n == '"':
		l.pos++ // $"…" is a translated string: read it as "…"
		return false
	case n == '_' || (n >= 'a' && n <= 'z') || (n >= 'A' && n <= 'Z'):
		start := l.pos
		l.pos++
		for !l.eof() {
			c := l.peek(0)
			if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
				break
			}
			l.pos++
		}
		b.WriteString(string(l.src[start:l.pos]))
		return true
	case (n >= '0' && n <= '9') || strings.ContainsRune("@*#?$!-", n):
		b.WriteString(string(l.src[l.pos : l.pos+2]))
		l.pos += 2
		return true
	}
	b.WriteRune('$')
	l.pos++
	return false
}

// readBacktick parses a `…` substitution as a command list of its own.
func (l *lexer) readBacktick(b *strings.Builder, depth int) {
	var inner strings.Builder
	i := l.pos + 1
	for ; i < len(l.src); i++ {
		c := l.src[i]
		if c == '`' {
			break
		}
		if c == '\\' && i+1 < len(l.src) && strings.ContainsRune("$`\\", l.src[i+1]) {
			i++
			c = l.src[i]
		}
		inner.WriteRune(c)
	}
	if i >= len(l.src) {
		l.fail("unterminated backtick")
		return
	}
	b.WriteString(string(l.src[l.pos : i+1]))
	l.pos = i + 1
	if depth+1 > maxShellDepth {
		l.fail("nesting too deep")
		return
	}
	sub := &lexer{src: []rune(inner.String()), out: l.out}
	sub.parseList(depth+1, false)
}
