package bundle

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"agenthub/backend"
)

// Format names the bundle layout in its manifest; Version changes with it.
const (
	Format  = "agenthub-run-bundle"
	Version = 1
)

// File names inside a bundle.
const (
	ManifestFile   = "manifest.json"
	EventsFile     = "events.jsonl"
	AuditFile      = "audit.jsonl"
	ChainFile      = "audit-chain.jsonl"
	TranscriptMD   = "transcript.md"
	TranscriptHTML = "transcript.html"
	PatchesDir     = "patches/"
	ArtifactsDir   = "artifacts/"
)

// Proves is the manifest's own statement of what the bundle proves.
const Proves = "The files match the hashes below; the events are one gap-free run whose SHA-256 digest chain ends " +
	"at events.digest; the run's audit entries sit in one unbroken hash chain ending at audit.head. The keyed " +
	"audit hashes can only be recomputed on the machine that wrote them (agenthub audit verify --head); the " +
	"bundle is not signed, so it does not prove who wrote it."

// RunInfo is what a bundle says about its run.
type RunInfo struct {
	ID          string           `json:"id"`
	Task        string           `json:"task"`
	State       backend.RunState `json:"state"`
	Profile     string           `json:"profile"`
	Runtime     string           `json:"runtime,omitempty"`
	Workspace   string           `json:"workspace"` // the workspace's name, never its path
	CreatedAt   string           `json:"createdAt"`
	LastEventAt string           `json:"lastEventAt,omitempty"`
}

// Link is one audit chain entry without its data.
type Link struct {
	Seq      int64  `json:"seq"`
	PrevHash string `json:"prevHash"`
	Hash     string `json:"hash"`
}

// Input is what Write exports.
type Input struct {
	Run    RunInfo
	Events []backend.Event
	Audit  []backend.AuditEntry // the run's entries, ascending
	Chain  []Link               // every chain link from the run's first entry to the head, ascending
	// Clean rewrites every byte written (secrets, machine paths); nil keeps
	// bytes as they are.
	Clean      func([]byte) []byte
	ExportedAt string
	Producer   string // the AgentHub version that wrote it
	// Artifacts are the run's artifacts (issue 18), written under
	// artifacts/ as stored: already path-scrubbed and secret-scanned when
	// they were made, so Clean is not applied (it would break an image).
	Artifacts []ArtifactFile
}

// ArtifactFile is one artifact's bytes in the bundle.
type ArtifactFile struct {
	Name string // the file name under artifacts/, unique in the bundle
	Data []byte
}

// FileEntry is one file of the bundle in its manifest.
type FileEntry struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// Manifest is manifest.json.
type Manifest struct {
	Format     string      `json:"format"`
	Version    int         `json:"version"`
	Run        RunInfo     `json:"run"`
	ExportedAt string      `json:"exportedAt"`
	Producer   string      `json:"producer"`
	Proves     string      `json:"proves"`
	Files      []FileEntry `json:"files"`
	Events     EventsProof `json:"events"`
	Audit      AuditProof  `json:"audit"`
}

// EventsProof is the events' digest chain: d(0) = "", d(i) =
// hex(SHA-256(d(i-1) || line i of events.jsonl without its newline)).
type EventsProof struct {
	Count   int    `json:"count"`
	LastSeq int64  `json:"lastSeq"`
	Digest  string `json:"digest"`
}

// AuditProof is the run's audit entries' place in the chain.
type AuditProof struct {
	Entries int   `json:"entries"`
	From    *Link `json:"from,omitempty"` // the first link of audit-chain.jsonl
	Head    *Link `json:"head,omitempty"` // the exported head: its last link
	// Altered lists entries that cleaning changed (a secret or a path in
	// them): their stored hash no longer covers their bytes here.
	Altered []int64 `json:"altered,omitempty"`
}

// Write writes the bundle of in to w and returns its manifest.
func Write(w io.Writer, in Input) (Manifest, error) {
	clean := in.Clean
	if clean == nil {
		clean = func(b []byte) []byte { return b }
	}
	m := Manifest{Format: Format, Version: Version, ExportedAt: in.ExportedAt, Producer: in.Producer, Proves: Proves}
	run, err := cleanJSON(clean, in.Run)
	if err != nil {
		return m, err
	}
	m.Run = run
	z := zip.NewWriter(w)
	// Deflate's fastest level: an export is read once, and at the default
	// level compression took as long as everything else.
	z.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestSpeed)
	})
	add := func(name string, data []byte) error {
		f, err := z.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: zeroTime})
		if err != nil {
			return fmt.Errorf("bundle: add %s: %w", name, err)
		}
		if _, err := f.Write(data); err != nil {
			return fmt.Errorf("bundle: write %s: %w", name, err)
		}
		sum := sha256.Sum256(data)
		m.Files = append(m.Files, FileEntry{Name: name, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))})
		return nil
	}

	events, cleaned, proof, err := eventLines(clean, in.Events)
	if err != nil {
		return m, err
	}
	m.Events = proof
	if err := add(EventsFile, events); err != nil {
		return m, err
	}
	patches, err := patchDiffs(in.Events)
	if err != nil {
		return m, err
	}
	for _, p := range patches {
		if err := add(PatchesDir+p.name, clean(p.diff)); err != nil {
			return m, err
		}
	}
	if _, err := z.CreateHeader(&zip.FileHeader{Name: ArtifactsDir, Modified: zeroTime}); err != nil {
		return m, fmt.Errorf("bundle: add %s: %w", ArtifactsDir, err)
	}
	for _, a := range in.Artifacts {
		if a.Name == "" || strings.ContainsAny(a.Name, "/\\") || a.Name == "." || a.Name == ".." {
			return m, fmt.Errorf("bundle: artifact name %q is not a plain file name", a.Name)
		}
		if err := add(ArtifactsDir+a.Name, a.Data); err != nil {
			return m, err
		}
	}
	audit, altered, err := auditLines(clean, in.Audit)
	if err != nil {
		return m, err
	}
	if err := add(AuditFile, audit); err != nil {
		return m, err
	}
	var chain bytes.Buffer
	enc := json.NewEncoder(&chain)
	for _, l := range in.Chain {
		if err := enc.Encode(l); err != nil {
			return m, fmt.Errorf("bundle: encode chain link %d: %w", l.Seq, err)
		}
	}
	if err := add(ChainFile, chain.Bytes()); err != nil {
		return m, err
	}
	m.Audit = AuditProof{Entries: len(in.Audit), Altered: altered}
	if n := len(in.Chain); n > 0 {
		from, head := in.Chain[0], in.Chain[n-1]
		m.Audit.From, m.Audit.Head = &from, &head
	}
	md, html, err := transcripts(m.Run, cleaned) // from cleaned events and run: nothing left to clean
	if err != nil {
		return m, err
	}
	if err := add(TranscriptMD, md); err != nil {
		return m, err
	}
	if err := add(TranscriptHTML, html); err != nil {
		return m, err
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, fmt.Errorf("bundle: encode manifest: %w", err)
	}
	f, err := z.CreateHeader(&zip.FileHeader{Name: ManifestFile, Method: zip.Deflate, Modified: zeroTime})
	if err == nil {
		_, err = f.Write(append(raw, '\n'))
	}
	if err != nil {
		return m, fmt.Errorf("bundle: write manifest: %w", err)
	}
	if err := z.Close(); err != nil {
		return m, fmt.Errorf("bundle: finish: %w", err)
	}
	return m, nil
}

