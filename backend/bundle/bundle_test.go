package bundle

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"agenthub/backend"
)

// fixture is a run of n events with audit entries 3 and 5 of a chain of 6,
// the others belonging to another run.
func fixture(n int) Input {
	run := RunInfo{ID: "run_1", Task: "tidy <the> \"docs\"", State: backend.RunCompleted, Profile: "demo",
		Workspace: "proj", CreatedAt: "2026-11-25T06:00:00.000Z"}
	evs := []backend.Event{}
	add := func(typ backend.EventType, p string) {
		evs = append(evs, backend.Event{SchemaVersion: 1, ID: fmt.Sprintf("evt_%d", len(evs)+1),
			Sequence: int64(len(evs) + 1), Type: typ, RunID: "run_1", SessionID: "ses_1", AgentID: "a",
			Timestamp: "2026-11-25T06:00:00.000Z", Payload: json.RawMessage(p)})
	}
	add(backend.EvRunCreated, `{"task":"tidy <the> \"docs\""}`)
	add(backend.EvApprovalRequested, `{"kind":"patch","risk":"low","title":"Write README.md","preview":{"path":"README.md","unified":"--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-old\n+new\n"}}`)
	add(backend.EvApprovalResolved, `{"decision":"approve_once","reason":"looks right"}`)
	for len(evs) < n-1 {
		add(backend.EvMessageCompleted, `{"text":"step <script>alert(1)</script>"}`)
	}
	add(backend.EvRunCompleted, `{"doneReason":"done"}`)
	var chain []Link
	prev := backend.GenesisHash
	var audit []backend.AuditEntry
	for seq := int64(1); seq <= 6; seq++ {
		e := backend.AuditEntry{Seq: seq, At: "2026-11-25T06:00:00.000Z", Actor: "me", Surface: "cli",
			Kind: "x", RunID: "run_other", Data: map[string]any{"n": float64(seq)}, PrevHash: prev}
		if seq == 3 || seq == 5 {
			e.RunID = "run_1"
		}
		e.Hash = plainHash(e)
		prev = e.Hash
		if seq >= 3 {
			chain = append(chain, Link{Seq: seq, PrevHash: e.PrevHash, Hash: e.Hash})
		}
		if e.RunID == "run_1" {
			audit = append(audit, e)
		}
	}
	return Input{Run: run, Events: evs, Audit: audit, Chain: chain, ExportedAt: "2026-11-25T07:00:00.000Z",
		Producer: "agenthub test"}
}

func write(t *testing.T, in Input) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func verify(t *testing.T, data []byte) Report {
	t.Helper()
	b, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return Verify(b)
}

// rezip copies a bundle, letting edit change (or drop, returning nil) each
// file and add more.
func rezip(t *testing.T, data []byte, edit func(name string, b []byte) []byte, extra map[string]string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if b = edit(f.Name, b); b == nil {
			continue
		}
		w, _ := zw.Create(f.Name)
		w.Write(b)
	}
	for name, body := range extra {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	zw.Close()
	return out.Bytes()
}

func TestVerifyAcceptsWhatWriteWrote(t *testing.T) {
	r := verify(t, write(t, fixture(10)))
	if !r.OK || len(r.Problems) != 0 {
		t.Fatalf("a fresh bundle does not verify: %+v", r)
	}
	want := []string{"files match", "10 events, #1 to #10", "2 audit entries of the run in one unbroken chain of 4 links ending at head 6:", "(2 with a plain hash, recomputed)"}
	all := strings.Join(r.Checked, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("verify does not say %q:\n%s", w, all)
		}
	}
}

// TestVerifyCatchesTampering: each edit of a bundle after export is named.
func TestVerifyCatchesTampering(t *testing.T) {
	good := write(t, fixture(10))
	b, _ := Open(bytes.NewReader(good), int64(len(good)))
	m := b.Manifest
	// fixManifest rewrites the manifest's hash of a changed file, as an
	// attacker who read this package would.
	fixManifest := func(changed map[string][]byte, mutate func(*Manifest)) func(string, []byte) []byte {
		return func(name string, data []byte) []byte {
			if c, ok := changed[name]; ok {
				return c
			}
			if name != ManifestFile {
				return data
			}
			mm := m
			mm.Files = append([]FileEntry(nil), m.Files...)
			for i, f := range mm.Files {
				if c, ok := changed[f.Name]; ok {
					mm.Files[i] = fileEntry(f.Name, c)
				}
			}
			if mutate != nil {
				mutate(&mm)
			}
			raw, _ := json.Marshal(mm)
			return raw
		}
	}
	events := b.Files[EventsFile]
	lines := bytes.SplitAfter(events, []byte("\n"))
	dropped := bytes.Join(append(append([][]byte{}, lines[:4]...), lines[5:]...), nil)
	edited := bytes.Replace(events, []byte("looks right"), []byte("looks wrong"), 1)
	audit := bytes.Replace(b.Files[AuditFile], []byte(`"hash":"`), []byte(`"hash":"0`), 1)
	chain := b.Files[ChainFile]
	chainLines := bytes.SplitAfter(chain, []byte("\n"))
	holed := bytes.Join(append(append([][]byte{}, chainLines[:1]...), chainLines[2:]...), nil)
	cases := []struct {
		name  string
		edit  func(string, []byte) []byte
		extra map[string]string
		want  string
	}{
		{"an event edited, manifest left", func(n string, d []byte) []byte {
			if n == EventsFile {
				return edited
			}
			return d
		}, nil, "events.jsonl does not match its manifest hash"},
		{"an event edited, file hash fixed", fixManifest(map[string][]byte{EventsFile: edited}, nil), nil,
			"the digest chain ends at"},
		{"an event dropped, hash and count fixed", fixManifest(map[string][]byte{EventsFile: dropped},
			func(mm *Manifest) { mm.Events.Count-- }), nil, "has sequence 6, want 5"},
		{"a file removed", func(n string, d []byte) []byte {
			if n == TranscriptHTML {
				return nil
			}
			return d
		}, nil, "transcript.html is listed in the manifest but missing"},
		{"a file added", func(_ string, d []byte) []byte { return d }, map[string]string{"patches/extra.diff": "x"},
			"patches/extra.diff is not in the manifest"},
		// An audit entry's data edited with its file hash fixed is not
		// caught here: its keyed hash is recomputed only where the key is
		// (agenthub audit verify on the machine of origin); see doc.go.
		{"an audit entry's hash edited, file hash fixed", fixManifest(map[string][]byte{AuditFile: audit}, nil), nil,
			"is not the chain's entry 3"},
		{"a chain link removed, hash fixed", fixManifest(map[string][]byte{ChainFile: holed}, nil), nil,
			"the chain has a hole"},
		{"the head moved", fixManifest(nil, func(mm *Manifest) { h := *mm.Audit.Head; h.Hash = "00"; mm.Audit.Head = &h }),
			nil, "does not run from the manifest's first entry to its head"},
	}
	for _, tc := range cases {
		r := verify(t, rezip(t, good, tc.edit, tc.extra))
		if r.OK {
			t.Errorf("%s: verify says OK", tc.name)
			continue
		}
		if tc.want != "" && !strings.Contains(strings.Join(r.Problems, "\n"), tc.want) {
			t.Errorf("%s: problems %q do not say %q", tc.name, r.Problems, tc.want)
		}
	}
}

func fileEntry(name string, data []byte) FileEntry {
	sum := sha256.Sum256(data)
	return FileEntry{Name: name, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}
}
