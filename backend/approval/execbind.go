package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Unreadable is the hash of a bound file that exists but cannot be read
// through the workspace's rooted access: a symlink or hard link leading
// out, a FIFO, a device, a directory, a file over the read limit. Its
// content is not bound; the approval says so.
const Unreadable = "unreadable"

// maxExecFiles bounds the files one command binds.
const maxExecFiles = 64

// ExecReader reads a workspace file the way the engine reads anything of the
// workspace: rooted, never following a symlink out, regular files only
// (workspace.FS). A missing file is an error wrapping fs.ErrNotExist.
type ExecReader interface {
	ReadFile(rel string) ([]byte, error)
}

// ExecFile is a workspace file a command will execute: a script it names,
// the Makefile make reads, the package.json whose scripts npm runs. Its
// content is hashed into the shell approval's subject, so an edit between
// approval and execution is drift (AP10).
type ExecFile struct {
	Path   string `json:"path"`           // workspace-relative
	SHA256 string `json:"sha256"`         // hex, Absent or Unreadable
	Why    string `json:"why"`            // what runs it, e.g. "script of bash"
	Note   string `json:"note,omitempty"` // why it is unreadable
}

// ExecPreimages is the part of exec files a subject binds: path and hash.
func ExecPreimages(files []ExecFile) []Preimage {
	out := make([]Preimage, len(files))
	for i, f := range files {
		out[i] = Preimage{Path: f.Path, SHA256: f.SHA256}
	}
	return out
}

