package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/redact"
)

func putArtifact(t *testing.T, s *Store, runID string, d backend.ArtifactDraft) (backend.Artifact, error) {
	t.Helper()
	var a backend.Artifact
	_, err := s.Do(t.Context(), func(tx *Tx) error {
		var err error
		a, err = tx.PutArtifact(runID, d)
		return err
	})
	return a, err
}

// TestArtifactRoundTrip: each kind is stored with its metadata, announced by
// the event its kind names (in the same transaction), and read back
// byte-identical; equal content is one blob.
func TestArtifactRoundTrip(t *testing.T) {
	s, _ := openTest(t)
	newRun(t, s, "run_1")
	png := []byte("\x89PNG\r\n\x1a\nfake-but-opaque")
	cases := []struct {
		d     backend.ArtifactDraft
		event backend.EventType
	}{
		{backend.ArtifactDraft{Kind: backend.ArtifactDocument, Path: "docs/a.md", MediaType: "text/markdown",
			Producer: "publish_artifact", Meta: backend.ArtifactMeta{Language: "en", BuildStatus: "built"},
			Content: []byte("# Title\n")}, backend.EvArtifactReady},
		{backend.ArtifactDraft{Kind: backend.ArtifactImage, Path: "a.png", MediaType: "image/png", Producer: "x",
			Content: png}, backend.EvArtifactReady},
		{backend.ArtifactDraft{Kind: backend.ArtifactScreenshot, Path: "b.png", MediaType: "image/png", Producer: "x",
			Meta: backend.ArtifactMeta{Viewport: "1280x800", Route: "index.html", Theme: "light", Language: "en",
				Privacy: backend.PrivacyPending}, Content: png}, backend.EvArtifactReady},
		{backend.ArtifactDraft{Kind: backend.ArtifactHTML, Path: "r.html", MediaType: "text/html", Producer: "x",
			Content: []byte("<p>hi</p>")}, backend.EvPreviewReady},
		{backend.ArtifactDraft{Kind: backend.ArtifactPDF, Path: "r.pdf", MediaType: "application/pdf", Producer: "x",
			Content: []byte("%PDF-1.4\n")}, backend.EvArtifactReady},
		{backend.ArtifactDraft{Kind: backend.ArtifactFile, Path: "main.go", MediaType: "text/plain", Producer: "x",
			Meta: backend.ArtifactMeta{ReadAt: "2026-11-25T00:00:00.000Z"}, Content: []byte("package main\n")},
			backend.EvPreviewReady},
	}
	for _, c := range cases {
		a, err := putArtifact(t, s, "run_1", c.d)
		if err != nil {
			t.Fatalf("%s: %v", c.d.Kind, err)
		}
		got, data, err := s.ArtifactContent(t.Context(), a.ID)
		if err != nil {
			t.Fatalf("%s: %v", c.d.Kind, err)
		}
		if !bytes.Equal(data, c.d.Content) || got.Kind != c.d.Kind || got.Path != c.d.Path || got.WorkspaceID != "ws_1" ||
			got.Meta != c.d.Meta || got.Title != c.d.Path || got.Sequence == 0 {
			t.Errorf("%s: stored %+v %q", c.d.Kind, got, data)
		}
		evs, err := s.Events(t.Context(), "run_1", got.Sequence-1, 1)
		if err != nil || len(evs) != 1 || evs[0].Type != c.event {
			t.Fatalf("%s: event at #%d = %+v, %v; want %s", c.d.Kind, got.Sequence, evs, err, c.event)
		}
		var payload backend.Artifact
		if err := json.Unmarshal(evs[0].Payload, &payload); err != nil || payload.ID != a.ID || payload.SHA256 != a.SHA256 {
			t.Errorf("%s: event payload %s", c.d.Kind, evs[0].Payload)
		}
		if strings.Contains(string(evs[0].Payload), string(c.d.Content)) {
			t.Errorf("%s: the event carries the content", c.d.Kind)
		}
	}
	var blobs int
	if err := s.r.QueryRow(`SELECT count(*) FROM artifact_blobs`).Scan(&blobs); err != nil || blobs != len(cases)-1 {
		t.Errorf("blobs = %d, %v; want %d (the two PNGs share one)", blobs, err, len(cases)-1)
	}
	list, err := s.Artifacts(t.Context(), ArtifactFilter{RunID: "run_1", Kind: backend.ArtifactImage})
	if err != nil || len(list) != 1 || list[0].Path != "a.png" {
		t.Errorf("filtered list = %+v, %v", list, err)
	}
	all, err := s.Artifacts(t.Context(), ArtifactFilter{WorkspaceID: "ws_1"})
	if err != nil || len(all) != len(cases) || all[0].Kind != backend.ArtifactFile {
		t.Errorf("list = %d, %v; want %d, newest first", len(all), err, len(cases))
	}
	if none, err := s.Artifacts(t.Context(), ArtifactFilter{WorkspaceID: "ws_other"}); err != nil || len(none) != 0 {
		t.Errorf("other workspace = %+v, %v", none, err)
	}
}

