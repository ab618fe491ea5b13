package store

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"agenthub/backend"
	"agenthub/backend/canon"
)

func TestAuditChain(t *testing.T) {
	s, path := openTest(t)
	ctx := t.Context()
	var entries []backend.AuditEntry
	for i, kind := range []string{"run.created", "approval.requested", "approval.resolved"} {
		e, err := s.AppendAudit(ctx, backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine,
			Kind: kind, RunID: "run_1", Data: map[string]any{"n": i, "nested": map[string]any{"b": 1.5, "a": "x"}}})
		if err != nil {
			t.Fatal(err)
		}
		if e.Seq != int64(i+1) {
			t.Errorf("seq = %d, want %d", e.Seq, i+1)
		}
		entries = append(entries, e)
	}
	if entries[0].PrevHash != backend.GenesisHash {
		t.Errorf("genesis prevHash = %q", entries[0].PrevHash)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i].PrevHash != entries[i-1].Hash {
			t.Errorf("entry %d not linked to %d", i+1, i)
		}
	}
	// The hash is defined independently of the store's code: HMAC-SHA256
	// with the key in the file beside the database, over prev hex text ||
	// JCS(entry without hash).
	e := entries[1]
	body := e
	body.Hash = ""
	cj, err := canon.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, readKey(t, path))
	mac.Write(append([]byte(e.PrevHash), cj...))
	if hex.EncodeToString(mac.Sum(nil)) != e.Hash {
		t.Errorf("hash mismatch with the keyed AU2 definition")
	}
	got, err := s.AuditEntries(ctx, 1, 1)
	if err != nil || len(got) != 1 || got[0].Seq != 2 || got[0].Hash != e.Hash {
		t.Fatalf("AuditEntries(1,1) = %+v, %v", got, err)
	}
	if broken, head, err := s.VerifyAudit(ctx); err != nil || broken != 0 || head != entries[2].Hash {
		t.Fatalf("verify intact chain: broken=%d head=%s err=%v", broken, head, err)
	}
	// Editing one row breaks the chain at that row (scenario 40).
	if _, err := s.w.ExecContext(ctx, `UPDATE audit SET data = '{"n":9}' WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	if broken, _, err := s.VerifyAudit(ctx); err != nil || broken != 2 {
		t.Errorf("verify tampered chain: broken=%d err=%v, want 2", broken, err)
	}
}
