package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"agenthub/backend"
	"agenthub/backend/canon"
)

// AuditHash computes an entry's chain hash (AU2): hex(SHA-256(PrevHash as hex
// text || canonical JSON of the entry with Hash empty)).
func AuditHash(e backend.AuditEntry) (string, error) {
	e.Hash = ""
	body, err := canon.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("audit hash: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(e.PrevHash))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// AppendAudit appends e to the chain in its own transaction and returns it
// with Seq, At, PrevHash and Hash assigned.
func (s *Store) AppendAudit(ctx context.Context, e backend.AuditEntry) (backend.AuditEntry, error) {
	var out backend.AuditEntry
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = appendAudit(ctx, tx, s.red.audit(e))
		return err
	})
	return out, err
}

// AppendAuditTx appends e inside tx, so the entry commits with the change it
// records (AU1). Seq stays contiguous because every write goes through the
// single writer connection.
func AppendAuditTx(ctx context.Context, tx *sql.Tx, e backend.AuditEntry) (backend.AuditEntry, error) {
	return appendAudit(ctx, tx, e)
}

func appendAudit(ctx context.Context, tx *sql.Tx, e backend.AuditEntry) (backend.AuditEntry, error) {
	var prevSeq int64
	prev := backend.GenesisHash
	err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`).Scan(&prevSeq, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("append audit: read head: %w", err)
	}
	if e.Data == nil {
		e.Data = map[string]any{}
	}
	// Round-trip Data through JSON so the hash is computed over exactly what
	// is stored and read back (numbers, nested types).
	data, err := json.Marshal(e.Data)
	if err != nil {
		return e, fmt.Errorf("append audit: encode data: %w", err)
	}
	e.Data = nil
	if err := json.Unmarshal(data, &e.Data); err != nil {
		return e, fmt.Errorf("append audit: decode data: %w", err)
	}
	e.Seq, e.PrevHash = prevSeq+1, prev
	if e.At == "" {
		e.At = now()
	}
	if e.Hash, err = AuditHash(e); err != nil {
		return e, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO audit (seq, at, actor, surface, kind, run_id, tool_call_id,
		subject_hash, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.Seq, e.At, e.Actor, string(e.Surface), e.Kind, e.RunID, e.ToolCallID, e.SubjectHash, string(data),
		e.PrevHash, e.Hash)
	if err != nil {
		return e, fmt.Errorf("append audit %s: %w", e.Kind, err)
	}
	return e, nil
}

// AuditEntries returns up to limit entries with seq > afterSeq, in order.
// limit <= 0 means no limit.
func (s *Store) AuditEntries(ctx context.Context, afterSeq int64, limit int) ([]backend.AuditEntry, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx, `SELECT seq, at, actor, surface, kind, run_id, tool_call_id,
		subject_hash, data, prev_hash, hash FROM audit WHERE seq > ? ORDER BY seq LIMIT ?`, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	defer rows.Close()
	var out []backend.AuditEntry
	for rows.Next() {
		var e backend.AuditEntry
		var data string
		if err := rows.Scan(&e.Seq, &e.At, &e.Actor, &e.Surface, &e.Kind, &e.RunID, &e.ToolCallID,
			&e.SubjectHash, &data, &e.PrevHash, &e.Hash); err != nil {
			return nil, fmt.Errorf("list audit: %w", err)
		}
		if err := json.Unmarshal([]byte(data), &e.Data); err != nil {
			return nil, fmt.Errorf("list audit: entry %d data: %w", e.Seq, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return out, nil
}

// VerifyAudit recomputes the chain (AU3). It returns brokenSeq = 0 when the
// chain is intact, otherwise the first seq whose link or hash is wrong, and the
// head hash either way.
func (s *Store) VerifyAudit(ctx context.Context) (brokenSeq int64, head string, err error) {
	head = backend.GenesisHash
	var after int64
	for {
		page, err := s.AuditEntries(ctx, after, 1000)
		if err != nil {
			return 0, "", err
		}
		if len(page) == 0 {
			return 0, head, nil
		}
		for _, e := range page {
			want, err := AuditHash(e)
			if err != nil {
				return 0, "", err
			}
			if e.Seq != after+1 || e.PrevHash != head || e.Hash != want {
				return e.Seq, head, nil
			}
			head, after = e.Hash, e.Seq
		}
	}
}
