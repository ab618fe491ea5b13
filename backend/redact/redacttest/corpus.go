// Package redacttest is the shared corpus of the secret redactor: secrets
// in 80+ formats, each inside a realistic line (.env, YAML, JSON, shell,
// logs, connection strings, PEM blocks), and texts that hold no secret and
// must survive redaction unchanged. Tests of the redactor, of the store and
// of the hostile-agent suite load it from backend/redact/testdata and scan
// what was stored with [Leaks].
package redacttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Secret is one corpus case: Text holds the secret as it appears in its
// format; Parts, when set, are the pieces that must all disappear (the
// lines of a private key), else Secret is.
type Secret struct {
	Name   string   `json:"name"`
	Format string   `json:"format"`
	Secret string   `json:"secret"`
	Text   string   `json:"text"`
	Parts  []string `json:"secret_parts,omitempty"`
}

// NonSecret is a text that redaction must leave unchanged.
type NonSecret struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Dir is the corpus directory, found from this file's location.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Secrets loads testdata/secrets.json.
func Secrets() ([]Secret, error) {
	var out []Secret
	return out, load("secrets.json", &out)
}

// NonSecrets loads testdata/nonsecrets.json.
func NonSecrets() ([]NonSecret, error) {
	var out []NonSecret
	return out, load("nonsecrets.json", &out)
}

func load(name string, v any) error {
	b, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		return fmt.Errorf("read the redaction corpus: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse the redaction corpus %s: %w", name, err)
	}
	return nil
}

// Window is the length of the pieces of a secret that [Leaks] looks for:
// a stored half of a split token is a leak too.
const Window = 16

// Pieces are the byte strings whose presence in stored data means the
// secret leaked: every Window-byte piece of each part (the whole part when
// shorter), in the forms a store or an export may hold them (as is and
// JSON-escaped).
func (s Secret) Pieces() []string {
	parts := s.Parts
	if len(parts) == 0 {
		parts = []string{s.Secret}
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range parts {
		w := min(len(p), Window)
		for i := 0; i+w <= len(p); i++ {
			piece := p[i : i+w]
			forms := []string{piece}
			if enc, err := json.Marshal(piece); err == nil {
				forms = append(forms, string(enc[1:len(enc)-1]))
			}
			for _, f := range forms {
				if !seen[f] {
					seen[f] = true
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// Leaks returns the pieces of s found in data (nil: no leak).
func (s Secret) Leaks(data []byte) []string {
	var found []string
	text := string(data)
	for _, p := range s.Pieces() {
		if strings.Contains(text, p) {
			found = append(found, p)
		}
	}
	return found
}
