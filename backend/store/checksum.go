package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"
	"unsafe"

	"agenthub/backend"
)

// Event checksums (migration 00004): CRC-32C over every column an event is
// served from, each prefixed with its length so that no two events share an
// encoding. CRC-32C runs in hardware on amd64 and arm64, cheap enough for the
// committer's path (measured in docs/PERFORMANCE.md); it detects damage (a
// flipped bit, a torn or edited row), not a forger, which the audit chain's
// key is for.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func eventSum(ev *backend.Event) int64 {
	// The columns before the payload (about 180 bytes for an event of
	// UUIDs) are laid out in one stack buffer and summed in one call: one
	// crc32.Update per field, 16 of them, cost more than the bytes
	// (BenchmarkEventSum). The stream is the same as field by field
	// (TestEventSumKeepsItsFormat); a head too long for the buffer is
	// summed field by field. crc32.Update keeps its argument out of the
	// stack (an indirect call), so the buffer comes from a pool.
	hp := sumHeads.Get().(*[384]byte)
	defer sumHeads.Put(hp)
	head := hp[:]
	n := 0
	fits := len(ev.RunID)+len(ev.ID)+len(ev.Type)+len(ev.SessionID)+len(ev.AgentID)+len(ev.Timestamp) <=
		len(head)-8*binary.MaxVarintLen64
	if !fits {
		return eventSumByField(ev)
	}
	str := func(s string) {
		n += binary.PutUvarint(head[n:], uint64(len(s)))
		n += copy(head[n:], s)
	}
	str(ev.RunID)
	n += binary.PutVarint(head[n:], ev.Sequence)
	str(ev.ID)
	str(string(ev.Type))
	str(ev.SessionID)
	str(ev.AgentID)
	str(ev.Timestamp)
	n += binary.PutVarint(head[n:], int64(ev.SchemaVersion))
	n += binary.PutUvarint(head[n:], uint64(len(ev.Payload)))
	c := crc32.Update(0, castagnoli, head[:n])
	return int64(crc32.Update(c, castagnoli, ev.Payload))
}

var sumHeads = sync.Pool{New: func() any { return new([384]byte) }}

// eventSumByField is eventSum for heads longer than its buffer.
func eventSumByField(ev *backend.Event) int64 {
	var buf [binary.MaxVarintLen64]byte
	c := uint32(0)
	str := func(s string) {
		c = crc32.Update(c, castagnoli, buf[:binary.PutUvarint(buf[:], uint64(len(s)))])
		// The string's bytes, read in place: []byte(s) copied every column
		// of every event (two thirds of checking a replayed event's sum).
		// crc32.Update only reads them and keeps nothing.
		c = crc32.Update(c, castagnoli, unsafe.Slice(unsafe.StringData(s), len(s)))
	}
	num := func(n int64) {
		c = crc32.Update(c, castagnoli, buf[:binary.PutVarint(buf[:], n)])
	}
	str(ev.RunID)
	num(ev.Sequence)
	str(ev.ID)
	str(string(ev.Type))
	str(ev.SessionID)
	str(ev.AgentID)
	str(ev.Timestamp)
	num(int64(ev.SchemaVersion))
	c = crc32.Update(c, castagnoli, buf[:binary.PutUvarint(buf[:], uint64(len(ev.Payload)))])
	c = crc32.Update(c, castagnoli, ev.Payload)
	return int64(c)
}

// checkSum returns a store_corrupt error when sum (the stored checksum, nil
// for a row from before checksums) does not match ev.
func checkSum(ev *backend.Event, sum any) error {
	switch x := sum.(type) {
	case nil:
		return nil
	case int64:
		if x == eventSum(ev) {
			return nil
		}
	}
	return corruptEvent(ev.RunID, ev.Sequence)
}

func corruptEvent(runID string, seq int64) error {
	return &backend.Error{Code: backend.CodeStoreCorrupt,
		Err:     fmt.Errorf("event %s #%d: checksum mismatch", runID, seq),
		Message: fmt.Sprintf("event #%d of run %s is damaged (its checksum does not match), so it is not shown", seq, runID),
		Next: "Run `agenthub doctor --integrity`; restore agenthub.db from the newest backup in the data directory " +
			"(agenthub.db.v*.bak) if it reports damage."}
}
