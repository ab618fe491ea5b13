package bundle

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestTranscriptsGolden renders both transcripts of the fixture and compares
// them with testdata/*.golden (run with -update after a deliberate change).
func TestTranscriptsGolden(t *testing.T) {
	b, err := Open(bytes.NewReader(write(t, fixture(5))), int64(len(write(t, fixture(5)))))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{TranscriptMD, TranscriptHTML} {
		golden := filepath.Join("testdata", name+".golden")
		if *update {
			if err := os.WriteFile(golden, b.Files[name], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(want, b.Files[name]) {
			t.Errorf("%s differs from %s:\n%s", name, golden, b.Files[name])
		}
	}
}

// TestHTMLIsSelfContained: the page loads nothing (no script, stylesheet,
// image, font or frame from anywhere) and escapes what the run said.
func TestHTMLIsSelfContained(t *testing.T) {
	data := write(t, fixture(5))
	b, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	page := b.Files[TranscriptHTML]
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)<script`), regexp.MustCompile(`(?i)<link`), regexp.MustCompile(`(?i)<img`),
		regexp.MustCompile(`(?i)<iframe`), regexp.MustCompile(`(?i)\bsrc\s*=`), regexp.MustCompile(`(?i)url\(`),
		regexp.MustCompile(`(?i)@import`), regexp.MustCompile(`(?i)https?://`),
	} {
		if loc := bad.FindIndex(page); loc != nil {
			t.Errorf("transcript.html holds %q", page[loc[0]:min(loc[1]+20, len(page))])
		}
	}
	if !bytes.Contains(page, []byte("default-src 'none'")) {
		t.Error("transcript.html has no CSP forbidding every load")
	}
	if !bytes.Contains(page, []byte("&lt;script&gt;alert(1)&lt;/script&gt;")) {
		t.Error("the agent's text is not escaped")
	}
}
