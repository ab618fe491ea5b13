package tools

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
	"agenthub/backend/patch"
	"agenthub/workspace"
)

// snapshot maps every file under dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type subjectShape struct {
	Kind      string `json:"kind"`
	Tool      string `json:"tool"`
	Workspace string `json:"workspace"`
	Path      string `json:"path"`
	Preimages []struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
	} `json:"preimages"`
	Postimage string `json:"postimage"`
}

func TestMutatingToolsProposeThenApply(t *testing.T) {
	const orig = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	const edited = "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	tests := []struct {
		name, tool, args, path string
		before, after          string // "" before: absent; "<absent>" after: deleted
		op                     string
		diffHas                []string
		result                 string
	}{
		{name: "create", tool: WriteFile, path: "cmd/new/main.go", args: `{"path":"cmd/new/main.go","content":` + quote(orig) + `}`,
			after: orig, op: "create", diffHas: []string{"new file mode 100644", "+++ b/cmd/new/main.go", "+func main() {"},
			result: "write_file: created cmd/new/main.go (" + itoa(len(orig)) + " bytes); checkpoint ck_"},
		{name: "overwrite", tool: WriteFile, path: "main.go", args: `{"path":"main.go","content":` + quote(edited) + `}`,
			before: orig, after: edited, op: "modify", diffHas: []string{"--- a/main.go", "-\tprintln(\"hi\")", "+\tprintln(\"hello\")"},
			result: "write_file: updated main.go"},
		{name: "edit", tool: EditFile, path: "main.go", args: `{"path":"main.go","old_string":"\"hi\"","new_string":"\"hello\""}`,
			before: orig, after: edited, op: "modify", diffHas: []string{"@@ -1,5 +1,5 @@", "-\tprintln(\"hi\")", "+\tprintln(\"hello\")"},
			result: "edit_file: updated main.go"},
		{name: "delete", tool: DeleteFile, path: "main.go", args: `{"path":"main.go"}`,
			before: orig, after: "<absent>", op: "delete", diffHas: []string{"deleted file mode 100644", "+++ /dev/null", "-package main"},
			result: "delete_file: deleted main.go (was " + itoa(len(orig)) + " bytes)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.write(t, "other.txt", "keep\n")
			if tc.before != "" {
				f.write(t, tc.path, tc.before)
			}
			disk := snapshot(t, f.root)
			a := f.action(t, tc.tool, tc.args)
			if a == nil || a.Kind != backend.ActionPatch {
				t.Fatalf("Action = %+v, want a patch", a)
			}
			if diff := cmp.Diff(disk, snapshot(t, f.root)); diff != "" {
				t.Fatalf("Action touched the disk (-before +after):\n%s", diff)
			}
			if n := len(snapshot(t, f.ckDir)); n != 0 {
				t.Fatalf("Action wrote %d checkpoint files", n)
			}
			checkSubject(t, a, tc.tool, tc.path, tc.before, tc.after)
			checkPreview(t, f, a, tc.tool, tc.path, tc.op, tc.before, tc.after, tc.diffHas)

			res := f.execute(t, tc.tool, tc.args)
			if res.IsError || !strings.HasPrefix(res.Content, tc.result) {
				t.Fatalf("Execute = %+v, want %q…", res, tc.result)
			}
			if got := f.read(t, tc.path); got != tc.after {
				t.Errorf("%s = %q, want %q", tc.path, got, tc.after)
			}
			if got := f.read(t, "other.txt"); got != "keep\n" {
				t.Errorf("other.txt = %q", got)
			}
			checkCheckpoint(t, f, res.Content, tc.path, tc.before)
		})
	}
}

