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
		// A .netrc line: the password belongs to "machine", five words back.
		"Here it is: machine api.example.com login bot password gOw5yynD6tRfq6j5CZBACeGw\nmore",
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

// TestStreamLongLinesNeverSplitASecret is the attack of issue 14 §6: a
// line longer than MaxHold arrives in 32 KiB chunks (a command's output
// copier) and a secret sits at every offset around the chunk boundary and
// around MaxHold. The pieces the Stream lets go, each redacted alone, must
// hold no part of the secret, and lose or reorder no byte.
func TestStreamLongLinesNeverSplitASecret(t *testing.T) {
	const chunk = 32 << 10
	gateway := "gwtok-" + "QmT4xw9ZpL2vK8rN5sJ3dH7f"
	Register(gateway)
	secrets := []struct{ text, value string }{
		{ghp, ghp},
		{"AKIA" + "Z7QW3ERT5YUI2OPA", "AKIA" + "Z7QW3ERT5YUI2OPA"},
		{`"password":"` + "Xk9vTq2mLp7wRz4nB8c" + `"`, "Xk9vTq2mLp7wRz4nB8c"},
		{"Authorization: Bearer " + "q1w2e3r4t5y6u7i8o9p0a1s2", "q1w2e3r4t5y6u7i8o9p0a1s2"},
		{gateway, gateway},
	}
	// Filler with separators but no blank and no secret: minified JSON.
	unit := `{"id":1234,"name":"widget","tags":["a","b"]},`
	filler := strings.Repeat(unit, (2*chunk)/len(unit)+1)
	r := NewFromEnviron(nil)
	leaked := func(out, value string) bool {
		for i := 0; i+12 <= len(value); i++ {
			if strings.Contains(out, value[i:i+12]) {
				return true
			}
		}
		return false
	}
	for _, sc := range secrets {
		for _, boundary := range []int{MaxHold, chunk} {
			for off := boundary - len(sc.text) - 2; off <= boundary+2; off++ {
				line := filler[:off] + "," + sc.text + "," + filler[off:chunk+chunk/4] + "\n"
				if leaked(r.String(line), sc.value) {
					t.Fatalf("the whole line does not redact %q: the test is wrong", sc.text)
				}
				var s Stream
				var joined, redacted strings.Builder
				for rest := line; rest != ""; {
					n := min(chunk, len(rest))
					piece := s.Push(rest[:n])
					joined.WriteString(piece)
					redacted.WriteString(r.String(piece))
					rest = rest[n:]
				}
				tail := s.Flush()
				joined.WriteString(tail)
				redacted.WriteString(r.String(tail))
				if joined.String() != line {
					t.Fatalf("offset %d: the stream lost or reordered text", off)
				}
				if leaked(redacted.String(), sc.value) {
					t.Fatalf("%q at offset %d (boundary %d) was stored in clear, in part or whole", sc.text, off, boundary)
				}
			}
		}
	}
}
