package redact

import (
	"encoding/json"
	"testing"

	"agenthub/backend/redact/redacttest"
)

// TestCorpusSecretsAreRedacted: every secret of the shared corpus, in its
// realistic line, is gone after redaction (no 16-byte piece of it left),
// as text and inside a JSON payload.
func TestCorpusSecretsAreRedacted(t *testing.T) {
	secrets, err := redacttest.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets) < 40 {
		t.Fatalf("the corpus has %d secrets, want at least 40", len(secrets))
	}
	r := NewFromEnviron(nil)
	for _, c := range secrets {
		t.Run(c.Name, func(t *testing.T) {
			if out := r.String(c.Text); len(c.Leaks([]byte(out))) > 0 {
				t.Errorf("text: %q leaks %q", out, c.Leaks([]byte(out)))
			}
			payload := []byte(`{"toolCallId":"call_1","text":` + jsonString(c.Text) + `}`)
			if out := r.JSON(payload); len(c.Leaks(out)) > 0 {
				t.Errorf("JSON: %s leaks %q", out, c.Leaks(out))
			}
		})
	}
}

// TestCorpusNonSecretsSurvive: texts with no secret (commit ids, UUIDs,
// lockfile hashes, prompts, public keys) are left unchanged.
func TestCorpusNonSecretsSurvive(t *testing.T) {
	texts, err := redacttest.NonSecrets()
	if err != nil {
		t.Fatal(err)
	}
	r := NewFromEnviron(nil)
	for _, c := range texts {
		t.Run(c.Name, func(t *testing.T) {
			if out := r.String(c.Text); out != c.Text {
				t.Errorf("changed:\n got %q\nwant %q", out, c.Text)
			}
		})
	}
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// BenchmarkLoadRules: compiling gitleaks.toml and our rules, paid once per
// process at start.
func BenchmarkLoadRules(b *testing.B) {
	for b.Loop() {
		if _, _, err := loadGitleaks(gitleaksConfig); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCorpus: every text of the shared corpus, secrets and
// non-secrets, redacted once per op (docs/PERFORMANCE.md).
func BenchmarkCorpus(b *testing.B) {
	secrets, err := redacttest.Secrets()
	if err != nil {
		b.Fatal(err)
	}
	texts, err := redacttest.NonSecrets()
	if err != nil {
		b.Fatal(err)
	}
	var all []string
	for _, c := range secrets {
		all = append(all, c.Text)
	}
	for _, c := range texts {
		all = append(all, c.Text)
	}
	r := NewFromEnviron(nil)
	for b.Loop() {
		for _, t := range all {
			r.String(t)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(all)), "µs/text")
}