func checkSubject(t *testing.T, a *backend.GatedAction, tool, path, before, after string) {
	t.Helper()
	var s subjectShape
	mustJSON(t, a.Subject, &s)
	pre, post := workspace.Absent, workspace.Absent
	if before != "" {
		pre = workspace.Hash([]byte(before))
	}
	if after != "<absent>" {
		post = workspace.Hash([]byte(after))
	}
	want := subjectShape{Kind: "patch", Tool: tool, Workspace: "ws_1", Path: path, Postimage: post}
	want.Preimages = append(want.Preimages, struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
	}{path, pre})
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("subject (-want +got):\n%s", diff)
	}
}

func checkPreview(t *testing.T, f *fixture, a *backend.GatedAction, tool, path, op, before, after string, has []string) {
	t.Helper()
	var pv patch.Preview
	mustJSON(t, a.Preview, &pv)
	newSize := len(after)
	if after == "<absent>" {
		newSize = 0
	}
	if pv.Tool != tool || pv.Path != path || pv.Operation != op || pv.OldSize != len(before) || pv.NewSize != newSize {
		t.Errorf("preview %s/%s/%s sizes %d→%d, want %s/%s/%s %d→%d", pv.Tool, pv.Path, pv.Operation, pv.OldSize,
			pv.NewSize, tool, path, op, len(before), newSize)
	}
	for _, h := range has {
		if !strings.Contains(pv.Unified, h) {
			t.Errorf("unified diff lacks %q:\n%s", h, pv.Unified)
		}
	}
	if len(pv.Diff.Hunks) == 0 {
		t.Errorf("preview has no hunks")
	}
	if !strings.Contains(a.Title, path) {
		t.Errorf("title %q does not name %s", a.Title, path)
	}
	f.noMachinePaths(t, "preview", string(a.Preview))
	f.noMachinePaths(t, "subject", string(a.Subject))
}

// checkCheckpoint: the result names a checkpoint that holds the pre-image,
// and undoing it restores the file.
func checkCheckpoint(t *testing.T, f *fixture, result, path, before string) {
	t.Helper()
	i := strings.Index(result, "ck_")
	if i < 0 {
		t.Fatalf("result %q names no checkpoint", result)
	}
	id := strings.Fields(result[i:])[0]
	store, err := workspace.NewCheckpointStore(f.ckDir, 0)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := store.Load(id)
	if err != nil || len(ck.Files) != 1 || ck.Files[0].Path != path {
		t.Fatalf("checkpoint %s = %+v, %v", id, ck, err)
	}
	evs := f.eventsOf(backend.EvPatchApplied)
	if len(evs) != 1 || evs[0].(map[string]any)["checkpointId"] != id {
		t.Errorf("run.patch.applied events: %+v", evs)
	}
	w, err := workspace.Open(f.root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := workspace.Undo(w, store, id); err != nil {
		t.Fatal(err)
	}
	want := before
	if want == "" {
		want = "<absent>"
	}
	if got := f.read(t, path); got != want {
		t.Errorf("after undo %s = %q, want %q", path, got, want)
	}
}

// TestChangedPreimageWritesNothing: a file edited between the proposal and
// its execution is a tool error, and the other edit survives.
func TestChangedPreimageWritesNothing(t *testing.T) {
	tests := []struct{ tool, args string }{
		{WriteFile, `{"path":"a.txt","content":"agent\n"}`},
		{EditFile, `{"path":"a.txt","old_string":"v1","new_string":"agent"}`},
		{DeleteFile, `{"path":"a.txt"}`},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			f := newFixture(t)
			f.write(t, "a.txt", "v1\n")
			if a := f.action(t, tc.tool, tc.args); a == nil || a.Kind != backend.ActionPatch {
				t.Fatalf("Action = %+v", a)
			}
			f.write(t, "a.txt", "v1 edited by the user\n")
			res := f.execute(t, tc.tool, tc.args)
			if !res.IsError || !strings.Contains(res.Content, "nothing was written: a.txt changed since the change was proposed") {
				t.Fatalf("Execute = %+v", res)
			}
			if got := f.read(t, "a.txt"); got != "v1 edited by the user\n" {
				t.Errorf("a.txt = %q", got)
			}
			if len(f.eventsOf(backend.EvPatchApplied)) != 0 {
				t.Errorf("a refused write was reported as applied")
			}
		})
	}
}

