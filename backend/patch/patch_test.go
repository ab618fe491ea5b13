package patch

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/diffview"
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

// everyThird rewrites every third line: one hunk, which only a selection of
// lines can split.
const everyThirdOld = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\n"
const everyThirdNew = "l1\nl2\nL3\nl4\nl5\nL6\nl7\nl8\nL9\n"

func TestNarrowLines(t *testing.T) {
	w := open(t, map[string]string{"a.txt": everyThirdOld})
	pr, err := Prepare(w, "a.txt", func([]byte, bool) ([]byte, bool, error) { return []byte(everyThirdNew), false, nil })
	if err != nil {
		t.Fatal(err)
	}
	fd, _ := pr.Diff()
	if len(fd.Hunks) != 1 {
		t.Fatalf("want one hunk, got %d", len(fd.Hunks))
	}
	idx := func(op diffview.Op, text string) int {
		for i, l := range fd.Hunks[0].Lines {
			if l.Op == op && l.Text == text {
				return i
			}
		}
		t.Fatalf("no %s %q", op, text)
		return 0
	}
	resume := func(lines ...int) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"hunks": []backend.HunkRef{{Path: "a.txt", Index: 0, Lines: lines}}, "reason": "only 6"})
		return b
	}
	tests := []struct {
		name, want string
		lines      []int
		describe   []string
	}{
		{"one rewrite", strings.Replace(everyThirdOld, "l6", "L6", 1), []int{idx(diffview.OpDelete, "l6"), idx(diffview.OpAdd, "L6")},
			[]string{`old line 3 "l3" was kept`, `"L3" was not added`, `old line 9 "l9" was kept`, `"L9" was not added`,
				"approved only some lines", "(reason: only 6)"}},
		{"an addition only", strings.Replace(everyThirdOld, "l9\n", "l9\nL9\n", 1), []int{idx(diffview.OpAdd, "L9")},
			[]string{`old line 9 "l9" was kept`, `old line 6 "l6" was kept`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, sel, err := Narrow(pr, resume(tt.lines...))
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Next) != tt.want || !sel.Partial() {
				t.Fatalf("narrowed to %q", got.Next)
			}
			for _, d := range tt.describe {
				if !strings.Contains(sel.Describe(), d) {
					t.Fatalf("describe %q lacks %q", sel.Describe(), d)
				}
			}
			if strings.Contains(sel.Describe(), "rejected @@") {
				t.Fatalf("no hunk was rejected whole: %q", sel.Describe())
			}
		})
	}
	// Every changed line chosen is the whole change, not a partial one.
	var all []int
	for i, l := range fd.Hunks[0].Lines {
		if l.Op != diffview.OpContext {
			all = append(all, i)
		}
	}
	if got, sel, err := Narrow(pr, resume(all...)); err != nil || string(got.Next) != everyThirdNew || sel.Partial() || sel.Describe() != "" {
		t.Fatalf("all lines: %v %q %q", err, got.Next, sel.Describe())
	}
	for _, bad := range [][]int{{99}, {idx(diffview.OpContext, "l1")}, {all[0], all[0]}} {
		if _, _, err := Narrow(pr, resume(bad...)); !errors.Is(err, diffview.ErrInvalid) {
			t.Fatalf("lines %v: err = %v, want refused", bad, err)
		}
	}
}
