package approval

import (
	"bytes"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Part is one simple command of a shell command line, after unwrapping the
// wrappers of [wrapperTable] (bash -c, env, sudo, xargs, timeout, find -exec…).
type Part struct {
	Argv     []string // words; a dynamic word keeps its source text
	Env      []string // names of VAR=value assignments in front of the command (and of env, export…)
	Dynamic  bool     // some word comes from an expansion, a substitution, a glob or xargs input
	Redirect bool     // output is redirected to a file (a write)
	Inputs   []string // files read through input redirection
	Outputs  []string // files written through output redirection
	Elevated bool     // run through sudo, doas, su, runuser
	Wrappers []string // unwrapped wrappers, outermost first
	// Opaque says why what this part runs cannot be seen: a dynamic command
	// word, eval of a variable, an inline interpreter program (python3 -c),
	// an arithmetic evaluation, a wrapper option the table does not know.
	// An opaque part is never allowed; a deny rule whose words appear in it
	// still denies it.
	Opaque string
	dyn    []bool   // per word of Argv
	seen   []string // every literal word (and token of an opaque program) of the wrapper chain, for deny rules
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
// cannot be parsed at all (a syntax error, an unterminated quote, too long,
// nested too deep) and must be treated as Ask.
type Parsed struct {
	Parts       []Part
	Unsupported string
}

// maxShellDepth bounds nested substitutions and bash -c unwrapping.
const maxShellDepth = 8

// maxShellLen bounds the text the parser looks at; longer commands are Ask.
const maxShellLen = 64 << 10

// ParseShell splits a bash command line into simple commands with
// mvdan.cc/sh/v3/syntax (the parser behind shfmt). Every simple command of
// a list, pipeline, subshell, block, if/for/while/case body, function body,
// command or process substitution and here-document is a part of its own;
// wrapper commands are unwrapped recursively from [wrapperTable]. It never
// panics: a command it cannot parse is reported in Unsupported, and one it
// parses but cannot see through is a part with Opaque set.
func ParseShell(s string) Parsed {
	if len(s) > maxShellLen {
		return Parsed{Unsupported: "command too long"}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil {
		return Parsed{Unsupported: "shell syntax: " + err.Error()}
	}
	w := &walker{}
	w.stmts(f.Stmts, Part{}, 0)
	if w.fail != "" {
		return Parsed{Unsupported: w.fail}
	}
	// An opaque part may read its program from anywhere in the line (echo
	// 'rm x' | sh, a here-string): a deny rule whose words appear anywhere
	// in it still denies it.
	var tokens []string
	for i := range w.parts {
		if w.parts[i].Opaque != "" {
			if tokens == nil {
				tokens = programTokens([]string{s})
			}
			w.parts[i].seen = append(w.parts[i].seen, tokens...)
		}
	}
	return Parsed{Parts: w.parts}
}

// maxShellWork bounds the words the unwrapping looks at in all (nested
// find -exec or wrappers would otherwise cost quadratic time).
const maxShellWork = 200_000

// walker collects the parts of a parsed script.
type walker struct {
	parts []Part
	fail  string
	work  int
}

func (w *walker) failf(reason string) {
	if w.fail == "" {
		w.fail = reason
	}
}

// scope is what a part inherits from the commands around it: a wrapper's
// environment, elevation and name, and the redirections of a compound
// command.
func inherit(scope Part) Part {
	return Part{Env: clone(scope.Env), Elevated: scope.Elevated, Wrappers: clone(scope.Wrappers),
		Dynamic: scope.Dynamic, Redirect: scope.Redirect, Inputs: clone(scope.Inputs),
		Outputs: clone(scope.Outputs), seen: clone(scope.seen)}
}

func clone(s []string) []string { return append([]string(nil), s...) }

func (w *walker) stmts(stmts []*syntax.Stmt, scope Part, depth int) {
	if depth > maxShellDepth {
		w.failf("nesting too deep")
		return
	}
	for _, s := range stmts {
		w.stmt(s, scope, depth)
	}
}

func (w *walker) stmt(s *syntax.Stmt, scope Part, depth int) {
	if s == nil || w.fail != "" {
		return
	}
	sc := inherit(scope)
	if s.Negated {
		sc.Wrappers = append(sc.Wrappers, "!")
	}
	opaque := ""
	for _, r := range s.Redirs {
		if o := w.redirect(r, &sc, scope, depth); o != "" {
			opaque = o
		}
	}
	switch c := s.Cmd.(type) {
	case nil:
		if sc.Redirect || len(sc.Inputs) > 0 || opaque != "" {
			sc.Opaque = opaque
			w.parts = append(w.parts, sc)
		}
	case *syntax.CallExpr:
		w.call(c, sc, scope, opaque, depth)
	case *syntax.BinaryCmd:
		w.stmt(c.X, sc, depth)
		w.stmt(c.Y, sc, depth)
	case *syntax.Subshell:
		w.stmts(c.Stmts, sc, depth)
	case *syntax.Block:
		w.stmts(c.Stmts, sc, depth)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			w.stmts(ic.Cond, sc, depth)
			w.stmts(ic.Then, sc, depth)
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond, sc, depth)
		w.stmts(c.Do, sc, depth)
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, item := range l.Items {
				w.word(item, scope, depth)
			}
		case *syntax.CStyleLoop:
			w.opaque(sc, []string{"for (("}, "arithmetic evaluation", depth, l)
		}
		w.stmts(c.Do, sc, depth)
	case *syntax.CaseClause:
		w.word(c.Word, scope, depth)
		for _, item := range c.Items {
			for _, pat := range item.Patterns {
				w.word(pat, scope, depth)
			}
			w.stmts(item.Stmts, sc, depth)
		}
	case *syntax.FuncDecl:
		w.stmt(c.Body, sc, depth)
	case *syntax.TimeClause:
		sc.Wrappers = append(sc.Wrappers, "time")
		w.stmt(c.Stmt, sc, depth)
	case *syntax.CoprocClause:
		sc.Wrappers = append(sc.Wrappers, "coproc")
		w.stmt(c.Stmt, sc, depth)
	case *syntax.ArithmCmd:
		w.opaque(sc, []string{"(("}, "arithmetic evaluation", depth, c.X)
	case *syntax.LetClause:
		nodes := make([]syntax.Node, len(c.Exprs))
		for i, e := range c.Exprs {
			nodes[i] = e
		}
		w.opaque(sc, []string{"let"}, "arithmetic evaluation", depth, nodes...)
	case *syntax.TestClause:
		// [[ … ]] evaluates arithmetic operands (-eq) and runs no command
		// of its own; its substitutions are parts, the test itself asks.
		w.opaque(sc, []string{"[["}, "a [[ test, which may evaluate arithmetic", depth, c.X)
	case *syntax.DeclClause:
		w.decl(c, sc, scope, opaque, depth)
	default:
		w.failf("unsupported shell construct")
	}
}

// opaque records a part that cannot be seen through, after the parts of
// the substitutions inside nodes.
func (w *walker) opaque(sc Part, argv []string, reason string, depth int, nodes ...syntax.Node) {
	for _, n := range nodes {
		if n != nil {
			w.substitutions(n, sc, depth)
		}
	}
	sc.Argv, sc.dyn, sc.Opaque = argv, make([]bool, len(argv)), reason
	w.parts = append(w.parts, sc)
}

// substitutions records the parts of every command and process substitution
// inside n.
func (w *walker) substitutions(n syntax.Node, scope Part, depth int) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch s := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(s.Stmts, inherit(scopeOnly(scope)), depth+1)
			return false
		case *syntax.ProcSubst:
			w.stmts(s.Stmts, inherit(scopeOnly(scope)), depth+1)
			return false
		}
		return true
	})
}

