package approval

import (
	"slices"
	"testing"
)

// TestSecretIgnorePatterns: every kind of secret SecretPath knows has its
// .gitignore spelling, each once, in a stable order.
func TestSecretIgnorePatterns(t *testing.T) {
	got := SecretIgnorePatterns()
	for _, want := range []string{".netrc", "credentials.json", ".env*", "id_rsa*", "*.pem", "*.p12", ".ssh/",
		"**/.aws/credentials", "**/.kube/config"} {
		if !slices.Contains(got, want) {
			t.Errorf("SecretIgnorePatterns lacks %q: %v", want, got)
		}
	}
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("SecretIgnorePatterns is not sorted and unique: %v", got)
	}
	for _, p := range []string{"keys/id_rsa", "config/credentials.json", ".env.local", "certs/server.pem"} {
		if ok, _ := SecretPath(p); !ok {
			t.Errorf("SecretPath(%q) = false; the Gemini test relies on it", p)
		}
	}
}
