package cli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/runtime/acp/acptest"
	"agenthub/backend/runtime/codex/codextest"
)

// Issue 14 item 7: a cloned repository can ship a symlink that leaves the
// workspace (notes-link.txt -> ../outside.txt, linkdir -> ..). An agent CLI
// that reads the disk itself must not read through it: the outside text
// may reach neither the model, nor the events, nor anything AgentHub keeps
// on disk (SQLite, WAL, raw CLI output). Each test plays the hostile model
// with the real CLI and scans every request and every byte of the data
// directory; an ordinary file's text must reach the model, so the test can
// see a read at all.

const outsideText = "OUTSIDE-TEXT-7d1f3a"
const insideText = "INSIDE-TEXT-5be2c4"

// linkWorkspace puts an outside file beside the workspace, links to it
// (and to the directory above the workspace) from inside, and an ordinary
// file inside.
func linkWorkspace(t *testing.T, dir string) {
	t.Helper()
	outside := filepath.Join(filepath.Dir(dir), "outside.txt")
	if err := os.WriteFile(outside, []byte(outsideText+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inside.txt"), []byte(insideText+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside.txt", filepath.Join(dir, "notes-link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
}

// assertNoOutsideText fails when the outside text is anywhere in what the
// model was sent, in the events, or in any file of the data directory.
func assertNoOutsideText(t *testing.T, home string, requests [][]byte, evs []backend.Event) {
	t.Helper()
	var sawInside bool
	for i, r := range requests {
		sawInside = sawInside || bytes.Contains(r, []byte(insideText))
		if bytes.Contains(r, []byte(outsideText)) {
			t.Errorf("model request %d holds the outside file's text", i)
		}
	}
	if !sawInside {
		t.Error("the ordinary file's text never reached the model: the test cannot see a read")
	}
	for _, ev := range evs {
		if bytes.Contains(ev.Payload, []byte(outsideText)) {
			t.Errorf("event %s holds the outside file's text: %s", ev.Type, clipForLog(string(ev.Payload)))
		}
	}
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(outsideText)) {
			rel, _ := filepath.Rel(home, p)
			t.Errorf("%s in the data directory holds the outside file's text", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestClaudeNeverReadsThroughLinksOut(t *testing.T) {
	t.Parallel()
	bin := claudeCLI.path(t)
	env, dir := newGitWorkspace(t)
	linkWorkspace(t, dir)
	read := func(p string) llmtest.Turn {
		return llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_r"+strings.ReplaceAll(p, "/", "_"), "Read",
			map[string]any{"file_path": p})}}
	}
	grep := func(id, path string) llmtest.Turn {
		in := map[string]any{"pattern": "OUTSIDE-TEXT|INSIDE-TEXT", "output_mode": "content"}
		if path != "" {
			in["path"] = path
		}
		return llmtest.Turn{Calls: []llmtest.Call{ccCall(id, "Grep", in)}}
	}
	srv := llmtest.NewAnthropic(
		read(dir+"/inside.txt"),
		read(dir+"/notes-link.txt"),
		read(dir+"/linkdir/outside.txt"),
		read(filepath.Join(filepath.Dir(dir), "outside.txt")),
		grep("toolu_g1", ""),
		grep("toolu_g2", dir+"/notes-link.txt"),
		grep("toolu_g3", dir+"/linkdir"),
		llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_gl", "Glob", map[string]any{"pattern": "**/*.txt",
			"path": dir + "/linkdir"})}},
		llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_gl2", "Glob", map[string]any{"pattern": "linkdir/*.txt"})}},
		llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_gl3", "Glob", map[string]any{"pattern": "../*.txt"})}},
		llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_g4", "Grep", map[string]any{"pattern": "OUTSIDE-TEXT",
			"glob": "linkdir/*", "output_mode": "content"})}},
		llmtest.Turn{Text: []string{"Read what I could."}},
	)
	t.Cleanup(srv.Close)
	writeClaudeProfile(t, env, bin, srv.URL)
	evs := runTask(t, env, dir, "cc", "approve")
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("the run did not complete: %s", evs[len(evs)-1].Type)
	}
	var raws [][]byte
	for _, r := range srv.Requests() {
		raws = append(raws, r.Raw)
	}
	if len(raws) != 12 {
		t.Fatalf("%d model requests, want 12: a tool call was lost", len(raws))
	}
	assertNoOutsideText(t, env["AGENTHUB_HOME"], raws, evs)
}

func TestGeminiNeverReadsThroughLinksOut(t *testing.T) {
	t.Parallel()
	bin := geminiCLI.path(t)
	env, dir := newGitWorkspace(t)
	linkWorkspace(t, dir)
	read := func(p string) acptest.Turn {
		return acptest.Turn{Calls: []acptest.Call{{Name: "read_file", Args: map[string]any{"file_path": p}}}}
	}
	srv := acptest.NewGemini(read(dir+"/inside.txt"), read(dir+"/notes-link.txt"), read("linkdir/outside.txt"),
		acptest.Turn{Calls: []acptest.Call{{Name: "read_many_files", Args: map[string]any{"include": []string{"**/*.txt"}}}}},
		acptest.Turn{Calls: []acptest.Call{{Name: "glob", Args: map[string]any{"pattern": "**/*.txt", "dir_path": "linkdir"}}}},
		acptest.Turn{Text: []string{"Read what I could."}})
	t.Cleanup(srv.Close)
	writeACPProfile(t, env, geminiProfile(bin, srv.URL))
	evs := runTask(t, env, dir, "gm", "approve")
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("the run did not complete: %s", evs[len(evs)-1].Type)
	}
	var raws [][]byte
	for _, r := range srv.Requests() {
		raws = append(raws, r.Raw)
	}
	assertNoOutsideText(t, env["AGENTHUB_HOME"], raws, evs)
}

// TestCodexNeverReadsThroughLinksOut: Codex reads files only through
// commands (every one of which asks) and view_image, which reads the disk
// without asking.
func TestCodexNeverReadsThroughLinksOut(t *testing.T) {
	t.Parallel()
	bin := codexCLI.path(t)
	env, dir := newGitWorkspace(t)
	linkWorkspace(t, dir)
	view := func(id, p string) codextest.Turn {
		return codextest.Turn{Calls: []codextest.Call{{ID: id, Name: "view_image", Arguments: `{"path":"` + p + `"}`}}}
	}
	srv := codextest.New(
		codextest.Turn{Calls: []codextest.Call{codextest.Exec("call_c1", "cat inside.txt", false)}},
		view("call_v1", dir+"/notes-link.txt"), view("call_v2", dir+"/linkdir/outside.txt"),
		codextest.Turn{Text: []string{"Read what I could."}})
	t.Cleanup(srv.Close)
	writeCodexProfile(t, env, bin, srv.URL, "")
	evs := runTask(t, env, dir, "cx", "approve")
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("the run did not complete: %s", evs[len(evs)-1].Type)
	}
	var raws [][]byte
	for _, r := range srv.Requests() {
		raws = append(raws, r.Raw)
	}
	assertNoOutsideText(t, env["AGENTHUB_HOME"], raws, evs)
}
