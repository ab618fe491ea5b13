package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	envValue := `p"a\ss<w>ord&1234`
	r := NewFromEnviron([]string{"MY_API_TOKEN=" + envValue})
	escapedEnv, _ := json.Marshal(envValue)
	keyLines := strings.Split("-----BEGIN OPENSSH "+"PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDpLx0V\n-----END OPENSSH "+"PRIVATE KEY-----", "\n")
	var diffLines []map[string]any
	for i, l := range keyLines {
		diffLines = append(diffLines, map[string]any{"op": "add", "new": i + 1, "text": l})
	}
	diff, _ := json.Marshal(map[string]any{"path": "notes.txt", "lines": diffLines, "after": "ordinary line of text"})
	tests := []struct {
		name    string
		in      string
		secrets []string
		keep    []string
	}{
		{"token after an escape", `{"out":"line\n` + ghp + `"}`, []string{ghp}, []string{`"out"`}},
		{"aws key", `["` + awsKey + `", 1, true, null]`, []string{awsKey}, []string{"1, true, null"}},
		{"env value with escapes", `{"v":` + string(escapedEnv) + `}`, []string{"ss<w>ord", `ss\u003cw\u003eord`}, []string{`"v"`}},
		{"key and value in separate strings", `{"api_key":"Zq8xW3vB7nM2kL9pR4tY"}`, []string{"Zq8xW3vB7nM2kL9pR4tY"}, []string{"api_key"}},
		{"private key in one string", `{"text":` + mustJSON(pemBlock) + `}`, []string{"MIIEpAIBAAKCAQEA1x2y3z"}, nil},
		{"private key split over diff lines", string(diff), []string{"b3BlbnNzaC1rZXktdjEAAAAABG5v", "QyNTUxOQAAACDpLx0V"},
			[]string{"ordinary line of text", `"op":"add"`, "notes.txt"}},
		{"nothing to redact", `{"a":"plain text","n":[1,2.50,{"b":"c"}]}`, nil, []string{`{"a":"plain text","n":[1,2.50,{"b":"c"}]}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(r.JSON([]byte(tt.in)))
			if !json.Valid([]byte(got)) {
				t.Fatalf("result is not JSON: %s", got)
			}
			for _, s := range tt.secrets {
				if strings.Contains(got, s) {
					t.Errorf("secret %q survived: %s", s, got)
				}
			}
			if len(tt.secrets) > 0 && !strings.Contains(got, "[REDACTED:") {
				t.Errorf("no marker in %s", got)
			}
			for _, k := range tt.keep {
				if !strings.Contains(got, k) {
					t.Errorf("lost %q: %s", k, got)
				}
			}
			if again := string(r.JSON([]byte(got))); again != got {
				t.Errorf("not idempotent:\n%s\n%s", got, again)
			}
		})
	}
}

func TestJSONNotJSON(t *testing.T) {
	r := NewFromEnviron(nil)
	if got := string(r.JSON([]byte("not json " + awsKey))); strings.Contains(got, awsKey) {
		t.Errorf("text fallback kept the key: %s", got)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func FuzzJSON(f *testing.F) {
	f.Add(`{"a":"b\n` + ghp + `"}`)
	f.Add(`["-----BEGIN ` + `PRIVATE KEY-----","QUJDREVGR0hJSktM","x"]`)
	r := NewFromEnviron([]string{"X_TOKEN=abcdefgh\"ij"})
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		if out := r.JSON([]byte(in)); !json.Valid(out) {
			t.Fatalf("JSON(%q) = %q: not JSON", in, out)
		}
	})
}

func BenchmarkJSONPlain(b *testing.B) {
	r := New()
	in := []byte(`{"messageId":"msg_0192f0a1b2c3d4e5f60718293a4b5c6d","text":"` + strings.Repeat("word ", 56) + `"}`)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		r.JSON(in)
	}
}
