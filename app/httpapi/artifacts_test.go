package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/preview"
	"agenthub/backend/store"
)

// artifactServer is a real server over a real store holding one run with an
// HTML page, a document and a PNG.
func artifactServer(t *testing.T) (*fixture, map[backend.ArtifactKind]backend.Artifact) {
	t.Helper()
	core, err := api.Open(t.Context(), api.Config{Home: t.TempDir(), Version: "test", Surface: backend.SurfaceBrowser})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	s := core.Store()
	if err := s.AddWorkspace(t.Context(), backend.Workspace{ID: "ws_1", Name: "w", Path: t.TempDir(), DisplayPath: "w"},
		store.By{Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	arts := map[backend.ArtifactKind]backend.Artifact{}
	drafts := []backend.ArtifactDraft{
		{Kind: backend.ArtifactHTML, Path: "page.html", MediaType: "text/html; charset=utf-8", Producer: "test",
			Content: []byte(`<h1>Page</h1><script>fetch("/api/workspaces")</script><img src="http://127.0.0.1:9/x.png">`)},
		{Kind: backend.ArtifactDocument, Path: "docs/r.md", MediaType: "text/markdown; charset=utf-8", Producer: "test",
			Content: []byte("# Report\n<script>alert(1)</script>\n")},
		{Kind: backend.ArtifactImage, Path: "a.png", MediaType: "image/png", Producer: "test",
			Content: []byte("\x89PNG\r\n\x1a\nrest")},
		{Kind: backend.ArtifactScreenshot, MediaType: "image/png", Producer: "screenshot",
			Meta:    backend.ArtifactMeta{Viewport: "1280x800", Route: "index.html", Theme: "light", Privacy: backend.PrivacyPending},
			Content: []byte("\x89PNG\r\n\x1a\nshot")},
	}
	if _, err := s.Do(t.Context(), func(tx *store.Tx) error {
		if err := tx.CreateSession("ses_1", "ws_1", ""); err != nil {
			return err
		}
		if _, err := tx.CreateRun(store.RunRecord{ID: "run_1", SessionID: "ses_1", WorkspaceID: "ws_1", Profile: "demo",
			AgentID: "demo", Runtime: "script", Task: "t"}, map[string]string{"task": "t"}); err != nil {
			return err
		}
		for _, d := range drafts {
			a, err := tx.PutArtifact("run_1", d)
			if err != nil {
				return err
			}
			arts[a.Kind] = a
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return serve(t, New(core, fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}}, &fakeSource{}, NewToken())), arts
}

// TestArtifactRoutes: list, filter and read; bytes are served inert (a
// download or an image, never a page of this origin), and the HTML preview
// only rewritten, under the sandboxing CSP.
func TestArtifactRoutes(t *testing.T) {
	f, arts := artifactServer(t)
	code, body, _ := f.do(t, "GET", "/api/artifacts?runId=run_1&kind=html", "", f.auth())
	var list []backend.Artifact
	if code != 200 || json.Unmarshal([]byte(body), &list) != nil || len(list) != 1 || list[0].ID != arts[backend.ArtifactHTML].ID {
		t.Fatalf("list html: %d %s", code, body)
	}
	if code, body, _ := f.do(t, "GET", "/api/artifacts?kind=exe", "", f.auth()); code != 400 || !strings.Contains(body, "invalid_input") {
		t.Errorf("unknown kind: %d %s", code, body)
	}
	if code, body, _ := f.do(t, "GET", "/api/artifacts/art_nope", "", f.auth()); code != 404 {
		t.Errorf("missing artifact: %d %s", code, body)
	}
	var view api.ArtifactView
	code, body, _ = f.do(t, "GET", "/api/artifacts/"+arts[backend.ArtifactDocument].ID, "", f.auth())
	if code != 200 || json.Unmarshal([]byte(body), &view) != nil || !strings.HasPrefix(view.Text, "# Report") {
		t.Errorf("get document: %d %s", code, body)
	}

	cases := []struct {
		kind             backend.ArtifactKind
		ctype, disp, csp string
	}{
		{backend.ArtifactHTML, "text/plain; charset=utf-8", "attachment", "sandbox"},
		{backend.ArtifactDocument, "text/plain; charset=utf-8", "attachment", "sandbox"},
		{backend.ArtifactImage, "image/png", "inline", "sandbox"},
	}
	for _, c := range cases {
		code, _, h := f.do(t, "GET", "/api/artifacts/"+arts[c.kind].ID+"/content", "", f.auth())
		if code != 200 || h.Get("Content-Type") != c.ctype || !strings.HasPrefix(h.Get("Content-Disposition"), c.disp) ||
			!strings.Contains(h.Get("Content-Security-Policy"), c.csp) || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s content: %d %v", c.kind, code, h)
		}
	}

	code, body, h := f.do(t, "GET", "/api/artifacts/"+arts[backend.ArtifactHTML].ID+"/preview", "", f.auth())
	if code != 200 || h.Get("Content-Security-Policy") != preview.HeaderCSP || !strings.Contains(body, "<h1>Page</h1>") ||
		strings.Contains(body, "<script") || strings.Contains(body, "127.0.0.1:9") {
		t.Errorf("preview: %d %v\n%s", code, h, body)
	}
	if code, _, _ := f.do(t, "GET", "/api/artifacts/"+arts[backend.ArtifactImage].ID+"/preview", "", f.auth()); code != 400 {
		t.Errorf("preview of an image: %d", code)
	}
	// A sandboxed page has an opaque origin: its requests say Origin: null
	// and carry no token of their own; the guard refuses them.
	hdr := map[string]string{"Origin": "null", "Cookie": CookieName + "=" + f.token}
	if code, _, _ := f.do(t, "GET", "/api/artifacts", "", hdr); code != 403 {
		t.Errorf("opaque-origin request: %d, want 403", code)
	}
}

// TestScreenshotPrivacyReview: a screenshot pending its privacy review is
// shown (GET) but does not leave (content is 409) until the user marks it
// reviewed, which is audited; a second review changes nothing.
func TestScreenshotPrivacyReview(t *testing.T) {
	f, arts := artifactServer(t)
	id := arts[backend.ArtifactScreenshot].ID
	var view api.ArtifactView
	code, body, _ := f.do(t, "GET", "/api/artifacts/"+id, "", f.auth())
	if code != 200 || json.Unmarshal([]byte(body), &view) != nil || view.DataURL == "" || view.Artifact.Meta.Privacy != "pending" {
		t.Fatalf("get pending screenshot: %d %s", code, body)
	}
	if code, body, _ := f.do(t, "GET", "/api/artifacts/"+id+"/content", "", f.auth()); code != 409 || !strings.Contains(body, "artifacts review") {
		t.Errorf("content of a pending screenshot: %d %s", code, body)
	}
	for i := 0; i < 2; i++ {
		var a backend.Artifact
		code, body, _ := f.do(t, "POST", "/api/artifacts/"+id+"/review", "", f.auth())
		if code != 200 || json.Unmarshal([]byte(body), &a) != nil || a.Meta.Privacy != "approved" {
			t.Fatalf("review #%d: %d %s", i+1, code, body)
		}
	}
	if code, _, h := f.do(t, "GET", "/api/artifacts/"+id+"/content", "", f.auth()); code != 200 || h.Get("Content-Type") != "image/png" {
		t.Errorf("content after review: %d %v", code, h)
	}
	code, body, _ = f.do(t, "GET", "/api/audit?kind=artifact.reviewed", "", f.auth())
	var entries []backend.AuditEntry
	if code != 200 || json.Unmarshal([]byte(body), &entries) != nil || len(entries) != 1 || entries[0].Data["artifactId"] != id {
		t.Errorf("audit: %d %s", code, body)
	}
}