// TestNewFileThatAppearedWritesNothing: a proposal for an absent file does
// not overwrite a file created meanwhile.
func TestNewFileThatAppearedWritesNothing(t *testing.T) {
	f := newFixture(t)
	args := `{"path":"new.txt","content":"agent\n"}`
	f.action(t, WriteFile, args)
	f.write(t, "new.txt", "user\n")
	res := f.execute(t, WriteFile, args)
	if !res.IsError || !strings.Contains(res.Content, "changed since") || f.read(t, "new.txt") != "user\n" {
		t.Fatalf("Execute = %+v, new.txt = %q", res, f.read(t, "new.txt"))
	}
}

// TestExecuteWritesOnlyWhatWasProposed: without a proposal (or a second time
// for one proposal) nothing is written.
func TestExecuteWritesOnlyWhatWasProposed(t *testing.T) {
	f := newFixture(t)
	args := `{"path":"a.txt","content":"x\n"}`
	res := f.execute(t, WriteFile, args)
	if !res.IsError || !strings.Contains(res.Content, "not proposed through the approval gate") || f.read(t, "a.txt") != "<absent>" {
		t.Fatalf("unproposed Execute = %+v", res)
	}
	if _, res := f.call(t, WriteFile, args); res.IsError {
		t.Fatal(res.Content)
	}
	f.write(t, "a.txt", "changed\n")
	res = f.execute(t, WriteFile, args)
	if !res.IsError || f.read(t, "a.txt") != "changed\n" {
		t.Fatalf("second Execute of one proposal = %+v, a.txt = %q", res, f.read(t, "a.txt"))
	}
	// Another run's proposal does not count for this one.
	tools := f.tools[WriteFile]
	other := f.env()
	other.RunID = "run_2"
	if _, err := tools.Action(t.Context(), other, json.RawMessage(args)); err != nil {
		t.Fatal(err)
	}
	if res := f.execute(t, WriteFile, args); !res.IsError || f.read(t, "a.txt") != "changed\n" {
		t.Fatalf("Execute with another run's proposal = %+v", res)
	}
}

func TestEditFileUniqueness(t *testing.T) {
	tests := []struct {
		name, content, old, new string
		want                    string // "" means success
	}{
		{"unique", "a b c\n", "b", "B", ""},
		{"missing", "a b c\n", "x", "y", "old_string was not found in f.txt"},
		{"twice", "x = 1\nx = 1\n", "x = 1", "x = 2", "old_string matches 2 times in f.txt; it must match exactly once"},
		{"three times", "ab ab ab", "ab", "cd", "matches 3 times"},
		{"overlapping", "aaa", "aa", "b", "matches 2 times"},
		{"whitespace differs", "\tindented\n", "    indented", "x", "was not found"},
		{"identical", "a\n", "a", "a", "old_string and new_string are identical"},
		{"multi-line", "func f() {\n\treturn 1\n}\n", "\treturn 1\n}", "\treturn 2\n}", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.write(t, "f.txt", tc.content)
			args, _ := json.Marshal(editArgs{Path: "f.txt", OldString: tc.old, NewString: tc.new})
			a, res := f.call(t, EditFile, string(args))
			if tc.want == "" {
				if a == nil || res.IsError {
					t.Fatalf("Action %+v, Execute %+v", a, res)
				}
				if got, want := f.read(t, "f.txt"), strings.Replace(tc.content, tc.old, tc.new, 1); got != want {
					t.Errorf("f.txt = %q, want %q", got, want)
				}
				return
			}
			if a != nil {
				t.Errorf("an edit that cannot apply was gated: %s", a.Title)
			}
			if !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("Execute = %+v, want %q", res, tc.want)
			}
			if got := f.read(t, "f.txt"); got != tc.content {
				t.Errorf("f.txt = %q, want it unchanged", got)
			}
		})
	}
}

