package approval

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct {
		name, text, wantErr string
	}{
		{"typo names the line", "version = 1\n\n[[write]]\nglob = \"a\"\nverdit = \"allow\"\n", `line 5: unknown field "write.verdit"`},
		{"unknown table", "version = 1\n[[shel]]\ncommand = \"ls\"\n", "line 2"},
		{"syntax", "version = 1\n[[write]\n", "line 2"},
		{"missing version", "[[write]]\nglob = \"a\"\nverdict = \"allow\"\n", "version = 0 is not supported"},
		{"future version", "version = 2\n", "version = 2 is not supported"},
		{"bad verdict", "version = 1\n[[write]]\nglob = \"a\"\nverdict = \"yes\"\n", `verdict "yes"`},
		{"bad glob", "version = 1\n[[write]]\nglob = \"a/[\"\nverdict = \"allow\"\n", "not a valid workspace-relative glob"},
		{"absolute glob", "version = 1\n[[write]]\nglob = \"/etc/*\"\nverdict = \"allow\"\n", "not a valid workspace-relative glob"},
		{"shell needs one form", "version = 1\n[[shell]]\nverdict = \"allow\"\n", "exactly one of command or prefix"},
		{"shell both forms", "version = 1\n[[shell]]\ncommand = \"ls\"\nprefix = [\"ls\"]\nverdict = \"allow\"\n", "exactly one"},
		{"shell compound command", "version = 1\n[[shell]]\ncommand = \"ls; rm x\"\nverdict = \"allow\"\n", "one simple command"},
		{"git action", "version = 1\n[[git]]\naction = \"deploy\"\nverdict = \"ask\"\n", `action "deploy"`},
		{"network host", "version = 1\n[[network]]\nhost = \"\"\nverdict = \"ask\"\n", "host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(tt.text))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParsePolicy error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestLoadPolicy(t *testing.T) {
	p, err := LoadPolicy(fstest.MapFS{})
	if err != nil || len(p.Write)+len(p.Shell)+len(p.Network)+len(p.Git) != 0 {
		t.Fatalf("missing file: %+v, %v", p, err)
	}
	fsys := fstest.MapFS{PolicyPath: {Data: []byte(precedencePolicy)}}
	p, err = LoadPolicy(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Write) != 7 || len(p.Shell) != 6 || len(p.Network) != 3 || len(p.Git) != 2 {
		t.Errorf("rules: %d write, %d shell, %d network, %d git", len(p.Write), len(p.Shell), len(p.Network), len(p.Git))
	}
	if _, err := LoadPolicy(fstest.MapFS{PolicyPath: {Data: []byte("version = 1\nx = 1\n")}}); err == nil {
		t.Error("LoadPolicy accepted an unknown field")
	}
}
