package approval

import (
	"os"
	"path/filepath"
	"testing"

	"agenthub/backend"
	"agenthub/backend/canon"
)

func TestSubjectStability(t *testing.T) {
	pre := []Preimage{{Path: "b.go", SHA256: "bb"}, {Path: "a.go", SHA256: Absent}}
	reversed := []Preimage{pre[1], pre[0]}
	tests := []struct {
		name      string
		a, b      Action
		wantEqual bool
	}{
		{"preimage order", Action{Kind: "patch", Workspace: "w1", Patch: []byte("p"), Preimages: pre},
			Action{Kind: "patch", Workspace: "w1", Patch: []byte("p"), Preimages: reversed}, true},
		{"patch bytes", Action{Kind: "patch", Patch: []byte("p1"), Preimages: pre},
			Action{Kind: "patch", Patch: []byte("p2"), Preimages: pre}, false},
		{"preimage content", Action{Kind: "write", Patch: []byte("x"), Preimages: []Preimage{{Path: "a", SHA256: "1"}}},
			Action{Kind: "write", Patch: []byte("x"), Preimages: []Preimage{{Path: "a", SHA256: "2"}}}, false},
		{"workspace", Action{Kind: "patch", Workspace: "w1"}, Action{Kind: "patch", Workspace: "w2"}, false},
		{"env key order", Action{Kind: "shell", Argv: []string{"make"}, Env: map[string]string{"A": "1", "B": "2"}},
			Action{Kind: "shell", Argv: []string{"make"}, Env: map[string]string{"B": "2", "A": "1"}}, true},
		{"env value", Action{Kind: "shell", Argv: []string{"make"}, Env: map[string]string{"A": "1"}},
			Action{Kind: "shell", Argv: []string{"make"}, Env: map[string]string{"A": "2"}}, false},
		{"nil and empty env", Action{Kind: "shell", Argv: []string{"make"}},
			Action{Kind: "shell", Argv: []string{"make"}, Env: map[string]string{}}, true},
		{"argv", Action{Kind: "shell", Argv: []string{"rm", "a"}}, Action{Kind: "shell", Argv: []string{"rm", "b"}}, false},
		{"cwd spelling", Action{Kind: "shell", Argv: []string{"ls"}, Cwd: "a/./b"}, Action{Kind: "shell", Argv: []string{"ls"}, Cwd: "a/b"}, true},
		{"cwd", Action{Kind: "shell", Argv: []string{"ls"}, Cwd: "a"}, Action{Kind: "shell", Argv: []string{"ls"}}, false},
		{"url normalisation", Action{Kind: "network", Method: "get", URL: "HTTPS://Example.COM:443/a?b=1#frag"},
			Action{Kind: "network", Method: "GET", URL: "https://example.com/a?b=1"}, true},
		{"url path case matters", Action{Kind: "network", URL: "https://example.com/A"}, Action{Kind: "network", URL: "https://example.com/a"}, false},
		{"non-default port", Action{Kind: "network", URL: "https://example.com:8443/"}, Action{Kind: "network", URL: "https://example.com/"}, false},
		{"push ref", Action{Kind: "push", Remote: "origin", Ref: "main"}, Action{Kind: "push", Remote: "origin", Ref: "dev"}, false},
		{"push via shell binds argv", Action{Kind: "push", Command: "git push origin main"}, Action{Kind: "push", Command: "git push -f origin main"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ha := Subject(tt.a)
			_, hb := Subject(tt.b)
			if ha == "" || hb == "" || ha[:7] != "sha256:" {
				t.Fatalf("bad hashes %q %q", ha, hb)
			}
			if (ha == hb) != tt.wantEqual {
				t.Errorf("equal = %v, want %v (%s vs %s)", ha == hb, tt.wantEqual, ha, hb)
			}
		})
	}
}

func TestSubjectShape(t *testing.T) {
	a := Action{Kind: "patch", Workspace: "ws", Patch: []byte("diff"), Preimages: []Preimage{{Path: "z", SHA256: "1"}, {Path: "a", SHA256: Absent}}}
	subject, hash := Subject(a)
	got, err := canon.Marshal(subject)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"patch","patchSha256":"df087996d45b03e7eb8c133c0298fd98d35113fca26aaba58612fef3cc212cad","preimages":[{"path":"a","sha256":"absent"},{"path":"z","sha256":"1"}],"workspace":"ws"}`
	if string(got) != want {
		t.Errorf("subject JSON\n got %s\nwant %s", got, want)
	}
	if _, again := Subject(a); again != hash {
		t.Errorf("hash not deterministic")
	}
}

// TestPatchDrift is the TOCTOU check of AP10: a subject recomputed from the
// live workspace after the file changed no longer matches the approval.
func TestPatchDrift(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	paths := []string{"a.txt", "new.txt"}
	subjectAt := func() string {
		pre, err := HashPreimages(root.FS(), paths)
		if err != nil {
			t.Fatal(err)
		}
		_, h := Subject(Action{Kind: "patch", Workspace: "w", Patch: []byte("the patch"), Paths: paths, Preimages: pre})
		return h
	}
	approved := subjectAt()
	if again := subjectAt(); again != approved {
		t.Fatalf("unchanged workspace gives a different subject")
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if subjectAt() == approved {
		t.Errorf("changed file did not change the subject")
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if subjectAt() == approved {
		t.Errorf("a file appearing did not change the subject")
	}
	if _, err := HashPreimages(root.FS(), []string{"../escape"}); err == nil {
		t.Errorf("HashPreimages accepted an escaping path")
	}
}

func TestRisk(t *testing.T) {
	p := DefaultPolicy()
	for _, tt := range []struct {
		a    Action
		want backend.Risk
	}{
		{Action{Kind: "read", Path: "a"}, backend.RiskLow},
		{Action{Kind: "write", Path: "a"}, backend.RiskMedium},
		{Action{Kind: "shell", Command: "go test"}, backend.RiskMedium},
		{Action{Kind: "shell", Command: "ls && rm -rf x"}, backend.RiskHigh},
		{Action{Kind: "shell", Command: "sudo ls"}, backend.RiskHigh},
		{Action{Kind: "shell", Command: `python3 -c 'print(1)'`}, backend.RiskHigh},
		{Action{Kind: "shell", Command: `eval "$CMD"`}, backend.RiskHigh},
		{Action{Kind: "shell", Command: "git push"}, backend.RiskHigh},
		{Action{Kind: "network", URL: "https://x.io"}, backend.RiskMedium},
		{Action{Kind: "deploy"}, backend.RiskHigh},
	} {
		if got := RiskOf(tt.a, p.Evaluate(tt.a)); got != tt.want {
			t.Errorf("RiskOf(%+v) = %s, want %s", tt.a, got, tt.want)
		}
	}
}
