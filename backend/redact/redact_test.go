package redact

import (
	"bytes"
	"log/slog"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Synthetic secrets, assembled at run time so that this file itself does not
// trip secret scanners.
var (
	awsKey     = "AKIA" + "IOSFODNN7EXAMPLQ"
	awsSecret  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
	ghp        = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gH3jK5"
	gho        = "gho_" + "Zz9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gF9eD8"
	ghPAT      = "github_pat_" + "11ABCDEFG0123456789abc_" + strings.Repeat("xY9", 20)
	glpat      = "glpat-" + "x1Y2z3A4b5C6d7E8f9G0"
	slack      = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOp"
	openai     = "sk-" + "abc123DEF456ghi789JKL012mno345PQR"
	openaiProj = "sk-proj-" + "Abc123Def456Ghi789Jkl012_Mno345-Pqr"
	anthropic  = "sk-ant-" + "api03-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv"
	google     = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
	jwt        = "eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	pemBlock   = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1x2y3z\nabcDEF+/==\n-----END RSA " + "PRIVATE KEY-----"
	bearerTok  = "Authorization: Bearer " + "q1w2e3r4t5y6u7i8o9p0"
)

func TestRedactFormats(t *testing.T) {
	r := NewFromEnviron(nil)
	tests := []struct {
		name, in, want string
	}{
		{"aws access key", "key=" + awsKey + " done", "key=[REDACTED:aws_access_key] done"},
		{"aws secret key", "aws_secret_access_key = " + awsSecret, "aws_secret_access_key = [REDACTED:aws_secret_key]"},
		{"github ghp", "token " + ghp + ".", "token [REDACTED:github_token]."},
		{"github gho", gho, "[REDACTED:github_token]"},
		{"github fine grained", "x " + ghPAT + " y", "x [REDACTED:github_token] y"},
		{"gitlab", "GITLAB=" + glpat, "GITLAB=[REDACTED:gitlab_token]"},
		{"slack", `"` + slack + `"`, `"[REDACTED:slack_token]"`},
		{"openai", "use " + openai, "use [REDACTED:openai_api_key]"},
		{"openai project", "use " + openaiProj, "use [REDACTED:openai_api_key]"},
		{"anthropic", "key: " + anthropic, "key: [REDACTED:anthropic_api_key]"},
		{"google", "k=" + google + "-end", "k=[REDACTED:google_api_key]-end"},
		{"jwt", "cookie " + jwt, "cookie [REDACTED:jwt]"},
		{"private key block", "before\n" + pemBlock + "\nafter", "before\n[REDACTED:private_key]\nafter"},
		{"truncated private key", "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA", "[REDACTED:private_key]"},
		{"authorization header", bearerTok, "Authorization: Bearer [REDACTED:bearer]"},
		{"bare bearer", "curl -H 'x: Bearer abcdEFGH1234ijklMNOP5678'", "curl -H 'x: Bearer [REDACTED:bearer]'"},
		{"url password", "postgres://app:s3cr3tpw@db:5432/x", "postgres://app:[REDACTED:url_password]@db:5432/x"},
		{"generic api key", `api_key: "Zq8xW3vB7nM2kL9pR4tY"`, `api_key: "[REDACTED:generic_secret]"`},
		{"json escaped pem", `{"k":"-----BEGIN ` + `PRIVATE KEY-----\nMIIBVQ==\n-----END ` + `PRIVATE KEY-----"}`, `{"k":"[REDACTED:private_key]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.String(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("String(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestNoFalsePositives(t *testing.T) {
	r := NewFromEnviron([]string{"HOME=/home/someone", "PATH=/usr/bin:/bin", "AWS_REGION=eu-central-1"})
	texts := []string{
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"commit 3b18e512dba79e4c8300dd08aeb37f8e728b8dad",
		"run 0190f5a2-7c3e-7d4b-9a2f-3c1d5e6f7a8b started",
		"func apiKeyFromConfig(cfg *Config) string { return cfg.APIKey }",
		"password := os.Getenv(\"DB_PASSWORD\")",
		"the bearer of this letter is a trusted courier",
		"task-runner-for-everything-you-need and disk-usage-analyser-tool",
		"Authorization header is missing",
		"https://example.com/path?q=1",
		"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
		"region eu-central-1",
		"token_count=12345 input_tokens=9876",
	}
	for _, s := range texts {
		if got := r.String(s); got != s {
			t.Errorf("String(%q) = %q, want unchanged", s, got)
		}
	}
}

func TestEnvironmentValues(t *testing.T) {
	env := []string{
		"MY_SERVICE_API_KEY=plain-looking-value-1",
		"CI_TOKEN=tok-short-but-8",
		"DB_PASSWORD=correct horse battery",
		"AWS_SESSION_TOKEN=FwoGZXIvYXdzEXAMPLE",
		"CUSTOM_THING=not-secret-by-name",
		"SHORT_TOKEN=1234567",
		"AWS_REGION=eu-central-1",
	}
	r := NewFromEnviron(env, "EXTRA_NAME")
	in := "a plain-looking-value-1 b tok-short-but-8 c correct horse battery d FwoGZXIvYXdzEXAMPLE e not-secret-by-name f 1234567 g eu-central-1"
	want := "a [REDACTED:env] b [REDACTED:env] c [REDACTED:env] d [REDACTED:env] e not-secret-by-name f 1234567 g eu-central-1"
	if diff := cmp.Diff(want, r.String(in)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	r2 := NewFromEnviron(append(env, "EXTRA_NAME=explicitly-listed"), "EXTRA_NAME")
	if got := r2.String("x explicitly-listed"); got != "x [REDACTED:env]" {
		t.Errorf("extra name not redacted: %q", got)
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true, "GEMINI_API_KEY": true, "GITHUB_TOKEN": true,
		"AWS_SECRET_ACCESS_KEY": true, "AWS_ACCESS_KEY_ID": true, "MYSQL_PASSWORD": true, "app_secret": true,
		"DATABASE_URL": true, "AWS_REGION": false, "HOME": false, "PATH": false, "PWD": false, "EDITOR": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestIdempotentOnMarkersAndBytes(t *testing.T) {
	r := NewFromEnviron([]string{"X_TOKEN=REDACTED", "Y_TOKEN=abcdefghij"})
	in := "ghp " + ghp + " and abcdefghij and " + bearerTok
	once := r.String(in)
	if twice := r.String(once); twice != once {
		t.Fatalf("not idempotent: %q -> %q", once, twice)
	}
	if got := r.Bytes([]byte(in)); !bytes.Equal(got, []byte(once)) {
		t.Errorf("Bytes = %q, want %q", got, once)
	}
	plain := []byte("nothing here")
	if got := r.Bytes(plain); &got[0] != &plain[0] {
		t.Errorf("Bytes copied an unchanged slice")
	}
}

func TestReplaceAttr(t *testing.T) {
	r := NewFromEnviron([]string{"SVC_API_KEY=value-from-env-123"})
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: r.ReplaceAttr}))
	log.Info("calling with value-from-env-123", "api_key", "anything", "header", bearerTok,
		"err", errString("upstream said "+openai), "count", 3)
	out := buf.String()
	for _, secret := range []string{"value-from-env-123", "anything", "q1w2e3r4t5y6u7i8o9p0", openai} {
		if strings.Contains(out, secret) {
			t.Errorf("log line leaks %q: %s", secret, out)
		}
	}
	for _, want := range []string{`"api_key":"[REDACTED:attr]"`, `"count":3`, "[REDACTED:openai_api_key]", "calling with [REDACTED:env]"} {
		if !strings.Contains(out, want) {
			t.Errorf("log line lacks %s: %s", want, out)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func FuzzRedact(f *testing.F) {
	for _, s := range []string{ghp, bearerTok, pemBlock, jwt, awsKey, "plain text", "sk-ant-" + anthropic, "[REDACTED:env]xx"} {
		f.Add(s)
	}
	r := NewFromEnviron([]string{"F_TOKEN=fuzz-secret-value", "G_SECRET=REDACTED:e"})
	f.Fuzz(func(t *testing.T, s string) {
		once := r.String(s)
		if twice := r.String(once); twice != once {
			t.Fatalf("not idempotent:\n in    %q\n once  %q\n twice %q", s, once, twice)
		}
		if strings.Contains(once, "fuzz-secret-value") {
			t.Fatalf("env secret survived: %q", once)
		}
	})
}

func BenchmarkRedactPlain(b *testing.B) {
	r := NewFromEnviron([]string{"A_TOKEN=abcdefghijkl", "B_API_KEY=0123456789abcdef"})
	s := strings.Repeat("ordinary tool output line with a path ./src/main.go and some words\n", 64)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		r.String(s)
	}
}

func BenchmarkRedactWithSecrets(b *testing.B) {
	r := NewFromEnviron([]string{"A_TOKEN=abcdefghijkl"})
	s := strings.Repeat("ordinary output "+ghp+" and Bearer token "+openai+" here\n", 64)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		r.String(s)
	}
}

// TestStandardLibraryOnly enforces style.md: redact imports nothing but the
// standard library, so every package (and slog setup in main) may use it.
// The one exception is the TOML reader of gitleaks' rule file, which the
// module already depends on for policy files and which imports nothing
// outside the standard library itself.
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != "agenthub/backend/redact" && !strings.HasPrefix(dep, "github.com/pelletier/go-toml/v2") {
			t.Errorf("non-standard dependency: %s", dep)
		}
	}
}
