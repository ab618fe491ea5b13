package approval

import (
	"crypto/sha256"
	"encoding/hex"

	"agenthub/backend"
	"agenthub/backend/canon"
)

// HashEntry is the audit chain hash of e (AU2):
// hex(SHA-256(prevHash || canonical JSON of e with Hash = "")). The store
// computes hashes with exactly this function. It returns "" only when e's
// Data cannot be encoded as JSON, which never verifies. A nil Data hashes as
// {} so that a store round trip (NULL or {} alike) keeps the hash.
func HashEntry(prevHash string, e backend.AuditEntry) string {
	e.Hash = ""
	if e.Data == nil {
		e.Data = map[string]any{}
	}
	body, err := canon.Marshal(e)
	if err != nil {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(prevHash))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// VerifyChain checks entries in order: seq contiguous from 1, each PrevHash
// equal to the previous Hash (GenesisHash first) and each Hash recomputed.
// It returns the seq of the first broken entry (for a gap, the missing seq).
// Truncation of the newest entries is caught by comparing [ChainHead] with a
// head recorded elsewhere, such as an export.
func VerifyChain(entries []backend.AuditEntry) (ok bool, brokenSeq int64) {
	prev := backend.GenesisHash
	for i, e := range entries {
		want := int64(i + 1)
		if e.Seq != want {
			return false, want
		}
		if e.PrevHash != prev || e.Hash == "" || HashEntry(prev, e) != e.Hash {
			return false, e.Seq
		}
		prev = e.Hash
	}
	return true, 0
}

// ChainHead is the hash of the newest entry, or GenesisHash for none.
func ChainHead(entries []backend.AuditEntry) string {
	if len(entries) == 0 {
		return backend.GenesisHash
	}
	return entries[len(entries)-1].Hash
}
