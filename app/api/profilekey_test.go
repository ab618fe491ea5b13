package api

import (
	"strings"
	"testing"

	"agenthub/backend/profile"
	"agenthub/backend/redact"
)

// TestProfileKeyIsMaskedEverywhere: a profile's key read from key_env is
// registered with the redactor, so a local gateway token with no known
// format, under a variable whose name does not say secret, is masked when
// the model echoes it (issue 14 §6).
func TestProfileKeyIsMaskedEverywhere(t *testing.T) {
	token := "lgw" + "Mx7TqP2vLz9KcR4wNb6Y"
	t.Setenv("LOCAL_GATEWAY_AUTH_VALUE", token)
	echo := "Sure: your configured value is " + token + "."
	if out := redact.NewFromEnviron(nil).String(echo); !strings.Contains(out, token) {
		t.Fatalf("the test token is caught by a rule already: %q", out)
	}
	if got := keyOf(profile.Profile{KeyEnv: "LOCAL_GATEWAY_AUTH_VALUE"}); got != token {
		t.Fatalf("keyOf = %q", got)
	}
	if out := redact.NewFromEnviron(nil).String(echo); strings.Contains(out, token) {
		t.Fatalf("the profile key was not masked: %q", out)
	}
}
