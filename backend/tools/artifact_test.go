package tools

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"agenthub/backend"
	"agenthub/backend/redact"
	"agenthub/backend/store"
)

// artifactStore is a real store with one run; publish wires the fixture's
// env to it, as the engine does.
func artifactStore(t *testing.T, f *fixture) (*store.Store, func() backend.ToolEnv) {
	t.Helper()
	ctx := t.Context()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "agenthub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.SetRedactor(redact.New())
	if err := s.AddWorkspace(ctx, backend.Workspace{ID: "ws_1", Name: "w", Path: f.root, DisplayPath: "w"},
		store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do(ctx, func(tx *store.Tx) error {
		if err := tx.CreateSession("ses_1", "ws_1", ""); err != nil {
			return err
		}
		_, err := tx.CreateRun(store.RunRecord{ID: "run_1", SessionID: "ses_1", WorkspaceID: "ws_1", Profile: "demo",
			AgentID: "demo", Runtime: "script", Task: "t"}, map[string]string{"task": "t"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return s, func() backend.ToolEnv {
		env := f.env()
		env.Artifacts = func(d backend.ArtifactDraft) (backend.Artifact, error) {
			var a backend.Artifact
			_, err := s.Do(t.Context(), func(tx *store.Tx) error {
				var err error
				a, err = tx.PutArtifact("run_1", d)
				return err
			})
			return a, err
		}
		return env
	}
}

func publish(t *testing.T, f *fixture, env backend.ToolEnv, args string) backend.ToolResult {
	t.Helper()
	tool := f.tools[PublishArtifact]
	if a, err := tool.Action(t.Context(), env, json.RawMessage(args)); err != nil {
		t.Fatalf("Action(%s): %v", args, err)
	} else if a != nil && a.Kind == backend.ActionSecret {
		return backend.ToolResult{Content: "gate: secret", IsError: true}
	}
	res, err := tool.Execute(t.Context(), env, backend.ToolInput{CallID: "call_1", Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Execute(%s): %v", args, err)
	}
	return res
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestPublishEachKind: every kind a workspace file can be is stored with
// its metadata and announced; text is path-scrubbed and redacted before it
// is stored.
func TestPublishEachKind(t *testing.T) {
	f := newFixture(t)
	s, env := artifactStore(t, f)
	leak := "ghp_" + "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5"
	f.write(t, "docs/report.md", "# Report\nbuilt in "+f.root+"/out with token "+leak+"\n")
	f.write(t, "shot.png", string(pngBytes(t, 3, 2)))
	f.write(t, "page.html", "<h1>Hi</h1>")
	f.write(t, "r.pdf", "%PDF-1.4\n%%EOF\n")
	f.write(t, "main.go", "package main\n")
	cases := []struct {
		args string
		kind backend.ArtifactKind
		mt   string
	}{
		{`{"path":"docs/report.md","title":"Report","language":"en"}`, backend.ArtifactDocument, "text/markdown; charset=utf-8"},
		{`{"path":"shot.png"}`, backend.ArtifactImage, "image/png"},
		{`{"path":"page.html"}`, backend.ArtifactHTML, "text/html; charset=utf-8"},
		{`{"path":"r.pdf"}`, backend.ArtifactPDF, "application/pdf"},
		{`{"path":"main.go"}`, backend.ArtifactFile, "text/plain; charset=utf-8"},
	}
	for _, c := range cases {
		res := publish(t, f, env(), c.args)
		if res.IsError || !strings.Contains(res.Content, "as artifact art_") {
			t.Fatalf("%s: %+v", c.args, res)
		}
	}
	list, err := s.Artifacts(t.Context(), store.ArtifactFilter{RunID: "run_1"})
	if err != nil || len(list) != len(cases) {
		t.Fatalf("stored %d artifacts, %v", len(list), err)
	}
	byKind := map[backend.ArtifactKind]backend.Artifact{}
	for _, a := range list {
		byKind[a.Kind] = a
	}
	for _, c := range cases {
		a, ok := byKind[c.kind]
		if !ok || a.MediaType != c.mt || a.Producer != PublishArtifact || a.CallID != "call_1" {
			t.Errorf("%s: %+v", c.kind, a)
		}
	}
	doc := byKind[backend.ArtifactDocument]
	if doc.Title != "Report" || doc.Meta.Language != "en" || doc.Meta.BuildStatus != "built" || !doc.Meta.Redacted ||
		doc.Meta.ReadAt == "" {
		t.Errorf("document meta: %+v", doc)
	}
	_, data, err := s.ArtifactContent(t.Context(), doc.ID)
	if err != nil || bytes.Contains(data, []byte(leak)) || !bytes.Contains(data, []byte("built in ./out")) {
		t.Errorf("document stored as %q, %v", data, err)
	}
	f.noMachinePaths(t, "stored document", string(data))
	if img := byKind[backend.ArtifactImage]; img.Meta.Width != 3 || img.Meta.Height != 2 {
		t.Errorf("image meta: %+v", img.Meta)
	}
}

// TestPublishAttacks: nothing outside the workspace is ever read to make an
// artifact, nothing can hang the tool, and content that is not what its
// kind says is refused. Each refusal stores nothing.
func TestPublishAttacks(t *testing.T) {
	f := newFixture(t)
	s, env := artifactStore(t, f)
	outside := filepath.Join(t.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte("# secret plans\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(f.root, "link.md")))
	must(os.Symlink("/proc/self/environ", filepath.Join(f.root, "env.md")))
	must(os.Symlink(filepath.Dir(outside), filepath.Join(f.root, "dirlink")))
	must(syscall.Mkfifo(filepath.Join(f.root, "pipe.md"), 0o644))
	must(os.Link(outside, filepath.Join(f.root, "hard.md")))
	huge, err := os.Create(filepath.Join(f.root, "huge.md"))
	must(err)
	must(huge.Truncate(backend.MaxArtifactBytes + 1))
	must(huge.Close())
	f.write(t, ".env", "TOKEN=x\n")
	f.write(t, "fake.png", "# not an image\n")
	f.write(t, "bin.md", "\x00\x01\x02")
	f.write(t, "fake.pdf", "hello")
	f.write(t, "main.go", "package main\n")
	cases := []struct{ args, want string }{
		{`{"path":"link.md"}`, "outside"},
		{`{"path":"env.md"}`, "outside"},
		{`{"path":"dirlink/outside.md"}`, "outside"},
		{`{"path":"/proc/self/environ"}`, "outside"},
		{`{"path":"../outside.md"}`, "outside"},
		{`{"path":"pipe.md"}`, "not a regular file"},
		{`{"path":"hard.md"}`, "hard links"},
		{`{"path":"huge.md"}`, "artifact_too_large"},
		{`{"path":".env"}`, "secret"},
		{`{"path":"fake.png"}`, "not a PNG"},
		{`{"path":"bin.md"}`, "binary"},
		{`{"path":"fake.pdf"}`, "not a PDF"},
		{`{"path":"main.go","kind":"image"}`, "not a PNG"},
		{`{"path":"missing.md"}`, "does not exist"},
	}
	for _, c := range cases {
		res := publish(t, f, env(), c.args)
		if !res.IsError || !strings.Contains(res.Content, c.want) {
			t.Errorf("%s: %+v, want an error saying %q", c.args, res, c.want)
		}
		f.noMachinePaths(t, c.args, res.Content)
	}
	if list, err := s.Artifacts(t.Context(), store.ArtifactFilter{}); err != nil || len(list) != 0 {
		t.Errorf("refused publishes stored %d artifacts, %v", len(list), err)
	}
}

// TestPublishWithoutStore: a surface that keeps no artifacts says so.
func TestPublishWithoutStore(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.md", "# a\n")
	res := publish(t, f, f.env(), `{"path":"a.md"}`)
	if !res.IsError || !strings.Contains(res.Content, "keeps no artifacts") {
		t.Errorf("%+v", res)
	}
}

// TestApprovedCreateBecomesArtifact: a document or an image an approved
// write_file creates is an artifact of the run; a source file is not, and
// an update of an existing document is not a new artifact.
func TestApprovedCreateBecomesArtifact(t *testing.T) {
	f := newFixture(t)
	s, env := artifactStore(t, f)
	f.write(t, "old.md", "# old\n")
	write := func(args string) backend.ToolResult {
		t.Helper()
		tool := f.tools[WriteFile]
		if _, err := tool.Action(t.Context(), env(), json.RawMessage(args)); err != nil {
			t.Fatal(err)
		}
		res, err := tool.Execute(t.Context(), env(), backend.ToolInput{CallID: "call_1", Arguments: json.RawMessage(args)})
		if err != nil || res.IsError {
			t.Fatalf("write %s: %+v %v", args, res, err)
		}
		return res
	}
	res := write(`{"path":"docs/notes.md","content":"# Notes\n"}`)
	if !strings.Contains(res.Content, "published as artifact art_") {
		t.Errorf("create docs/notes.md: %q", res.Content)
	}
	for _, args := range []string{`{"path":"main.go","content":"package main\n"}`, `{"path":"old.md","content":"# new\n"}`} {
		if res := write(args); strings.Contains(res.Content, "artifact") {
			t.Errorf("%s: %q", args, res.Content)
		}
	}
	list, err := s.Artifacts(t.Context(), store.ArtifactFilter{RunID: "run_1"})
	if err != nil || len(list) != 1 || list[0].Path != "docs/notes.md" || list[0].Producer != WriteFile ||
		list[0].Kind != backend.ArtifactDocument {
		t.Errorf("artifacts = %+v, %v", list, err)
	}
}
