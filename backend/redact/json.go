package redact

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// JSON returns a JSON document with every secret replaced, for records the
// store persists (event payloads, messages, tool results, approval
// previews). It works in two passes, because neither alone is enough:
//
//   - string by string, on the decoded values, so that an escape ("\n"
//     before a token, a quote inside an environment value) cannot hide a
//     secret, and so that a private key whose lines were split into
//     separate strings (the lines of a diff) is caught;
//   - over the whole text, so that a key and its value in separate strings
//     ({"api_key":"…"}) still match the rules that need the key name.
//
// The text pass is kept only if the result is still valid JSON; otherwise
// every string is redacted on its own. Only strings with escapes need the
// first pass when the text pass succeeds: the others read the same in both.
// Input that is not valid JSON is redacted as text. JSON returns b itself
// when nothing was redacted.
//
// A document with no escape and no private key (most event payloads) needs
// no string pass, and when the text pass changes nothing the answer is b
// whether b is valid JSON or not: validity is checked only once something
// was redacted. json.Valid was more than half of the redactor's cost per
// event payload (docs/PERFORMANCE.md).
func (r *Redactor) JSON(b []byte) []byte {
	split := bytes.Contains(b, []byte("PRIVATE KEY"))
	if !split && bytes.IndexByte(b, '\\') < 0 {
		text := r.Bytes(b)
		switch {
		case bytes.Equal(text, b):
			return b
		case !json.Valid(b), json.Valid(text):
			return text
		}
		return r.walk(b, true, false)
	}
	if !json.Valid(b) {
		return r.Bytes(b)
	}
	out := r.walk(b, false, split)
	text := r.Bytes(out)
	switch {
	case bytes.Equal(text, out):
		return out
	case json.Valid(text):
		return text
	}
	return r.walk(out, true, split)
}

// privateKeyStart finds a private key header; keyBody matches one line of
// its base64 body, with an optional diff marker in front.
var (
	privateKeyStart = regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY`)
	keyBody         = regexp.MustCompile(`^[+ -]?[A-Za-z0-9+/=]{8,}$`)
)

// walk redacts the strings of a valid JSON document one by one (all, or
// only those with escapes) and copies everything else unchanged. split
// enables the detection of private keys split over several strings.
func (r *Redactor) walk(b []byte, all, split bool) []byte {
	var out []byte // nil until the first change
	inKey := false // inside a private key whose lines are separate strings
	last := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end := stringEnd(b, i)
		isKey := nextNonSpace(b, end+1) == ':'
		next, ok := r.redactString(b[i:end+1], all, isKey, split, &inKey)
		if ok {
			if out == nil {
				out = make([]byte, 0, len(b)+32)
			}
			out = append(append(out, b[last:i]...), next...)
			last = end + 1
		}
		i = end
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// redactString redacts one JSON string literal (quotes included) and
// returns its replacement, or false when it is unchanged.
func (r *Redactor) redactString(lit []byte, all, isKey, split bool, inKey *bool) ([]byte, bool) {
	escaped := bytes.IndexByte(lit, '\\') >= 0
	if !all && !escaped && !split {
		return nil, false
	}
	v := string(lit[1 : len(lit)-1])
	if escaped {
		if err := json.Unmarshal(lit, &v); err != nil {
			return nil, false // cannot happen for valid JSON; keep the literal
		}
	}
	red := v
	if all || escaped {
		red = r.String(v)
	}
	if split && !isKey {
		red = splitKeyLine(v, red, inKey)
	}
	if red == v {
		return nil, false
	}
	enc, err := json.Marshal(red)
	if err != nil {
		return nil, false
	}
	return enc, true
}

// splitKeyLine handles a private key spread over several strings: after a
// string that opens a key block without closing it, strings that look like
// lines of its body are replaced whole, until the END line or an ordinary
// line of text. Short strings between them ("add", "del") keep the state.
func splitKeyLine(orig, red string, inKey *bool) string {
	switch {
	case *inKey && strings.Contains(orig, "-----END"):
		*inKey = false
	case *inKey && keyBody.MatchString(orig):
		return marker("private_key")
	case *inKey && len(orig) >= 8:
		*inKey = false
	}
	if loc := privateKeyStart.FindStringIndex(orig); loc != nil && !strings.Contains(orig[loc[1]:], "-----END") {
		*inKey = true
	}
	return red
}

// stringEnd returns the index of the quote that closes the string literal
// opening at b[start].
func stringEnd(b []byte, start int) int {
	for j := start + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(b) - 1
}

func nextNonSpace(b []byte, i int) byte {
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return b[i]
		}
	}
	return 0
}