// ExecFiles lists, sorted by path, the workspace files command will execute
// when run by a shell in cwd (workspace-relative), each hashed from the live
// workspace through r. Files are found the way the command will find them:
// relative to the directory it runs in (following `cd DIR` of the same
// command line, `make -C DIR` and the like), by the names the tool looks
// for. A file the tool would read but that does not exist is bound as
// Absent, so creating it is drift too. Words the shell expands at run time
// ($VAR, globs, substitutions) cannot be resolved: such a file is listed as
// Unreadable with the reason, its content unbound.
//
// What a bound file runs in turn is bound too, as far as it can be seen
// (issue 14: an approved script's edited library ran): a shell script's
// own commands (the libraries it sources, the scripts and tools it runs)
// and a makefile's includes and recipe lines, followed to maxFollowDepth.
func ExecFiles(r ExecReader, cwd, command string) []ExecFile {
	b := binder{r: r, seen: map[string]bool{}}
	dir, known := within(".", strings.ReplaceAll(cwd, `\`, "/"))
	b.commandLine(dir, known, command, 0)
	sort.Slice(b.out, func(i, j int) bool { return b.out[i].Path < b.out[j].Path })
	return b.out
}

// maxFollowDepth bounds how many files deep the binder follows what a bound
// file runs (script → library → …); a cycle stops at the first repeat.
const maxFollowDepth = 6

// commandLine binds what each simple command of a shell text runs, in dir
// (known: the directory is inside the workspace and static).
func (b *binder) commandLine(dir string, known bool, command string, depth int) {
	for _, p := range ParseShell(command).Parts {
		if len(p.Argv) == 0 {
			continue
		}
		argv := p.Argv
		if path.Base(argv[0]) == "cd" {
			dir, known = changeDir(dir, known, argv[1:])
			continue
		}
		if !known {
			continue
		}
		for _, ref := range execRefs(argv) {
			b.bind(dir, ref, depth)
		}
	}
}

// changeDir follows `cd DIR`: a static relative DIR inside the workspace
// moves the directory; anything else (no argument, an absolute path, a
// dynamic word, a path leaving the workspace) makes it unknown, and later
// commands bind nothing.
func changeDir(dir string, known bool, args []string) (string, bool) {
	if !known || len(args) != 1 || !static(args[0]) || path.IsAbs(args[0]) || args[0] == "-" {
		return dir, false
	}
	next, ok := within(dir, args[0])
	return next, ok
}

// within joins rel to dir and reports whether the result stays inside the
// workspace.
func within(dir, rel string) (string, bool) {
	if path.IsAbs(rel) {
		return "", false
	}
	p := path.Clean(path.Join(dir, rel))
	if p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return "", false
	}
	return p, true
}

// static reports whether a word is literal text: no expansion, glob or
// substitution left in it (the parser keeps a dynamic word's source text).
func static(w string) bool {
	return w != "" && !strings.ContainsAny(w, "$`*?[{~")
}

type binder struct {
	r    ExecReader
	seen map[string]bool
	out  []ExecFile
}

func (b *binder) bind(dir string, ref execRef, depth int) {
	if len(b.out) >= maxExecFiles || path.IsAbs(ref.path) {
		return
	}
	if !static(ref.path) {
		b.unbound(ref)
		return
	}
	p, ok := within(dir, ref.path)
	if !ok || p == "." || b.seen[p] {
		return
	}
	b.seen[p] = true
	f := ExecFile{Path: p, Why: ref.why}
	data, err := b.r.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.SHA256 = Absent
	case err != nil:
		f.SHA256, f.Note = Unreadable, err.Error()
	default:
		sum := sha256.Sum256(data)
		f.SHA256 = hex.EncodeToString(sum[:])
	}
	b.out = append(b.out, f)
	if err == nil && depth < maxFollowDepth {
		b.follow(dir, ref, data, depth+1)
	}
}

// unbound lists a file the command runs whose name is known only at run
// time (`. "$DIR/lib.sh"`, `include $(DEPS)`, `bash $SCRIPT`): nothing can
// bind its content, so the approval says so (as unreadable, with the
// reason) instead of leaving it out silently.
func (b *binder) unbound(ref execRef) {
	key := "\x00" + ref.path
	if b.seen[key] {
		return
	}
	b.seen[key] = true
	b.out = append(b.out, ExecFile{Path: ref.path, SHA256: Unreadable, Why: ref.why,
		Note: "its name is known only at run time ($VAR, a glob or a substitution): its content is not bound"})
}

// follow binds what a bound file runs in turn. A shell script (sourced, or
// run by a shell or by its #! line) runs in the directory of the command
// that runs it; a makefile's includes and recipes in make's directory.
func (b *binder) follow(dir string, ref execRef, data []byte, depth int) {
	switch {
	case ref.follow == followShell, ref.follow == followProgram && shellScript(data):
		b.commandLine(dir, true, string(data), depth)
	case ref.follow == followMake:
		mdir, ok := within(dir, ref.base)
		if !ok {
			return
		}
		includes, recipes := makefileParts(string(data))
		for _, inc := range includes {
			b.bind(mdir, execRef{path: inc, why: "included by " + path.Base(ref.path), follow: followMake, base: "."}, depth)
		}
		for _, line := range recipes {
			b.commandLine(mdir, true, line, depth)
		}
	}
}

// shellScript reports whether a program file is run by a shell: its #!
// line names one (directly or through env), or it has none (a shell runs
// a file without one itself).
func shellScript(data []byte) bool {
	if !strings.HasPrefix(string(data), "#!") {
		return !strings.ContainsRune(string(data[:min(len(data), 512)]), 0) // not a binary
	}
	line, _, _ := strings.Cut(string(data[2:]), "\n")
	words := strings.Fields(line)
	if len(words) > 0 && path.Base(words[0]) == "env" {
		words = words[1:]
		for len(words) > 0 && strings.HasPrefix(words[0], "-") {
			words = words[1:]
		}
	}
	if len(words) == 0 {
		return false
	}
	switch path.Base(words[0]) {
	case "sh", "bash", "dash", "zsh", "ksh", "ash", "mksh":
		return true
	}
	return false
}

// makefileParts returns the files a makefile includes (include, -include,
// sinclude; static names only: a name made of variables cannot be bound)
// and its recipe lines as shell text ($$ is the shell's $; a line's @, -
// and + prefixes dropped; continued lines joined).
func makefileParts(text string) (includes, recipes []string) {
	var lines []string
	var cur strings.Builder
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(l)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "\t") {
			r := strings.TrimLeft(l, "\t @-+")
			recipes = append(recipes, strings.ReplaceAll(r, "$$", "$"))
			continue
		}
		words := strings.Fields(l)
		if len(words) < 2 {
			continue
		}
		switch words[0] {
		case "include", "-include", "sinclude":
			for _, w := range words[1:] {
				if strings.HasPrefix(w, "#") {
					break
				}
				includes = append(includes, w)
			}
		}
	}
	return includes, recipes
}

// execRef is one file a command reads as code, relative to the directory it
// runs in. follow says what the binder reads inside it; base (makefiles) is
// the directory make runs in, relative to the command's.
type execRef struct {
	path, why string
	follow    followKind
	base      string
}

// followKind is how a bound file's own content is followed.
type followKind int

const (
	followNone    followKind = iota
	followShell              // a shell script: its commands
	followProgram            // an executable: its commands when a shell runs it
	followMake               // a makefile: its includes and recipes
)

// execRefs returns the files argv executes. argv[0] naming a path (./x,
// bin/x) is itself executed; otherwise the tool table decides.
func execRefs(argv []string) []execRef {
	name := argv[0]
	var refs []execRef
	if strings.Contains(name, "/") {
		refs = append(refs, execRef{path: name, why: "program", follow: followProgram})
	}
	base := path.Base(name)
	if t, ok := execTools[base]; ok {
		refs = append(refs, t(base, argv[1:])...)
	} else if v := versioned(base); v != "" {
		if t, ok := execTools[v]; ok {
			refs = append(refs, t(base, argv[1:])...)
		}
	}
	return refs
}

// versioned maps python3.12, ruby3.3, php8.2 and the like to their family.
func versioned(base string) string {
	for _, fam := range []string{"python3", "python", "ruby", "perl", "php", "node"} {
		if strings.HasPrefix(base, fam) && strings.Trim(base[len(fam):], "0123456789.") == "" {
			return fam
		}
	}
	return ""
}

// execTool returns the files a tool executes, given its arguments.
type execTool func(name string, args []string) []execRef

// execTools is the table of tools that run workspace files. Each entry is
// table-tested (execbind_test.go).
var execTools = map[string]execTool{
	"sh": shellScriptRef, "bash": shellScriptRef, "zsh": shellScriptRef, "dash": shellScriptRef,
	"ksh": shellScriptRef, "fish": shellScriptRef,
	"source": sourceRef, ".": sourceRef,
	"python": pythonRefs, "python3": pythonRefs, "pypy3": pythonRefs,
	"node": scriptRef(map[string]bool{"-r": true, "--require": true, "--import": true, "--loader": true},
		map[string]bool{"-e": true, "--eval": true, "-p": true, "--print": true}),
	"ruby": scriptRef(map[string]bool{"-r": true, "-I": true, "-C": true},
		map[string]bool{"-e": true}),
	"perl": scriptRef(map[string]bool{"-I": true, "-M": true, "-m": true},
		map[string]bool{"-e": true, "-E": true}),
	"php": scriptRef(map[string]bool{"-c": true, "-d": true},
		map[string]bool{"-r": true}),
	"deno":    denoRefs,
	"bun":     bunRefs,
	"make":    makeRefs,
	"gmake":   makeRefs,
	"npm":     packageJSON,
	"yarn":    packageJSON,
	"pnpm":    packageJSON,
	"just":    namedFile([]string{"justfile", "Justfile", ".justfile"}, "--justfile", ""),
	"task":    namedFile([]string{"Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "taskfile.yaml"}, "--taskfile", "-t"),
	"tox":     namedFile([]string{"tox.ini", "pyproject.toml", "setup.cfg"}, "", "-c"),
	"nox":     namedFile([]string{"noxfile.py"}, "--noxfile", "-f"),
	"pytest":  pytestRefs,
	"py.test": pytestRefs,
	"cargo":   cargoRefs,
	"go":      goRefs,
	"pip":     pipRefs,
	"pip3":    pipRefs,
	"rake":    namedFile([]string{"Rakefile", "rakefile", "Rakefile.rb"}, "--rakefile", "-f"),
	"gradle":  namedFile([]string{"build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"}, "--build-file", "-b"),
	"mvn":     namedFile([]string{"pom.xml"}, "--file", "-f"),
	"bundle":  namedFile([]string{"Gemfile"}, "--gemfile", ""),
	"composer": func(string, []string) []execRef {
		return []execRef{{path: "composer.json", why: "scripts of composer"}}
	},
}

// firstOperand returns the index of the first argument that is not an
// option, skipping the argument of options in withArg; -1 when every
// argument is an option, or an option in inline ends the search (the
// program comes from the command line, not a file).
func firstOperand(args []string, withArg, inline map[string]bool) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		case inline[a]:
			return -1
		case withArg[a]:
			i++
		case strings.HasPrefix(a, "-") && a != "-":
			if inline[a[:min(len(a), 2)]] && !strings.HasPrefix(a, "--") {
				return -1 // -e'code', -c'…'
			}
		default:
			return i
		}
	}
	return -1
}

