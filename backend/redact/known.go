package redact

import (
	"encoding/base64"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Register makes every Redactor of this process mask values exactly, the
// way CI systems mask registered secrets: the API keys of profiles, the
// values read from the OS keychain, MCP header values, the serve token.
// A secret without a well-known format (a local gateway's token) is then
// masked wherever it shows up: echoed by the model, printed by a command,
// in a tool result. Its encoded forms are masked too (see [forms]).
//
// Values shorter than [MinSecretLen] are ignored (they would mask ordinary
// text), and so is a value found in a marker. Registered values are kept
// in memory only, for the life of the process.
func Register(values ...string) {
	registry.add(values)
}

// registry is the process's registered secrets.
var registry knownSet

// knownSet is a set of exact secrets and a replacer for them and their
// encoded forms.
type knownSet struct {
	mu      sync.Mutex
	values  map[string]bool
	rep     atomic.Pointer[strings.Replacer] // nil until the first value
	longest atomic.Int64                     // the longest form, for Stream
}

func (k *knownSet) add(values []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	changed := false
	for _, v := range values {
		for _, f := range forms(v) {
			if k.values == nil {
				k.values = map[string]bool{}
			}
			if !k.values[f] {
				k.values[f], changed = true, true
			}
		}
	}
	if !changed {
		return
	}
	all := make([]string, 0, len(k.values))
	longest := 0
	for v := range k.values {
		all = append(all, v)
		longest = max(longest, len(v))
	}
	// Longest first, so that a value holding another is masked whole.
	sort.Slice(all, func(i, j int) bool {
		if len(all[i]) != len(all[j]) {
			return len(all[i]) > len(all[j])
		}
		return all[i] < all[j]
	})
	pairs := make([]string, 0, 2*len(all))
	for _, v := range all {
		pairs = append(pairs, v, marker(KindEnv))
	}
	k.rep.Store(strings.NewReplacer(pairs...))
	k.longest.Store(int64(longest))
}

// crossing returns the smallest start of a registered form found across
// offset c of s (starting before c, ending after it), or c.
func (k *knownSet) crossing(s string, c int) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	best := c
	for f := range k.values {
		lo := max(0, c-len(f)+1)
		hi := min(len(s), c+len(f)-1)
		if lo >= hi {
			continue
		}
		if i := strings.Index(s[lo:hi], f); i >= 0 {
			best = min(best, lo+i)
		}
	}
	return best
}

func (k *knownSet) replace(s string) string {
	if rep := k.rep.Load(); rep != nil {
		return rep.Replace(s)
	}
	return s
}

// minEncoded is the shortest encoded fragment masked: shorter pieces of
// base64 would turn up in ordinary base64 by chance.
const minEncoded = 10

// forms are the texts that reveal v: v itself, its URL-encoded forms
// (query and path escaping), and its base64 in the standard and URL
// alphabets at each of the three alignments it can have inside a longer
// base64 text ("user:" + v in a Basic header, a Docker config's auth),
// each cut to the characters that depend on v alone.
func forms(v string) []string {
	if len(v) < MinSecretLen || strings.Contains(markerText(), v) {
		return nil
	}
	out := []string{v}
	for _, e := range []string{url.QueryEscape(v), url.PathEscape(v)} {
		if e != v {
			out = append(out, e)
		}
	}
	for shift := range 3 {
		buf := append(make([]byte, shift), v...)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			full := enc.EncodeToString(buf)
			// Character k holds bits [6k, 6k+6) of buf; keep those within v.
			first := (shift*8 + 5) / 6
			last := len(buf) * 8 / 6 // exclusive: the characters fully inside
			if last-first >= minEncoded {
				out = append(out, full[first:last])
			}
		}
	}
	// Only forms that a marker does not hold keep redaction idempotent.
	kept := out[:0]
	for _, f := range out {
		if !strings.Contains(markerText(), f) {
			kept = append(kept, f)
		}
	}
	return kept
}
