package approval

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// part is the comparable view of a Part in the table below.
type part struct {
	Argv     string // words joined by "|"
	Env      string
	Dynamic  bool
	Redirect bool
	Elevated bool
	Wrappers string
	Opaque   bool
}

func view(ps []Part) []part {
	out := make([]part, 0, len(ps))
	for _, p := range ps {
		out = append(out, part{
			Argv: strings.Join(p.Argv, "|"), Env: strings.Join(p.Env, ","), Dynamic: p.Dynamic,
			Redirect: p.Redirect, Elevated: p.Elevated, Wrappers: strings.Join(p.Wrappers, ","),
			Opaque: p.Opaque != "",
		})
	}
	return out
}

func TestParseShell(t *testing.T) {
	tests := []struct {
		in          string
		want        []part
		unsupported bool
	}{
		{in: "git status", want: []part{{Argv: "git|status"}}},
		{in: "  ls   -la  ", want: []part{{Argv: "ls|-la"}}},
		{in: `echo "a b" 'c d' e\ f`, want: []part{{Argv: "echo|a b|c d|e f"}}},
		{in: `echo "say \"hi\"" 'it'\''s'`, want: []part{{Argv: `echo|say "hi"|it's`}}},
		{in: "a; b", want: []part{{Argv: "a"}, {Argv: "b"}}},
		{in: "a && b || c", want: []part{{Argv: "a"}, {Argv: "b"}, {Argv: "c"}}},
		{in: "a | b |& c", want: []part{{Argv: "a"}, {Argv: "b"}, {Argv: "c"}}},
		{in: "a & b", want: []part{{Argv: "a"}, {Argv: "b"}}},
		{in: "a\nb\n", want: []part{{Argv: "a"}, {Argv: "b"}}},
		{in: "a \\\n  b", want: []part{{Argv: "a|b"}}},
		{in: "(cd sub; make) && ls", want: []part{{Argv: "cd|sub"}, {Argv: "make"}, {Argv: "ls"}}},
		{in: "echo $(git push)", want: []part{{Argv: "git|push"}, {Argv: "echo|$(git push)", Dynamic: true}}},
		{in: "echo \"$(rm -rf x)\"", want: []part{{Argv: "rm|-rf|x"}, {Argv: `echo|"$(rm -rf x)"`, Dynamic: true}}},
		{in: "echo `whoami`", want: []part{{Argv: "whoami"}, {Argv: "echo|$(whoami)", Dynamic: true}}},
		{in: "echo $(a $(b))", want: []part{{Argv: "b"}, {Argv: "a|$(b)", Dynamic: true}, {Argv: "echo|$(a $(b))", Dynamic: true}}},
		{in: "echo $HOME ${USER}", want: []part{{Argv: "echo|$HOME|$USER", Dynamic: true}}},
		{in: "ls *.go", want: []part{{Argv: "ls|*.go", Dynamic: true}}},
		{in: "echo '$HOME'", want: []part{{Argv: "echo|$HOME"}}},
		{in: "echo hi > out.txt", want: []part{{Argv: "echo|hi", Redirect: true}}},
		{in: "echo hi >> out.txt 2>&1", want: []part{{Argv: "echo|hi", Redirect: true}}},
		{in: "make 2>/dev/null", want: []part{{Argv: "make"}}},
		{in: "make &> log", want: []part{{Argv: "make", Redirect: true}}},
		{in: "wc -l < in.txt", want: []part{{Argv: "wc|-l"}}},
		{in: "cat <<< $(id)", want: []part{{Argv: "id"}, {Argv: "cat"}}},
		{in: "FOO=1 BAR=2 make", want: []part{{Argv: "make", Env: "FOO,BAR"}}},
		{in: "bash -c 'git push origin main'", want: []part{{Argv: "git|push|origin|main", Wrappers: "bash -c"}}},
		{in: "sh -c \"ls; rm x\"", want: []part{{Argv: "ls", Wrappers: "sh -c"}, {Argv: "rm|x", Wrappers: "sh -c"}}},
		{in: "bash -lc 'make test'", want: []part{{Argv: "make|test", Wrappers: "bash -c"}}},
		{in: "bash -e -o pipefail -c 'a | b'", want: []part{{Argv: "a", Wrappers: "bash -c"}, {Argv: "b", Wrappers: "bash -c"}}},
		{in: "bash script.sh", want: []part{{Argv: "bash|script.sh"}}},
		{in: "/bin/bash -c 'sh -c \"git push\"'", want: []part{{Argv: "git|push", Wrappers: "bash -c,sh -c"}}},
		{in: "env FOO=1 git push", want: []part{{Argv: "git|push", Env: "FOO", Wrappers: "env"}}},
		{in: "env -i -u X PATH=/x make", want: []part{{Argv: "make", Env: "PATH", Wrappers: "env"}}},
		{in: "/usr/bin/env git status", want: []part{{Argv: "git|status", Wrappers: "env"}}},
		{in: "sudo rm -rf /", want: []part{{Argv: "rm|-rf|/", Elevated: true, Wrappers: "sudo"}}},
		{in: "sudo -u deploy -E make install", want: []part{{Argv: "make|install", Elevated: true, Wrappers: "sudo"}}},
		{in: "sudo -nE -- ls", want: []part{{Argv: "ls", Elevated: true, Wrappers: "sudo"}}},
		{in: "find . -name x | xargs rm", want: []part{{Argv: "find|.|-name|x"}, {Argv: "rm", Dynamic: true, Wrappers: "xargs"}}},
		{in: "xargs -0 -n 1 -I {} git push", want: []part{{Argv: "git|push", Dynamic: true, Wrappers: "xargs"}}},
		{in: "nice -n 10 make", want: []part{{Argv: "make", Wrappers: "nice"}}},
		{in: "nice -5 make", want: []part{{Argv: "make", Wrappers: "nice"}}},
		{in: "timeout 30 go test ./...", want: []part{{Argv: "go|test|./...", Wrappers: "timeout"}}},
		{in: "timeout -s KILL -k 5 1m go test", want: []part{{Argv: "go|test", Wrappers: "timeout"}}},
		{in: "nohup ./server", want: []part{{Argv: "./server", Wrappers: "nohup"}}},
		{in: "timeout 5 nice -n 2 env A=1 sudo bash -c 'git push'", want: []part{{Argv: "git|push", Env: "A", Elevated: true, Wrappers: "timeout,nice,env,sudo,bash -c"}}},
		{in: "ls # a comment; rm -rf /", want: []part{{Argv: "ls"}}},
		{in: "", want: []part{}},
		// The maintained parser models what the old lexer refused: each
		// simple command inside is a part of its own (issue 14 item 4).
		{in: "cat <<EOF\nx $(rm y)\nEOF", want: []part{{Argv: "rm|y"}, {Argv: "cat"}}},
		{in: "cat <<'EOF'\nx $(rm y)\nEOF", want: []part{{Argv: "cat"}}},
		{in: "if true; then ls; fi", want: []part{{Argv: "true"}, {Argv: "ls"}}},
		{in: "for f in *; do rm $f; done", want: []part{{Argv: "rm|$f", Dynamic: true}}},
		{in: "while read l; do rm x; done < list", want: []part{{Argv: "read|l"}, {Argv: "rm|x"}}},
		{in: "{ ls; } > out", want: []part{{Argv: "ls", Redirect: true}}},
		{in: "! rm x", want: []part{{Argv: "rm|x", Wrappers: "!"}}},
		{in: "time rm x", want: []part{{Argv: "rm|x", Wrappers: "time"}}},
		{in: "echo $((1+2))", want: []part{{Argv: "echo|$((1+2))", Dynamic: true, Opaque: true}}},
		{in: "diff <(ls a) <(ls b)", want: []part{{Argv: "ls|a"}, {Argv: "ls|b"}, {Argv: "diff|<(ls a)|<(ls b)", Dynamic: true}}},
		{in: "X=1", want: []part{{Env: "X", Opaque: true}}},
		{in: "bash -c", want: []part{{Argv: "bash|-c", Opaque: true}}},
		{in: "bash -c \"$CMD\"", want: []part{{Argv: `bash|-c|"$CMD"`, Dynamic: true, Opaque: true}}},
		{in: "eval \"$CMD\"", want: []part{{Argv: `eval|"$CMD"`, Dynamic: true, Opaque: true}}},
		{in: "$X rm -rf /", want: []part{{Argv: "$X|rm|-rf|/", Dynamic: true, Opaque: true}}},
		{in: "env -S 'git push'", want: []part{{Argv: "git|push", Wrappers: "env -c"}}},
		{in: "sudo -i", want: []part{{Argv: "sudo|-i", Elevated: true}}},
		{in: "timeout --weird 5 ls", want: []part{{Argv: "timeout|--weird|5|ls", Opaque: true}}},
		{in: "echo $'\\x41'", want: []part{{Argv: "echo|A"}}},
		{in: "$'\\x72\\x6d' -rf /", want: []part{{Argv: "rm|-rf|/"}}},
		{in: "$'\\162\\155' x", want: []part{{Argv: "rm|x"}}},
		{in: "$'\\u0072m' x", want: []part{{Argv: "rm|x"}}},
		{in: "echo $'a\\tb\\'c'", want: []part{{Argv: "echo|a\tb'c"}}},
		{in: "$'ls\\x00rm' x", want: []part{{Argv: `$'ls\x00rm'|x`, Dynamic: true, Opaque: true}}},
		{in: "$'\\cA' x", want: []part{{Argv: `$'\cA'|x`, Dynamic: true, Opaque: true}}},
		{in: "echo ${X:-$(rm x)}", want: []part{{Argv: "rm|x"}, {Argv: "echo|${X:-$(rm x)}", Dynamic: true}}},
		{in: "echo ${!X}", want: []part{{Argv: "echo|${!X}", Dynamic: true, Opaque: true}}},
		{in: "f() { ls; }", want: []part{{Argv: "ls"}}},
		{in: "case x in a) ls;; esac", want: []part{{Argv: "ls"}}},
		{in: "python3 -c 'print(1)'", want: []part{{Argv: "python3|-c|print(1)", Opaque: true}}},
		{in: "python3 build.py", want: []part{{Argv: "python3|build.py"}}},
		{in: "find . -name '*.o' -exec rm {} \\;", want: []part{{Argv: "rm|{}", Dynamic: true, Wrappers: "find -exec"}, {Argv: "find|.|-name|*.o|-exec|rm|{}|;"}}},
		{in: "echo 'open", unsupported: true},
		{in: "echo \"open", unsupported: true},
		{in: "echo `open", unsupported: true},
		{in: "echo $(open", unsupported: true},
		{in: "ls )", unsupported: true},
		{in: "(ls", unsupported: true},
		{in: strings.Repeat("find . -exec ", 3000) + "rm x", unsupported: true}, // quadratic work is refused
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := ParseShell(tt.in)
			if tt.unsupported {
				if got.Unsupported == "" {
					t.Fatalf("ParseShell(%q) = %+v, want unsupported", tt.in, view(got.Parts))
				}
				if len(got.Parts) != 0 {
					t.Errorf("unsupported parse kept parts: %+v", view(got.Parts))
				}
				return
			}
			if got.Unsupported != "" {
				t.Fatalf("ParseShell(%q): unexpected unsupported %q", tt.in, got.Unsupported)
			}
			if diff := cmp.Diff(tt.want, view(got.Parts)); diff != "" {
				t.Errorf("ParseShell(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func FuzzParseShell(f *testing.F) {
	for _, s := range []string{
		"git status && rm -rf /", "bash -c 'sh -c \"git push\"'", "echo $(a `b` $(c))", "x=1 y=$(z) cmd",
		"sudo -u x env A=1 xargs -I{} nice -n 1 timeout 5 ls", "a <<< b 2>&1 >| c &> d", "(a; (b | c)) || d",
		"echo \"${x}\" '$y' \\$z", "cat <<EOF", "$((1))", "git -c alias.p=push p",
	} {
		f.Add(s)
	}
	p := &Policy{Version: PolicyVersion, Shell: []ShellRule{{Prefix: []string{"git", "status"}, Verdict: "allow"}}}
	f.Fuzz(func(t *testing.T, s string) {
		parsed := ParseShell(s)
		if parsed.Unsupported != "" && len(parsed.Parts) > 0 {
			t.Fatalf("unsupported with parts: %q", s)
		}
		for _, part := range parsed.Parts {
			if len(part.dyn) != len(part.Argv) {
				t.Fatalf("dyn/argv length mismatch for %q", s)
			}
		}
		r := p.Evaluate(Action{Kind: "shell", Command: s})
		if parsed.Unsupported != "" && r.Verdict == "allow" {
			t.Fatalf("unparsable command allowed: %q", s)
		}
		if len(r.Trace) == 0 {
			t.Fatalf("empty trace for %q", s)
		}
	})
}
