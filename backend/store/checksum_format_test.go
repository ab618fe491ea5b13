package store

import (
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"agenthub/backend"
)

// sumReference is the checksum's definition, field by field: CRC-32C over
// each string as a uvarint length and its bytes, each number as a varint, in
// this order. Stored rows carry sums of this stream, so eventSum may compute
// it any way it likes but must never change it.
func sumReference(ev *backend.Event) int64 {
	var b []byte
	str := func(s string) { b = append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	str(ev.RunID)
	b = binary.AppendVarint(b, ev.Sequence)
	str(ev.ID)
	str(string(ev.Type))
	str(ev.SessionID)
	str(ev.AgentID)
	str(ev.Timestamp)
	b = binary.AppendVarint(b, int64(ev.SchemaVersion))
	b = append(binary.AppendUvarint(b, uint64(len(ev.Payload))), ev.Payload...)
	return int64(crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

func TestEventSumKeepsItsFormat(t *testing.T) {
	long := strings.Repeat("x", 5000) // longer than any buffer a fast path may use
	for _, ev := range []backend.Event{
		{},
		{RunID: "r1", Sequence: 1, ID: "0193a0c1-7d2e-7000-8000-000000000001", Type: backend.EvMessageDelta,
			SessionID: "s1", AgentID: "a1", Timestamp: "2026-11-25T10:00:00.000Z", SchemaVersion: 1,
			Payload: []byte(`{"text":"hello"}`)},
		{RunID: long, Sequence: -5, ID: long, Type: "t", SessionID: long, AgentID: "", Timestamp: long,
			SchemaVersion: 1 << 40, Payload: []byte(long)},
		{RunID: "r", Sequence: 1 << 62, ID: "é", Type: "x", Timestamp: "t", Payload: []byte{}},
	} {
		if got, want := eventSum(&ev), sumReference(&ev); got != want {
			t.Errorf("eventSum = %d, the format's sum %d (run id of %d bytes)", got, want, len(ev.RunID))
		}
		if got, want := eventSumByField(&ev), sumReference(&ev); got != want {
			t.Errorf("eventSumByField = %d, the format's sum %d (run id of %d bytes)", got, want, len(ev.RunID))
		}
	}
}

// BenchmarkEventSum: the committer computes it for every event written and
// every read checks it (a replay of 100,000 events, 100,000 sums).
func BenchmarkEventSum(b *testing.B) {
	ev := backend.Event{RunID: "0193a0c1-7d2e-7000-8000-00000000aaaa", Sequence: 12345,
		ID: "0193a0c1-7d2e-7000-8000-000000000001", Type: backend.EvMessageDelta,
		SessionID: "0193a0c1-7d2e-7000-8000-00000000bbbb", AgentID: "0193a0c1-7d2e-7000-8000-00000000cccc",
		Timestamp: "2026-11-25T10:00:00.000Z", SchemaVersion: 1, Payload: []byte(strings.Repeat("p", 300))}
	for _, f := range []struct {
		name string
		sum  func(*backend.Event) int64
	}{{"one-buffer", eventSum}, {"field-by-field", eventSumByField}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				f.sum(&ev)
			}
		})
	}
}
