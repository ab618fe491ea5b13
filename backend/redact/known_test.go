package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

// TestRegisteredSecretsAreMaskedEverywhere: a value registered with
// Register (a local gateway's token, with no format any rule knows) is
// masked by every Redactor, also when it shows up encoded: base64 at any
// alignment inside a longer base64 text, in either alphabet, and URL
// escaped.
func TestRegisteredSecretsAreMaskedEverywhere(t *testing.T) {
	token := "gw-local+tok/ens?nodigits" + "QxZ" // no prefix, no rule matches it
	if out := NewFromEnviron(nil).String("echo " + token); out != "echo "+token {
		t.Fatalf("the test token must not match a rule on its own: %q", out)
	}
	Register(token)
	r := NewFromEnviron(nil) // a Redactor made before or after: both see it
	basic := func(user string) string { return base64.StdEncoding.EncodeToString([]byte(user + ":" + token)) }
	texts := map[string]string{
		"echoed by the model":      "Sure, your key is " + token + ".",
		"in a JSON string":         `{"text":"` + token + `"}`,
		"url query":                "GET /v1?key=" + url.QueryEscape(token),
		"url path":                 "GET /keys/" + url.PathEscape(token) + "/info",
		"base64 alone":             base64.StdEncoding.EncodeToString([]byte(token)),
		"basic auth, offset 0":     "Authorization: Basic " + basic("ab"),
		"basic auth, offset 1":     "Authorization: Basic " + basic("abc"),
		"basic auth, offset 2":     "Authorization: Basic " + basic("abcd"),
		"url-safe base64 offset 1": base64.URLEncoding.EncodeToString([]byte("x" + token + "tail")),
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			out := r.String(text)
			for _, f := range forms(token) {
				if strings.Contains(out, f) {
					t.Errorf("%q still holds the form %q", out, f)
				}
			}
			if strings.Contains(out, token) || !strings.Contains(out, "[REDACTED:") {
				t.Errorf("not masked: %q", out)
			}
			if again := r.String(out); again != out {
				t.Errorf("not idempotent: %q then %q", out, again)
			}
		})
	}
}

// TestRegisterIgnoresShortValues: a short value would mask ordinary text.
func TestRegisterIgnoresShortValues(t *testing.T) {
	Register("abc", "", "REDACTED")
	if out := NewFromEnviron(nil).String("abc REDACTED x"); out != "abc REDACTED x" {
		t.Fatalf("short or marker values were masked: %q", out)
	}
}