// TestRefusedProposals: calls that can never apply are tool errors before
// any gate.
func TestRefusedProposals(t *testing.T) {
	f := newFixture(t)
	f.write(t, "dir/x.txt", "x\n")
	f.write(t, "same.txt", "same\n")
	f.write(t, ".git/config", "[core]\n")
	tests := []struct{ tool, args, want string }{
		{EditFile, `{"path":"nope.txt","old_string":"a","new_string":"b"}`, "nope.txt does not exist; use write_file"},
		{DeleteFile, `{"path":"nope.txt"}`, "nope.txt does not exist; nothing to delete"},
		{DeleteFile, `{"path":"dir"}`, "dir is a directory, not a file"},
		{WriteFile, `{"path":"dir","content":"x"}`, "dir is a directory"},
		{WriteFile, `{"path":"dir/x.txt/y","content":"x"}`, "dir/x.txt is a file, not a directory"},
		{WriteFile, `{"path":".","content":"x"}`, "the workspace root is not a file"},
		{WriteFile, `{"path":"same.txt","content":"same\n"}`, "nothing to change: same.txt already has this content"},
		{WriteFile, `{"path":".git/config","content":"x"}`, "protected git directory"},
		{WriteFile, `{"path":".agenthub/policy.toml","content":"allow = true"}`, "protected policy directory"},
		{EditFile, `{"path":".git/config","old_string":"core","new_string":"x"}`, "protected git directory"},
	}
	for _, tc := range tests {
		t.Run(tc.args, func(t *testing.T) {
			disk := snapshot(t, f.root)
			a, res := f.call(t, tc.tool, tc.args)
			if a != nil {
				t.Errorf("gated: %s", a.Title)
			}
			if !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("Execute = %+v, want %q", res, tc.want)
			}
			if diff := cmp.Diff(disk, snapshot(t, f.root)); diff != "" {
				t.Errorf("disk changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestEditKeepsTheFileMode(t *testing.T) {
	f := newFixture(t)
	f.write(t, "run.sh", "#!/bin/sh\necho a\n")
	if err := os.Chmod(filepath.Join(f.root, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, res := f.call(t, EditFile, `{"path":"run.sh","old_string":"echo a","new_string":"echo b"}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	var pv patch.Preview
	mustJSON(t, a.Preview, &pv)
	if pv.Diff.Old.Mode != "100755" || pv.Diff.New.Mode != "100755" {
		t.Errorf("diff modes %s → %s", pv.Diff.Old.Mode, pv.Diff.New.Mode)
	}
	fi, err := os.Stat(filepath.Join(f.root, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode after edit = %v, %v", fi.Mode(), err)
	}
}

func TestMissingCheckpointDirIsAnInfrastructureError(t *testing.T) {
	f := newFixture(t)
	f.tools = New(Config{})
	args := `{"path":"a.txt","content":"x"}`
	f.action(t, WriteFile, args)
	_, err := f.tools[WriteFile].Execute(t.Context(), f.env(), backend.ToolInput{Arguments: json.RawMessage(args)})
	if err == nil || !strings.Contains(err.Error(), "no checkpoint directory") {
		t.Fatalf("err = %v", err)
	}
	if f.read(t, "a.txt") != "<absent>" {
		t.Errorf("written without a checkpoint store")
	}
}

func TestPlansAreBounded(t *testing.T) {
	p := newPlans(3)
	for _, k := range []string{"a", "b", "c", "d"} {
		p.put(k, plan{pre: k})
	}
	var left []string
	for _, k := range []string{"a", "b", "c", "d"} {
		if _, ok := p.take(k); ok {
			left = append(left, k)
		}
	}
	sort.Strings(left)
	if diff := cmp.Diff([]string{"b", "c", "d"}, left); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