// scopeOnly drops a part's own redirections: a substitution runs before
// them.
func scopeOnly(p Part) Part {
	p.Redirect, p.Inputs, p.Outputs = false, nil, nil
	return p
}

// call records a simple command: its assignments, its words (after the
// parts of their substitutions), then the command unwrapped.
func (w *walker) call(c *syntax.CallExpr, sc, scope Part, opaque string, depth int) {
	for _, a := range c.Assigns {
		if a.Name != nil {
			sc.Env = append(sc.Env, a.Name.Value)
		}
		if o := w.assignValue(a, scope, depth); o != "" {
			opaque = o
		}
	}
	for _, arg := range c.Args {
		text, dyn, o := w.word(arg, scope, depth)
		if o != "" {
			opaque = o
		}
		sc.Argv = append(sc.Argv, text)
		sc.dyn = append(sc.dyn, dyn)
		sc.Dynamic = sc.Dynamic || dyn
	}
	if len(sc.Argv) == 0 {
		// NAME=value alone changes the shell for the commands after it.
		sc.Opaque = "a variable assignment, which changes the commands after it"
		w.parts = append(w.parts, sc)
		return
	}
	sc.Opaque = opaque
	w.unwrap(sc, depth)
}

func (w *walker) assignValue(a *syntax.Assign, scope Part, depth int) string {
	opaque := ""
	if a.Index != nil {
		w.substitutions(a.Index, scope, depth)
		opaque = "an array index, which is evaluated as arithmetic"
	}
	if a.Value != nil {
		if _, dyn, o := w.word(a.Value, scope, depth); o != "" {
			opaque = o
		} else if dyn {
			_ = dyn // a dynamic value is data: the command it is given to decides
		}
	}
	if a.Array != nil {
		w.substitutions(a.Array, scope, depth)
		opaque = "an array assignment"
	}
	return opaque
}

