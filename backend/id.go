package backend

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewID returns prefix + "_" + a time-ordered UUIDv7 in hex (32 chars, no dashes).
// Order of events comes from their sequence, never from ids; time order only
// keeps SQLite's B-tree appends cheap.
func NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	ms := uint64(time.Now().UnixMilli())
	b[0], b[1], b[2] = byte(ms>>40), byte(ms>>32), byte(ms>>24)
	b[3], b[4], b[5] = byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = (b[6] & 0x0f) | 0x70 // version 7
	b[8] = (b[8] & 0x3f) | 0x80 // RFC 4122 variant
	return prefix + "_" + hex.EncodeToString(b[:])
}

// ID prefixes, one per kind of record.
const (
	PrefixRun        = "run"
	PrefixSession    = "ses"
	PrefixEvent      = "evt"
	PrefixWorkspace  = "ws"
	PrefixApproval   = "apr"
	PrefixDecision   = "dec"
	PrefixGrant      = "grt"
	PrefixPatch      = "pat"
	PrefixCall       = "call"
	PrefixMessage    = "msg"
	PrefixCheckpoint = "ckp"
	PrefixArtifact   = "art"
)