// cleanJSON passes v's JSON through clean and decodes it back.
func cleanJSON[T any](clean func([]byte) []byte, v T) (T, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return v, fmt.Errorf("bundle: encode: %w", err)
	}
	var out T
	if err := json.Unmarshal(clean(raw), &out); err != nil {
		return v, fmt.Errorf("bundle: cleaning broke the JSON: %w", err)
	}
	return out, nil
}

// eventLines encodes the events as JSON lines, their payloads cleaned (the
// envelope's other fields are ids, types and times), and their digest
// chain; it returns the cleaned events too, which the transcripts render.
// Cleaning (the secret redactor's rules) is most of an export's time, so the
// events are cleaned and encoded in chunks on every CPU.
func eventLines(clean func([]byte) []byte, evs []backend.Event) ([]byte, []backend.Event, EventsProof, error) {
	cleaned := make([]backend.Event, len(evs))
	lines := make([][]byte, len(evs))
	const chunk = 512
	var wg sync.WaitGroup
	errs := make([]error, (len(evs)+chunk-1)/chunk)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for c := 0; c*chunk < len(evs); c++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(c int) {
			defer func() { <-sem; wg.Done() }()
			for i := c * chunk; i < min((c+1)*chunk, len(evs)); i++ {
				ev := evs[i]
				ev.Payload = clean(ev.Payload)
				line, err := json.Marshal(ev)
				if err != nil {
					errs[c] = fmt.Errorf("bundle: encode event #%d: %w", ev.Sequence, err)
					return
				}
				cleaned[i], lines[i] = ev, line
			}
		}(c)
	}
	wg.Wait()
	var p EventsProof
	if err := errors.Join(errs...); err != nil {
		return nil, nil, p, err
	}
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	out := make([]byte, 0, size)
	digest := make([]byte, 0, 2*sha256.Size)
	h := sha256.New()
	var sum [sha256.Size]byte
	for i, line := range lines {
		h.Reset()
		h.Write(digest)
		h.Write(line)
		digest = hex.AppendEncode(digest[:0], h.Sum(sum[:0]))
		out = append(append(out, line...), '\n')
		p.Count++
		p.LastSeq = evs[i].Sequence
	}
	p.Digest = string(digest)
	return out, cleaned, p, nil
}

func auditLines(clean func([]byte) []byte, entries []backend.AuditEntry) ([]byte, []int64, error) {
	var out bytes.Buffer
	var altered []int64
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return nil, nil, fmt.Errorf("bundle: encode audit entry %d: %w", e.Seq, err)
		}
		c := clean(line)
		if !bytes.Equal(c, line) {
			altered = append(altered, e.Seq)
		}
		out.Write(c)
		out.WriteByte('\n')
	}
	return out.Bytes(), altered, nil
}

type patchFile struct {
	name string
	diff []byte
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// patchDiffs collects the unified diff of every proposed patch (the preview
// of its approval request), named by the event's sequence and the path.
func patchDiffs(evs []backend.Event) ([]patchFile, error) {
	var out []patchFile
	for _, ev := range evs {
		if ev.Type != backend.EvApprovalRequested || !bytes.Contains(ev.Payload, []byte(`"unified"`)) {
			continue
		}
		var p struct {
			Preview struct {
				Path    string `json:"path"`
				Unified string `json:"unified"`
			} `json:"preview"`
		}
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			return nil, fmt.Errorf("bundle: read the patch of event #%d: %w", ev.Sequence, err)
		}
		if p.Preview.Unified == "" {
			continue
		}
		slug := strings.Trim(unsafeName.ReplaceAllString(p.Preview.Path, "_"), "_.")
		if len(slug) > 80 {
			slug = slug[:80]
		}
		out = append(out, patchFile{name: fmt.Sprintf("%06d-%s.diff", ev.Sequence, slug), diff: []byte(p.Preview.Unified)})
	}
	return out, nil
}

// readLines calls fn for each line of data.
func readLines(data []byte, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(n, sc.Bytes()); err != nil {
			return err
		}
	}
	return sc.Err()
}
