package approval

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/workspace"
)

// TestExecFilesFollowWhatFilesRun: what a bound file runs is bound too
// (issue 14: the include of an approved Makefile and the library an
// approved script sources were edited after the approval and ran): a
// script's sourced libraries and the scripts and tools it runs, a
// makefile's includes (existing or not) and the scripts its recipes run,
// transitively; cycles stop, and a name known only at run time is listed
// as unbound.
func TestExecFilesFollowWhatFilesRun(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "ws")
	files := map[string]string{
		"build.sh":       ". ./lib.sh\nsource scripts/env.sh\nbash ./step.sh\nmake -C sub\n",
		"lib.sh":         "helper() { ./deep.sh; }\n",
		"deep.sh":        "#!/bin/sh\necho deep\n",
		"scripts/env.sh": "X=1\n",
		"step.sh":        ". \"$DIR/dyn.sh\"\n. ./step.sh\n", // dynamic: not bound; itself: a cycle
		"sub/Makefile":   "include rules.mk\n",
		"sub/rules.mk":   "all:\n\t@./gen.sh $$HOME \\\n\t  --flag\n",
		"sub/gen.sh":     "echo gen\n",
		"Makefile":       "include common.mk local.mk # comment\n-include $(DEPS)\nall:\n\tpython3 tool.py\n",
		"common.mk":      "sinclude more.mk\n",
		"more.mk":        "x:\n\tbash build.sh\n",
		"tool.py":        "print(1)\n",
		"run":            "#!/usr/bin/env bash\n. ./lib.sh\n",
		"app":            "#!/usr/bin/python3\nimport lib\n",
	}
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	buildTree := []string{`"$DIR/dyn.sh" unbound`, "build.sh", "deep.sh", "lib.sh", "scripts/env.sh", "step.sh",
		"sub/GNUmakefile absent", "sub/Makefile", "sub/gen.sh", "sub/makefile absent", "sub/rules.mk"}
	tests := []struct {
		cmd  string
		want []string
	}{
		{"bash ./build.sh", buildTree},
		{"make", append([]string{"$(DEPS) unbound", "GNUmakefile absent", "Makefile", "makefile absent", "common.mk", "local.mk absent",
			"more.mk", "tool.py"}, buildTree...)},
		{"./run", []string{"deep.sh", "lib.sh", "run"}},
		{"./app", []string{"app"}},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			var got []string
			for _, f := range ExecFiles(w, "", tc.cmd) {
				s := f.Path
				switch {
				case f.SHA256 == Absent:
					s += " absent"
				case f.SHA256 == Unreadable && strings.Contains(f.Note, "known only at run time"):
					s += " unbound"
				}
				got = append(got, s)
			}
			want := append([]string(nil), tc.want...)
			sort.Strings(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
