package bundle

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"agenthub/backend"
	"agenthub/backend/canon"
)

// zeroTime stamps every zip entry, so that the same run exports to the same
// bytes (its manifest's exportedAt aside).
var zeroTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// maxFile bounds one file read from a bundle (a zip bomb stops here).
const maxFile = 1 << 30

// Bundle is an opened bundle: its manifest and files, read whole.
type Bundle struct {
	Manifest Manifest
	Files    map[string][]byte
}

// Open reads a bundle without checking it (see [Verify]).
func Open(r io.ReaderAt, size int64) (*Bundle, error) {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("bundle: not a zip file: %w", err)
	}
	b := &Bundle{Files: map[string][]byte{}}
	for _, f := range z.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		if _, dup := b.Files[f.Name]; dup {
			return nil, fmt.Errorf("bundle: %s appears twice", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("bundle: open %s: %w", f.Name, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, maxFile+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("bundle: read %s: %w", f.Name, err)
		}
		if len(data) > maxFile {
			return nil, fmt.Errorf("bundle: %s is larger than %d bytes", f.Name, maxFile)
		}
		b.Files[f.Name] = data
	}
	raw, ok := b.Files[ManifestFile]
	if !ok {
		return nil, fmt.Errorf("bundle: no %s", ManifestFile)
	}
	if err := json.Unmarshal(raw, &b.Manifest); err != nil {
		return nil, fmt.Errorf("bundle: read %s: %w", ManifestFile, err)
	}
	if b.Manifest.Format != Format {
		return nil, fmt.Errorf("bundle: %s is not an AgentHub run bundle (format %q)", ManifestFile, b.Manifest.Format)
	}
	if b.Manifest.Version > Version {
		return nil, fmt.Errorf("bundle: version %d is newer than this AgentHub reads (%d)", b.Manifest.Version, Version)
	}
	return b, nil
}

// Report is the outcome of [Verify].
type Report struct {
	OK       bool     `json:"ok"`
	Run      RunInfo  `json:"run"`
	Events   int      `json:"events"`
	Audit    int      `json:"auditEntries"`
	Head     *Link    `json:"head,omitempty"`
	Checked  []string `json:"checked"`  // what held
	Problems []string `json:"problems"` // what did not, one line each
	Proves   string   `json:"proves"`
}

// Verify checks an opened bundle with nothing but its own bytes.
func Verify(b *Bundle) Report {
	m := b.Manifest
	r := Report{Run: m.Run, Events: m.Events.Count, Audit: m.Audit.Entries, Head: m.Audit.Head, Proves: Proves,
		Checked: []string{}, Problems: []string{}}
	bad := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	ok := func(s string) { r.Checked = append(r.Checked, s) }

	listed := map[string]bool{ManifestFile: true}
	hashesHold := true
	for _, f := range m.Files {
		listed[f.Name] = true
		data, present := b.Files[f.Name]
		if !present {
			bad("%s is listed in the manifest but missing", f.Name)
			hashesHold = false
			continue
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != f.SHA256 || int64(len(data)) != f.Bytes {
			bad("%s does not match its manifest hash (changed after export)", f.Name)
			hashesHold = false
		}
	}
	names := make([]string, 0, len(b.Files))
	for name := range b.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !listed[name] {
			bad("%s is not in the manifest (added after export)", name)
			hashesHold = false
		}
	}
	if hashesHold {
		ok(fmt.Sprintf("%d files match their SHA-256 in the manifest", len(m.Files)))
	}
	verifyEvents(b, m, ok, bad)
	verifyAudit(b, m, ok, bad)
	r.OK = len(r.Problems) == 0
	return r
}