// shellScriptRef: `bash [options] FILE`; -c runs its argument, -s reads
// stdin. Options taking an argument (-o opt, -O opt) are skipped.
func shellScriptRef(name string, args []string) []execRef {
	for _, a := range args {
		if a == "-s" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], "s")) {
			return nil
		}
	}
	i := firstOperand(args, map[string]bool{"-o": true, "+o": true, "-O": true, "+O": true, "--rcfile": true,
		"--init-file": true}, map[string]bool{"-c": true})
	if i < 0 {
		return nil
	}
	return []execRef{{path: args[i], why: "script of " + name, follow: followShell}}
}

// sourceRef: `source FILE` / `. FILE` runs FILE in the shell itself.
func sourceRef(name string, args []string) []execRef {
	if len(args) == 0 {
		return nil
	}
	return []execRef{{path: args[0], why: "sourced by " + name, follow: followShell}}
}

// scriptRef is an interpreter whose first operand is the script.
func scriptRef(withArg, inline map[string]bool) execTool {
	return func(name string, args []string) []execRef {
		i := firstOperand(args, withArg, inline)
		if i < 0 {
			return nil
		}
		return []execRef{{path: args[i], why: "script of " + name}}
	}
}

// pythonRefs: `python FILE`, `python -m pytest|pip|tox|nox …` as the tool
// itself would bind, and -c for inline code.
func pythonRefs(name string, args []string) []execRef {
	withArg := map[string]bool{"-W": true, "-X": true, "-Q": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || strings.HasPrefix(a, "-c"):
			return nil
		case a == "-m" && i+1 < len(args):
			mod, rest := args[i+1], args[i+2:]
			if t, ok := pythonModules[mod]; ok {
				return t(mod, rest)
			}
			return nil
		case withArg[a]:
			i++
		case a == "-" || !strings.HasPrefix(a, "-"):
			if a == "-" {
				return nil
			}
			return []execRef{{path: a, why: "script of " + name}}
		}
	}
	return nil
}

