package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestStreamCutsNeverSplitASecret: however a text with secrets is cut
// into deltas, redacting each piece the Stream lets go equals redacting
// the whole text, and nothing is lost or reordered.
func TestStreamCutsNeverSplitASecret(t *testing.T) {
	r := New()
	r.Add("hunter2-env-value-0123456789")
	texts := []string{
		"here is the key: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 and more text\nnext line",
		"export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB done",
		"curl -H 'Authorization: Bearer abcdefghijklmnop0123456789xyz' https://example.com\n",
		"the secret is hunter2-env-value-0123456789, keep it",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
			"QyNTUxOQAAACDx2E2m1bS0aOy1W5Ve7r2N\n-----END OPENSSH PRIVATE KEY-----\nafter the key",
		"password = Zx9qLm3vT7pR2sK8wN4y in the config; also postgres://user:s3cr3tpass@db/x",
		"plain prose with no secrets at all, streamed word by word, " + strings.Repeat("lorem ipsum ", 20),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, text := range texts {
		want := r.String(text)
		for range 200 {
			var s Stream
			var got, joined strings.Builder
			for rest := text; rest != ""; {
				n := 1 + rng.IntN(min(len(rest), 12))
				piece := s.Push(rest[:n])
				joined.WriteString(piece)
				got.WriteString(r.String(piece))
				rest = rest[n:]
			}
			tail := s.Flush()
			joined.WriteString(tail)
			got.WriteString(r.String(tail))
			if joined.String() != text {
				t.Fatalf("the stream lost or reordered text:\n%q\n%q", joined.String(), text)
			}
			if got.String() != want {
				t.Fatalf("piecewise redaction differs:\n got %q\nwant %q", got.String(), want)
			}
		}
	}
}

// TestStreamLetsProseThrough: text without keywords is shown word by word,
// not held to the end of the line.
func TestStreamLetsProseThrough(t *testing.T) {
	var s Stream
	if out := s.Push("hello wor"); out != "hello " {
		t.Fatalf("Push = %q, want the whole words", out)
	}
	if out := s.Push(strings.Repeat("x", MaxHold+1)); out == "" {
		t.Fatal("a piece longer than MaxHold must be let go")
	}
}
