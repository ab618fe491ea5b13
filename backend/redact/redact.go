// Package redact removes secrets from text before it is persisted, exported
// or logged: the values AgentHub knows to be secret (registered with
// [Redactor.Add], and secret environment variables of this process) and
// secrets found by rules become "[REDACTED:kind]". The rules are gitleaks'
// maintained default rule set (gitleaks.toml, interpreted by gitleaks.go)
// after our own (rules.go), which catch secrets by the name they are
// assigned to and the formats gitleaks leaves out.
//
// Invariants: redaction is idempotent (redacting twice equals once), never
// fails and never panics; a Redactor is safe for concurrent use. The package
// uses the standard library only, and go-toml to read gitleaks.toml, and
// must not log, store or return the secrets it knows.
package redact

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
)

// MinSecretLen is the shortest environment value treated as a secret;
// shorter values ("1", "true") would redact ordinary text.
const MinSecretLen = 8

// KindEnv is the marker kind of an environment variable's value.
const KindEnv = "env"

// Redactor replaces known secret values and token formats.
type Redactor struct {
	own knownSet // values given to Add, beside the registered ones
}

// New returns a Redactor that knows the values of the process environment's
// secret variables (see [SecretName]) and of the extra variable names given.
func New(envNames ...string) *Redactor {
	return NewFromEnviron(os.Environ(), envNames...)
}

// NewFromEnviron is [New] over an explicit environment ("NAME=value"). The
// secret values are also registered with every Redactor and [Stream] (see
// [Register]): the environment of this process or of an agent it starts
// holds real credentials, wherever they show up.
func NewFromEnviron(environ []string, envNames ...string) *Redactor {
	extra := map[string]bool{}
	for _, n := range envNames {
		extra[n] = true
	}
	r := &Redactor{}
	var vals []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && (extra[name] || SecretName(name)) {
			vals = append(vals, value)
		}
	}
	Register(vals...)
	return r
}

// secretNameParts are substrings of variable names that hold secrets.
var secretNameParts = []string{
	"API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PRIVATE_KEY", "CREDENTIAL", "ACCESS_KEY",
	"DATABASE_URL", "_DSN",
}

// awsNotSecret are AWS_* variables that hold configuration, not secrets.
var awsNotSecret = map[string]bool{
	"AWS_REGION": true, "AWS_DEFAULT_REGION": true, "AWS_PROFILE": true, "AWS_DEFAULT_OUTPUT": true,
	"AWS_CONFIG_FILE": true, "AWS_SHARED_CREDENTIALS_FILE": true, "AWS_SDK_LOAD_CONFIG": true, "AWS_PAGER": true,
	"AWS_ENDPOINT_URL": true, "AWS_CA_BUNDLE": true, "AWS_RETRY_MODE": true, "AWS_MAX_ATTEMPTS": true,
}

// SecretName reports whether an environment variable name conventionally
// holds a secret: *_API_KEY, *_TOKEN, *_SECRET, *PASSWORD*, AWS_* (except
// configuration such as AWS_REGION), credentials and database URLs.
func SecretName(name string) bool {
	u := strings.ToUpper(name)
	if strings.HasPrefix(u, "AWS_") && !awsNotSecret[u] {
		return true
	}
	for _, p := range secretNameParts {
		if strings.Contains(u, p) {
			return true
		}
	}
	return false
}

// Add registers more secret values with this Redactor only, such as an
// API key read from the keychain, with their encoded forms (see
// [Register], which registers them with every Redactor). Values shorter
// than [MinSecretLen], and values that occur in a redaction marker (which
// would break idempotence), are ignored.
func (r *Redactor) Add(values ...string) {
	r.own.add(values)
}

// markerText holds every marker, so Add can refuse values hidden in them.
var markerText = sync.OnceValue(func() string {
	var b strings.Builder
	b.WriteString(marker(KindEnv))
	for _, r := range compiledRules().rules {
		b.WriteString(marker(r.kind))
	}
	b.WriteString(marker(kindAttr))
	return b.String()
})

// maxPasses bounds the passes until nothing changes; one pass nearly always
// suffices, a second confirms it.
const maxPasses = 4

// String returns s with every secret replaced by "[REDACTED:kind]".
func (r *Redactor) String(s string) string {
	for range maxPasses {
		next := r.pass(s)
		if next == s {
			return s
		}
		s = next
	}
	return s
}

func (r *Redactor) pass(s string) string {
	s = registry.replace(s)
	if r != nil {
		s = r.own.replace(s)
	}
	// A few formats span lines (a private key block); every other fits on
	// one line, and short lines keep the regexp engine on its fast
	// backtracking path.
	if !strings.Contains(s, "\n") {
		return compiledRules().redactText(s, allRules)
	}
	s = compiledRules().redactText(s, wholeRules)
	lines := strings.SplitAfter(s, "\n")
	changed := false
	for i, ln := range lines {
		if out := compiledRules().redactText(ln, lineRules); out != ln {
			lines[i], changed = out, true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(lines, "")
}

// Bytes is [Redactor.String] for byte slices. It returns b itself when
// nothing was redacted.
func (r *Redactor) Bytes(b []byte) []byte {
	s := string(b)
	out := r.String(s)
	if out == s {
		return b
	}
	return []byte(out)
}

// kindAttr marks a log attribute redacted because of its key.
const kindAttr = "attr"

// secretKeys are log attribute keys whose string values are always secret.
var secretKeys = []string{"password", "passwd", "secret", "api_key", "apikey", "authorization", "cookie",
	"private_key", "access_token", "refresh_token", "auth_token", "bearer"}

// ReplaceAttr is a slog.HandlerOptions.ReplaceAttr hook: string values and
// the text of other values (errors included) are redacted, and string values
// under secret-looking keys are dropped entirely.
func (r *Redactor) ReplaceAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		key := strings.ToLower(a.Key)
		for _, k := range secretKeys {
			if strings.Contains(key, k) && a.Value.String() != "" {
				return slog.String(a.Key, marker(kindAttr))
			}
		}
		if s := a.Value.String(); r.String(s) != s {
			return slog.String(a.Key, r.String(s))
		}
	case slog.KindAny:
		s := fmt.Sprint(a.Value.Any())
		if out := r.String(s); out != s {
			return slog.String(a.Key, out)
		}
	}
	return a
}
