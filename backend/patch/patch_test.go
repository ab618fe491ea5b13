package patch

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/workspace"
)

const twoParts = "alpha\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nomega\n"

func open(t *testing.T, files map[string]string) *workspace.FS {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	w, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func replace(old, new string) Next {
	return func(cur []byte, _ bool) ([]byte, bool, error) {
		return []byte(strings.Replace(string(cur), old, new, 1)), false, nil
	}
}

func TestPrepare(t *testing.T) {
	w := open(t, map[string]string{"a.txt": twoParts})
	tests := []struct {
		name, path, wantErr string
		next                Next
	}{
		{"modify", "a.txt", "", replace("alpha", "ALPHA")},
		{"create", "new/b.txt", "", func([]byte, bool) ([]byte, bool, error) { return []byte("b\n"), false, nil }},
		{"unchanged", "a.txt", "nothing to change", replace("zzz", "y")},
		{"root", ".", "workspace root", replace("a", "b")},
		{"protected", ".git/config", "protected", replace("a", "b")},
		{"symlink", "link", "symbolic link", replace("a", "b")},
		{"control", "a\tb", "control characters", replace("a", "b")},
		{"agent error", "a.txt", "boom", func([]byte, bool) ([]byte, bool, error) { return nil, false, errors.New("boom") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, err := Prepare(w, tt.path, tt.next)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pr.Path != tt.path || pr.Preimage() == pr.Postimage() {
				t.Fatalf("proposal %+v", pr)
			}
		})
	}
}

func TestGatedAndNarrow(t *testing.T) {
	w := open(t, map[string]string{"a.txt": twoParts})
	both := func(cur []byte, _ bool) ([]byte, bool, error) {
		s := strings.Replace(strings.Replace(string(cur), "alpha", "ALPHA", 1), "omega", "OMEGA", 1)
		return []byte(s), false, nil
	}
	pr, err := Prepare(w, "a.txt", both)
	if err != nil {
		t.Fatal(err)
	}
	act, err := Gated(backend.ToolEnv{WorkspaceID: "ws"}, Request{Tool: "Write", Runtime: "x"}, pr)
	if err != nil {
		t.Fatal(err)
	}
	var pv Preview
	if err := json.Unmarshal(act.Preview, &pv); err != nil || len(pv.Diff.Hunks) != 2 || pv.Runtime != "x" ||
		act.Kind != backend.ActionPatch || !strings.Contains(string(act.Subject), pr.Postimage()) {
		t.Fatalf("gated: %v %+v %s", err, pv, act.Subject)
	}
	tests := []struct {
		name, resume, want, describe string
		err                          error
	}{
		{"whole", `{"decision":"approve_once"}`, string(pr.Next), "", nil},
		{"first hunk", `{"hunks":[{"path":"a.txt","index":0}],"reason":"no"}`,
			strings.Replace(twoParts, "alpha", "ALPHA", 1), "approved 1 of 2 hunks and rejected @@ -9,4 +9,4 @@ (reason: no)", nil},
		{"none", `{"hunks":[]}`, "", "", ErrNothingApproved},
		{"other file only", `{"hunks":[{"path":"b.txt","index":0}]}`, "", "", ErrNothingApproved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, sel, err := Narrow(pr, json.RawMessage(tt.resume))
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if string(got.Next) != tt.want || !strings.Contains(sel.Describe(), tt.describe) {
				t.Fatalf("narrowed to %q, describe %q", got.Next, sel.Describe())
			}
		})
	}
	if _, _, err := Narrow(pr, json.RawMessage(`{"hunks":[{"path":"a.txt","index":7}]}`)); err == nil {
		t.Fatal("a hunk index out of range must be refused")
	}
}