// pythonModules are the tools `python -m NAME` runs that bind files.
var pythonModules = map[string]execTool{
	"pytest": pytestRefs, "pip": pipRefs, "tox": namedFile([]string{"tox.ini", "pyproject.toml", "setup.cfg"}, "", "-c"),
	"nox": namedFile([]string{"noxfile.py"}, "--noxfile", "-f"),
}

// denoRefs: `deno run|test|bench|task [options] FILE`; task reads
// deno.json.
func denoRefs(name string, args []string) []execRef {
	if len(args) == 0 {
		return nil
	}
	switch args[0] {
	case "task":
		return []execRef{{path: "deno.json", why: "tasks of deno"}, {path: "deno.jsonc", why: "tasks of deno"}}
	case "run", "test", "bench":
		if i := firstOperand(args[1:], map[string]bool{"--config": true, "-c": true}, map[string]bool{}); i >= 0 {
			return []execRef{{path: args[1+i], why: "script of deno"}}
		}
	}
	return nil
}

// bunRefs: `bun run|test|start …` runs package.json scripts; `bun FILE`
// and `bun run FILE` run the file.
func bunRefs(name string, args []string) []execRef {
	refs := []execRef{{path: "package.json", why: "scripts of bun"}}
	i := firstOperand(args, map[string]bool{}, map[string]bool{"-e": true, "--eval": true})
	if i < 0 {
		return refs
	}
	target := args[i]
	if target == "run" {
		if j := firstOperand(args[i+1:], map[string]bool{}, map[string]bool{}); j >= 0 {
			target = args[i+1+j]
		}
	}
	if strings.ContainsAny(target, "./") {
		refs = append(refs, execRef{path: target, why: "script of bun"})
	}
	return refs
}

// makeRefs: -C DIR moves, -f FILE names the makefile; without -f GNU make
// reads the first of GNUmakefile, makefile, Makefile that exists (all three
// are bound, so creating one is drift).
func makeRefs(name string, args []string) []execRef {
	dir := "."
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-C" || a == "--directory") && i+1 < len(args):
			dir = path.Join(dir, args[i+1])
			i++
		case strings.HasPrefix(a, "--directory="):
			dir = path.Join(dir, strings.TrimPrefix(a, "--directory="))
		case strings.HasPrefix(a, "-C") && len(a) > 2:
			dir = path.Join(dir, a[2:])
		case (a == "-f" || a == "--file" || a == "--makefile") && i+1 < len(args):
			files = append(files, args[i+1])
			i++
		case strings.HasPrefix(a, "--file=") || strings.HasPrefix(a, "--makefile="):
			files = append(files, a[strings.IndexByte(a, '=')+1:])
		case strings.HasPrefix(a, "-f") && len(a) > 2:
			files = append(files, a[2:])
		}
	}
	if len(files) == 0 {
		files = []string{"GNUmakefile", "makefile", "Makefile"}
	}
	refs := make([]execRef, 0, len(files))
	for _, f := range files {
		refs = append(refs, execRef{path: path.Join(dir, f), why: "makefile of " + name, follow: followMake, base: dir})
	}
	return refs
}