// decl records declare, export, local, readonly, typeset: the names they
// set count as the command's environment.
func (w *walker) decl(c *syntax.DeclClause, sc, scope Part, opaque string, depth int) {
	sc.Argv, sc.dyn = []string{c.Variant.Value}, []bool{false}
	for _, a := range c.Args {
		if o := w.assignValue(a, scope, depth); o != "" {
			opaque = o
		}
		switch {
		case a.Naked && a.Name == nil && a.Value != nil:
			text, dyn, o := w.word(a.Value, scope, depth)
			if o != "" {
				opaque = o
			}
			sc.Argv, sc.dyn = append(sc.Argv, text), append(sc.dyn, dyn)
			sc.Dynamic = sc.Dynamic || dyn
		case a.Name != nil:
			sc.Env = append(sc.Env, a.Name.Value)
			sc.Argv, sc.dyn = append(sc.Argv, a.Name.Value), append(sc.dyn, false)
		}
	}
	sc.Opaque = opaque
	w.parts = append(w.parts, sc)
}

// redirect applies one redirection to sc: an input file, an output file
// (a write), a duplicated descriptor or a here-document (data).
func (w *walker) redirect(r *syntax.Redirect, sc *Part, scope Part, depth int) string {
	opaque := ""
	if r.Hdoc != nil {
		if _, _, o := w.word(r.Hdoc, scope, depth); o != "" {
			opaque = o
		}
	}
	if r.Word == nil {
		return opaque
	}
	target, _, o := w.word(r.Word, scope, depth)
	if o != "" {
		opaque = o
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		// data on standard input, not a file
	case syntax.DplIn, syntax.DplOut:
		if isFDTarget(target) {
			break // duplicating a descriptor touches no file
		}
		if r.Op == syntax.DplIn {
			sc.Inputs = append(sc.Inputs, target)
			break
		}
		sc.Outputs, sc.Redirect = append(sc.Outputs, target), true
	case syntax.RdrIn:
		sc.Inputs = append(sc.Inputs, target)
	default: // > >> >| <> &> &>>
		if target != "/dev/null" {
			sc.Outputs, sc.Redirect = append(sc.Outputs, target), true
		}
	}
	return opaque
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

// word returns a word's text: the literal value when it is static, else its
// source text with dyn set. Substitutions inside it become parts of their
// own. opaque is set when the word evaluates arithmetic or a parameter
// operator that can run code (${!x}, ${x@P}, ${a[i]}).
func (w *walker) word(word *syntax.Word, scope Part, depth int) (text string, dyn bool, opaque string) {
	if word == nil {
		return "", false, ""
	}
	var b strings.Builder
	for _, part := range word.Parts {
		d, o := w.wordPart(part, &b, false, scope, depth)
		dyn = dyn || d
		if o != "" {
			opaque = o
		}
	}
	if dyn {
		return printWord(word), true, opaque
	}
	return b.String(), false, opaque
}

func (w *walker) wordPart(part syntax.WordPart, b *strings.Builder, quoted bool, scope Part, depth int) (dyn bool, opaque string) {
	switch p := part.(type) {
	case *syntax.Lit:
		if quoted {
			b.WriteString(unescapeQuoted(p.Value))
			return false, ""
		}
		text, glob := unescapeLit(p.Value)
		b.WriteString(text)
		return glob, ""
	case *syntax.SglQuoted:
		if p.Dollar {
			text, ok := decodeANSIC(p.Value)
			if !ok {
				return true, "" // an escape we do not decode as bash does: kept as source text
			}
			b.WriteString(text)
			return false, ""
		}
		b.WriteString(p.Value)
		return false, ""
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			d, o := w.wordPart(q, b, true, scope, depth)
			dyn = dyn || d
			if o != "" {
				opaque = o
			}
		}
		return dyn, opaque
	case *syntax.ParamExp:
		w.substitutions(p, scope, depth)
		if !plainParam(p) {
			opaque = "a parameter expansion that may evaluate code (${!x}, ${x@P}, an index or a slice)"
		}
		return true, opaque
	case *syntax.CmdSubst:
		w.stmts(p.Stmts, inherit(scopeOnly(scope)), depth+1)
		return true, ""
	case *syntax.ProcSubst:
		w.stmts(p.Stmts, inherit(scopeOnly(scope)), depth+1)
		return true, ""
	case *syntax.ArithmExp:
		w.substitutions(p, scope, depth)
		return true, "arithmetic expansion"
	case *syntax.ExtGlob, *syntax.BraceExp:
		return true, ""
	}
	w.failf("unsupported word")
	return true, ""
}