// TestArtifactRefusals: too large, a secret in binary content, an unknown
// kind and an unknown run store nothing and announce nothing.
func TestArtifactRefusals(t *testing.T) {
	s, _ := openTest(t)
	s.SetRedactor(redact.New())
	newRun(t, s, "run_1")
	cases := []struct {
		name string
		run  string
		d    backend.ArtifactDraft
		code backend.FailureCode
	}{
		{"too large", "run_1", backend.ArtifactDraft{Kind: backend.ArtifactFile, Content: bytes.Repeat([]byte("a"),
			backend.MaxArtifactBytes+1)}, backend.CodeArtifactTooLarge},
		{"secret in an image", "run_1", backend.ArtifactDraft{Kind: backend.ArtifactImage,
			Content: []byte("\x89PNG\r\n\x1a\n tEXt " + leakToken)}, backend.CodeArtifactSecret},
		{"secret in a PDF", "run_1", backend.ArtifactDraft{Kind: backend.ArtifactPDF,
			Content: []byte("%PDF-1.4 (" + leakToken + ")")}, backend.CodeArtifactSecret},
		{"unknown kind", "run_1", backend.ArtifactDraft{Kind: "exe", Content: []byte("x")}, backend.CodeInvalidInput},
		{"unknown run", "run_none", backend.ArtifactDraft{Kind: backend.ArtifactFile, Content: []byte("x")},
			backend.CodeNotFound},
	}
	before, _ := s.Events(t.Context(), "run_1", 0, 0)
	for _, c := range cases {
		_, err := putArtifact(t, s, c.run, c.d)
		if backend.CodeOf(err) != c.code {
			t.Errorf("%s: err = %v, want %s", c.name, err, c.code)
		}
	}
	var n int
	if err := s.r.QueryRow(`SELECT (SELECT count(*) FROM artifacts) + (SELECT count(*) FROM artifact_blobs)`).
		Scan(&n); err != nil || n != 0 {
		t.Errorf("rows after refusals = %d, %v", n, err)
	}
	if after, _ := s.Events(t.Context(), "run_1", 0, 0); len(after) != len(before) {
		t.Errorf("refusals appended %d events", len(after)-len(before))
	}
}

// TestArtifactTextIsRedacted: a secret in a document, an HTML page or a
// file preview is replaced before the blob is written, and the hash names
// the redacted bytes.
func TestArtifactTextIsRedacted(t *testing.T) {
	s, _ := openTest(t)
	s.SetRedactor(redact.New())
	newRun(t, s, "run_1")
	for _, k := range []backend.ArtifactKind{backend.ArtifactDocument, backend.ArtifactHTML, backend.ArtifactFile} {
		a, err := putArtifact(t, s, "run_1", backend.ArtifactDraft{Kind: k, Title: "t " + leakToken, Path: "x",
			Content: []byte("token: " + leakToken + "\n")})
		if err != nil {
			t.Fatal(err)
		}
		got, data, err := s.ArtifactContent(t.Context(), a.ID)
		if err != nil || bytes.Contains(data, []byte(leakToken)) || strings.Contains(got.Title, leakToken) ||
			!got.Meta.Redacted {
			t.Errorf("%s: stored %q title %q redacted=%v, %v", k, data, got.Title, got.Meta.Redacted, err)
		}
	}
	var leaked int
	if err := s.r.QueryRow(`SELECT count(*) FROM artifact_blobs WHERE instr(data, ?) > 0`, []byte(leakToken)).
		Scan(&leaked); err != nil || leaked != 0 {
		t.Errorf("blobs holding the secret = %d, %v", leaked, err)
	}
}

// TestArtifactContentChecksHash: a blob changed on disk behind the store's
// back is store_corrupt, never served.
func TestArtifactContentChecksHash(t *testing.T) {
	s, _ := openTest(t)
	newRun(t, s, "run_1")
	a, err := putArtifact(t, s, "run_1", backend.ArtifactDraft{Kind: backend.ArtifactDocument, Path: "a.md",
		Content: []byte("# fine\n")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec(`UPDATE artifact_blobs SET data = ? WHERE sha256 = ?`, []byte("# evil\n"), a.SHA256); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ArtifactContent(t.Context(), a.ID); backend.CodeOf(err) != backend.CodeStoreCorrupt {
		t.Errorf("tampered blob: err = %v, want store_corrupt", err)
	}
	var nf *backend.NotFound
	if _, err := s.Artifact(t.Context(), "art_missing"); !errors.As(err, &nf) {
		t.Errorf("missing artifact: err = %v", err)
	}
}

// TestScanArtifactOffTheCommitter: ScanArtifact redacts and refuses as
// PutArtifact does; content it scanned is stored as scanned, and a draft it
// did not scan (a different content) is still checked in the transaction.
func TestScanArtifactOffTheCommitter(t *testing.T) {
	s, _ := openTest(t)
	s.SetRedactor(redact.New())
	newRun(t, s, "run_1")
	d, err := s.ScanArtifact(backend.ArtifactDraft{Kind: backend.ArtifactDocument, Path: "a.md",
		Content: []byte("key " + leakToken + "\n")})
	if err != nil || bytes.Contains(d.Content, []byte(leakToken)) || !d.Meta.Redacted {
		t.Fatalf("scan: %q %+v %v", d.Content, d.Meta, err)
	}
	a, err := putArtifact(t, s, "run_1", d)
	if err != nil || !a.Meta.Redacted {
		t.Fatalf("put scanned: %+v %v", a, err)
	}
	if _, err := s.ScanArtifact(backend.ArtifactDraft{Kind: backend.ArtifactImage,
		Content: []byte("\x89PNG\r\n\x1a\n" + leakToken)}); backend.CodeOf(err) != backend.CodeArtifactSecret {
		t.Errorf("scan of an image with a secret: %v", err)
	}
	// Scanned content swapped for other bytes before the put: checked again.
	d.Content = []byte("other " + leakToken + "\n")
	b, err := putArtifact(t, s, "run_1", d)
	_, data, _ := s.ArtifactContent(t.Context(), b.ID)
	if err != nil || bytes.Contains(data, []byte(leakToken)) {
		t.Errorf("put of unscanned content stored %q, %v", data, err)
	}
}