// packageJSON: npm, yarn and pnpm run the scripts of package.json (run,
// test, start, install's lifecycle scripts …); --prefix / --cwd / -C move.
func packageJSON(name string, args []string) []execRef {
	dir := "."
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case (a == "--prefix" || a == "--cwd" || a == "-C" || a == "--dir") && i+1 < len(args):
			dir = args[i+1]
			i++
		case strings.HasPrefix(a, "--prefix=") || strings.HasPrefix(a, "--cwd=") || strings.HasPrefix(a, "--dir="):
			dir = a[strings.IndexByte(a, '=')+1:]
		}
	}
	return []execRef{{path: path.Join(dir, "package.json"), why: "scripts of " + name}}
}

// namedFile is a task runner that reads its task file by one of names, or
// the file named by its long or short option.
func namedFile(names []string, long, short string) execTool {
	return func(name string, args []string) []execRef {
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case (a == long && long != "" || a == short && short != "") && i+1 < len(args):
				return []execRef{{path: args[i+1], why: "task file of " + name}}
			case long != "" && strings.HasPrefix(a, long+"="):
				return []execRef{{path: strings.TrimPrefix(a, long+"="), why: "task file of " + name}}
			}
		}
		refs := make([]execRef, len(names))
		for i, n := range names {
			refs[i] = execRef{path: n, why: "task file of " + name}
		}
		return refs
	}
}

// pytestRefs: pytest imports conftest.py and reads its configuration
// (which can name plugins) from the first of these files; -c names another.
func pytestRefs(name string, args []string) []execRef {
	refs := namedFile([]string{"conftest.py", "pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"}, "", "-c")(name, args)
	if len(refs) == 1 {
		refs = append(refs, execRef{path: "conftest.py", why: "plugins of " + name})
	}
	for i := range refs {
		if path.Base(refs[i].path) == "conftest.py" {
			refs[i].why = "plugins of " + name
		}
	}
	return refs
}

// cargoRefs: every cargo command reads Cargo.toml, and build, run, test,
// check and the like compile and run build.rs; --manifest-path names
// another manifest (its build.rs sits beside it).
func cargoRefs(name string, args []string) []execRef {
	manifest := "Cargo.toml"
	for i := 0; i < len(args); i++ {
		if args[i] == "--manifest-path" && i+1 < len(args) {
			manifest = args[i+1]
		} else if strings.HasPrefix(args[i], "--manifest-path=") {
			manifest = strings.TrimPrefix(args[i], "--manifest-path=")
		}
	}
	return []execRef{{path: manifest, why: "manifest of cargo"}, {path: path.Join(path.Dir(manifest), "build.rs"), why: "build script of cargo"}}
}

// goRefs: `go run FILE.go …` and `go generate FILE.go …` execute the named
// files (generate runs their //go:generate lines).
func goRefs(name string, args []string) []execRef {
	if len(args) == 0 || (args[0] != "run" && args[0] != "generate") {
		return nil
	}
	var refs []execRef
	for _, a := range args[1:] {
		if strings.HasSuffix(a, ".go") && !strings.HasPrefix(a, "-") {
			refs = append(refs, execRef{path: a, why: "source of go " + args[0]})
		} else if len(refs) > 0 && !strings.HasPrefix(a, "-") {
			break // the program's own arguments
		}
	}
	return refs
}

// pipRefs: `pip install -r FILE` / `-c FILE` read requirement files (which
// can name further files and indexes); `pip install .` or `-e .` builds the
// project, running setup.py or pyproject.toml's build backend.
func pipRefs(name string, args []string) []execRef {
	if len(args) == 0 || args[0] != "install" {
		return nil
	}
	var refs []execRef
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-r" || a == "--requirement" || a == "-c" || a == "--constraint") && i+1 < len(args):
			refs = append(refs, execRef{path: args[i+1], why: "requirements of " + name})
			i++
		case strings.HasPrefix(a, "--requirement=") || strings.HasPrefix(a, "--constraint="):
			refs = append(refs, execRef{path: a[strings.IndexByte(a, '=')+1:], why: "requirements of " + name})
		case strings.HasPrefix(a, "-r") && len(a) > 2:
			refs = append(refs, execRef{path: a[2:], why: "requirements of " + name})
		case a == "-e" || a == "--editable":
		case a == "." || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../"):
			refs = append(refs, execRef{path: path.Join(a, "setup.py"), why: "build of " + name},
				execRef{path: path.Join(a, "pyproject.toml"), why: "build of " + name})
		}
	}
	return refs
}