// plainParam reports a parameter expansion that only reads a variable
// ($x, ${x}, ${#x}, ${x:-word}, ${x%pat}, ${x/a/b}, ${x^^}).
func plainParam(p *syntax.ParamExp) bool {
	if p.Param == nil || p.Excl || p.Index != nil || p.Slice != nil || p.Names != 0 || p.NestedParam != nil ||
		p.Flags != nil || len(p.Modifiers) > 0 {
		return false
	}
	return p.Exp == nil || p.Exp.Op != syntax.OtherParamOps
}

// unescapeLit removes the backslashes of an unquoted literal and reports
// whether it holds an unescaped glob or brace expansion.
func unescapeLit(s string) (string, bool) {
	var b strings.Builder
	glob := false
	brace := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			continue
		case c == '*' || c == '?' || c == '[':
			glob = true
		case c == '{':
			brace = i
		case brace >= 0 && (c == ',' || (c == '.' && i+1 < len(s) && s[i+1] == '.')):
			glob = true // {a,b} and {1..3} expand to several words
		}
		b.WriteByte(c)
	}
	return b.String(), glob
}

// unescapeQuoted removes the backslashes that double quotes honour.
func unescapeQuoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func printWord(word *syntax.Word) string {
	var buf bytes.Buffer
	if err := syntax.NewPrinter(syntax.Minify(true)).Print(&buf, word); err != nil {
		return "<word>"
	}
	return buf.String()
}

// parseScript parses the script a wrapper runs (bash -c, eval, su -c,
// watch) into parts that inherit scope.
func (w *walker) parseScript(script string, scope Part, depth int) {
	if depth+1 > maxShellDepth {
		w.failf("nesting too deep")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		w.failf("shell syntax in a wrapped script: " + err.Error())
		return
	}
	w.stmts(f.Stmts, scope, depth+1)
}

// decodeANSIC decodes the escapes of bash's $'…' quoting, so $'\x72\x6d' is
// the word rm a deny rule sees. ok is false for anything it does not decode
// exactly as bash does (a NUL, which ends the word in bash; \c; an unknown
// escape), and the word then stays dynamic.
func decodeANSIC(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'x', 'u', 'U', '0', '1', '2', '3', '4', '5', '6', '7':
			base, most, start := 16, map[byte]int{'x': 2, 'u': 4, 'U': 8}[e], i+1
			if e >= '0' && e <= '7' {
				base, most, start = 8, 3, i
			}
			end := start
			for end < len(s) && end-start < most && isDigitIn(s[end], base) {
				end++
			}
			if end == start {
				return "", false
			}
			n, err := strconv.ParseUint(s[start:end], base, 32)
			if err != nil || n == 0 || n > 0x10FFFF {
				return "", false
			}
			if e == 'u' || e == 'U' {
				b.WriteRune(rune(n))
			} else {
				if n > 0xFF {
					return "", false
				}
				b.WriteByte(byte(n))
			}
			i = end - 1
		default:
			return "", false
		}
	}
	return b.String(), true
}

func isDigitIn(c byte, base int) bool {
	switch {
	case c >= '0' && c <= '7':
		return true
	case c == '8' || c == '9':
		return base == 16
	case (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'):
		return base == 16
	}
	return false
}
