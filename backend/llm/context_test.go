package llm

import (
	"testing"

	"agenthub/backend"
)

// TestRequestContext: hook context follows the profile's system prompt,
// blank parts are skipped, and nothing is added without context.
func TestRequestContext(t *testing.T) {
	for _, tc := range []struct {
		system string
		extra  []string
		want   string
	}{
		{"sys", nil, "sys"},
		{"sys", []string{"a", " ", "b"}, "sys\n\na\n\nb"},
		{"", []string{"a"}, "a"},
		{"", nil, ""},
	} {
		m := AsModel(nil, ModelConfig{Model: "m", System: tc.system})
		if got := m.request(backend.ModelRequest{Context: tc.extra}).System; got != tc.want {
			t.Errorf("system %q + %q = %q, want %q", tc.system, tc.extra, got, tc.want)
		}
	}
}
