package approval

import (
	"encoding/json"
	"fmt"
	"testing"

	"agenthub/backend"
)

func chain(n int) []backend.AuditEntry {
	prev := backend.GenesisHash
	out := make([]backend.AuditEntry, 0, n)
	for i := 1; i <= n; i++ {
		e := backend.AuditEntry{
			Seq: int64(i), At: fmt.Sprintf("2025-01-01T00:00:%02dZ", i), Actor: "alice", Surface: backend.SurfaceCLI,
			Kind: "approval.decided", RunID: "run-1", ToolCallID: fmt.Sprintf("c%d", i),
			SubjectHash: "sha256:ab", Data: map[string]any{"n": i, "decision": "approve_once", "ok": true},
			PrevHash: prev,
		}
		e.Hash = HashEntry(prev, e)
		prev = e.Hash
		out = append(out, e)
	}
	return out
}

func TestVerifyChain(t *testing.T) {
	tests := []struct {
		name   string
		tamper func([]backend.AuditEntry) []backend.AuditEntry
		ok     bool
		broken int64
	}{
		{"intact", func(e []backend.AuditEntry) []backend.AuditEntry { return e }, true, 0},
		{"empty", func([]backend.AuditEntry) []backend.AuditEntry { return nil }, true, 0},
		{"data edited", func(e []backend.AuditEntry) []backend.AuditEntry { e[2].Data["decision"] = "reject"; return e }, false, 3},
		{"actor edited", func(e []backend.AuditEntry) []backend.AuditEntry { e[0].Actor = "mallory"; return e }, false, 1},
		{"hash edited", func(e []backend.AuditEntry) []backend.AuditEntry { e[3].Hash = e[2].Hash; return e }, false, 4},
		{"prev edited", func(e []backend.AuditEntry) []backend.AuditEntry { e[1].PrevHash = backend.GenesisHash; return e }, false, 2},
		{"rehashed but unlinked", func(e []backend.AuditEntry) []backend.AuditEntry {
			e[1].Kind = "forged"
			e[1].Hash = HashEntry(e[1].PrevHash, e[1])
			return e
		}, false, 3},
		{"row deleted", func(e []backend.AuditEntry) []backend.AuditEntry { return append(e[:2], e[3:]...) }, false, 3},
		{"rows swapped", func(e []backend.AuditEntry) []backend.AuditEntry { e[1], e[2] = e[2], e[1]; return e }, false, 2},
		{"seq not from 1", func(e []backend.AuditEntry) []backend.AuditEntry { return e[1:] }, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, broken := VerifyChain(tt.tamper(chain(5)))
			if ok != tt.ok || broken != tt.broken {
				t.Errorf("VerifyChain = %v, %d; want %v, %d", ok, broken, tt.ok, tt.broken)
			}
		})
	}
}

// TestHashSurvivesJSONRoundTrip: the store keeps Data as JSON text, so ints
// come back as float64 and nil Data as {}; the hash must not change.
func TestHashSurvivesJSONRoundTrip(t *testing.T) {
	entries := chain(3)
	entries[0].Data = nil
	entries[0].Hash = HashEntry(backend.GenesisHash, entries[0])
	entries[1].PrevHash = entries[0].Hash
	entries[1].Hash = HashEntry(entries[1].PrevHash, entries[1])
	entries[2].PrevHash = entries[1].Hash
	entries[2].Hash = HashEntry(entries[2].PrevHash, entries[2])
	raw, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	raw = []byte(string(raw)) // as read back from a file
	var back []backend.AuditEntry
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	back[0].Data = map[string]any{}
	if ok, broken := VerifyChain(back); !ok {
		t.Errorf("round trip broke the chain at %d", broken)
	}
	if ChainHead(back) != entries[2].Hash || ChainHead(nil) != backend.GenesisHash {
		t.Errorf("ChainHead wrong")
	}
}

func TestHashEntryDefinition(t *testing.T) {
	e := backend.AuditEntry{Seq: 1, At: "t", Actor: "a", Surface: "cli", Kind: "k", Data: map[string]any{}, PrevHash: backend.GenesisHash, Hash: "ignored"}
	// hex(SHA-256("000…0" || `{"actor":"a","at":"t","data":{},"hash":"","kind":"k","prevHash":"000…0","seq":1,"surface":"cli"}`))
	const want = "f03a1853a02fa29fefcf0de1bf30674ed7025459cb0166a13f6a9a8da32925aa" // from sha256sum
	if got := HashEntry(backend.GenesisHash, e); got != want {
		t.Errorf("HashEntry = %s, want %s", got, want)
	}
}
