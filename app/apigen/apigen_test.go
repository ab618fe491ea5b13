package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const generated = "../../frontend/src/lib/api/generated.ts"

// TestGeneratedIsCurrent fails while the committed TypeScript vocabulary
// differs from what the Go code says: a constant added, renamed or removed
// in backend/, a changed Coarse mapping or default gate row, a payload
// field renamed. The fix is to run the generator, never to edit the file.
func TestGeneratedIsCurrent(t *testing.T) {
	want, err := render("../../backend")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(generated)
	if err != nil {
		t.Fatalf("%v: run `go generate ./app/apigen`", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("frontend/src/lib/api/generated.ts is stale (first difference at line %d): run `go generate ./app/apigen` and commit it",
			firstDiff(string(got), string(want)))
	}
}

func firstDiff(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// TestRenderFollowsTheSource: the constants come from the source, so a
// constant added to a copy of the vocabulary package shows up in the
// output, and one that is not a string literal is refused rather than
// skipped.
func TestRenderFollowsTheSource(t *testing.T) {
	dir := t.TempDir()
	files, err := filepath.Glob("../../backend/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vocabulary sources: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	extra := filepath.Join(dir, "zz_extra.go")
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(extra, []byte("package backend\n\n"+src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("// EvProbe is a test event.\nconst EvProbe EventType = \"run.probe\"\n")
	out, err := render(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  | 'run.probe'", "  /** EvProbe is a test event. */\n  Probe: 'run.probe',"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	write("const probe = \"x\"\nconst EvComputed EventType = probe\n")
	if _, err := render(dir); err == nil || !strings.Contains(err.Error(), "EvComputed") {
		t.Errorf("a constant that is not a literal was not refused: %v", err)
	}
}

// TestPayloadTagsFollowJSON: the interfaces carry the json names, and
// omitempty fields are optional, as encoding/json writes them.
func TestPayloadTagsFollowJSON(t *testing.T) {
	out, err := render("../../backend")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"export interface RunEnded {\n  from: RunState;\n  doneReason: string;\n  code?: FailureCode;",
		"export interface ApprovalRequest {\n  approvalId: string;",
		"  'run.completed': RunEnded;",
		"  'run.completed': 'Completed',",
		"  NeedsApproval: 'waiting',",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q", want)
		}
	}
}