func verifyEvents(b *Bundle, m Manifest, ok func(string), bad func(string, ...any)) {
	digest := ""
	h := sha256.New()
	var want int64
	n := 0
	err := readLines(b.Files[EventsFile], func(line int, raw []byte) error {
		var ev backend.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("line %d is not an event: %w", line, err)
		}
		want++
		if ev.Sequence != want {
			return fmt.Errorf("line %d has sequence %d, want %d (an event is missing or moved)", line, ev.Sequence, want)
		}
		if ev.RunID != m.Run.ID {
			return fmt.Errorf("event #%d belongs to run %s, not %s", ev.Sequence, ev.RunID, m.Run.ID)
		}
		h.Reset()
		h.Write([]byte(digest))
		h.Write(raw)
		digest = hex.EncodeToString(h.Sum(nil))
		n++
		return nil
	})
	switch {
	case err != nil:
		bad("%s: %v", EventsFile, err)
	case n != m.Events.Count || want != m.Events.LastSeq:
		bad("%s holds %d events up to #%d; the manifest says %d up to #%d", EventsFile, n, want, m.Events.Count,
			m.Events.LastSeq)
	case digest != m.Events.Digest:
		bad("%s: the digest chain ends at %s, the manifest says %s", EventsFile, short(digest), short(m.Events.Digest))
	default:
		ok(fmt.Sprintf("%d events, #1 to #%d without a gap, digest chain %s", n, want, short(digest)))
	}
}

func verifyAudit(b *Bundle, m Manifest, ok func(string), bad func(string, ...any)) {
	var chain []Link
	err := readLines(b.Files[ChainFile], func(line int, raw []byte) error {
		var l Link
		if err := json.Unmarshal(raw, &l); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if n := len(chain); n > 0 {
			prev := chain[n-1]
			if l.Seq != prev.Seq+1 {
				return fmt.Errorf("entry %d follows entry %d (the chain has a hole)", l.Seq, prev.Seq)
			}
			if l.PrevHash != prev.Hash {
				return fmt.Errorf("entry %d does not link to entry %d (prevHash differs)", l.Seq, prev.Seq)
			}
		}
		chain = append(chain, l)
		return nil
	})
	if err != nil {
		bad("%s: %v", ChainFile, err)
		return
	}
	if len(chain) > 0 && (m.Audit.Head == nil || *m.Audit.Head != chain[len(chain)-1] || m.Audit.From == nil ||
		*m.Audit.From != chain[0]) {
		bad("%s does not run from the manifest's first entry to its head", ChainFile)
		return
	}
	bySeq := map[int64]Link{}
	for _, l := range chain {
		bySeq[l.Seq] = l
	}
	altered := map[int64]bool{}
	for _, s := range m.Audit.Altered {
		altered[s] = true
	}
	n, plain := 0, 0
	err = readLines(b.Files[AuditFile], func(line int, raw []byte) error {
		var e backend.AuditEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		n++
		if e.RunID != m.Run.ID {
			return fmt.Errorf("entry %d belongs to run %q, not %s", e.Seq, e.RunID, m.Run.ID)
		}
		l, in := bySeq[e.Seq]
		if !in || l.Hash != e.Hash || l.PrevHash != e.PrevHash {
			return fmt.Errorf("entry %d is not the chain's entry %d", e.Seq, e.Seq)
		}
		// An entry written before the chain was keyed has a plain hash: it
		// can be recomputed here; a keyed one only where the key is.
		if !altered[e.Seq] && plainHash(e) == e.Hash {
			plain++
		}
		return nil
	})
	switch {
	case err != nil:
		bad("%s: %v", AuditFile, err)
	case n != m.Audit.Entries:
		bad("%s holds %d entries, the manifest says %d", AuditFile, n, m.Audit.Entries)
	case n == 0:
		ok("the run has no audit entries")
	default:
		msg := fmt.Sprintf("%d audit entries of the run in one unbroken chain of %d links ending at head %d:%s",
			n, len(chain), m.Audit.Head.Seq, short(m.Audit.Head.Hash))
		if plain > 0 {
			msg += fmt.Sprintf(" (%d with a plain hash, recomputed)", plain)
		}
		ok(msg)
	}
}

// plainHash is the unkeyed chain hash of the entries written before the key
// (store.AuditHash); "" when it cannot be computed.
func plainHash(e backend.AuditEntry) string {
	e.Hash = ""
	body, err := canon.Marshal(e)
	if err != nil {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(e.PrevHash))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// Events decodes events.jsonl.
func (b *Bundle) Events() ([]backend.Event, error) {
	var out []backend.Event
	err := readLines(b.Files[EventsFile], func(line int, raw []byte) error {
		var ev backend.Event
		if err := json.Unmarshal(bytes.Clone(raw), &ev); err != nil {
			return fmt.Errorf("bundle: %s line %d: %w", EventsFile, line, err)
		}
		out = append(out, ev)
		return nil
	})
	return out, err
}
