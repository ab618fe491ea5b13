package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"agenthub/backend"
	"agenthub/backend/canon"
)

// The audit chain (AU2) is keyed: an entry's hash is
// hex(HMAC-SHA256(key, PrevHash as hex text || canonical JSON of the entry
// with Hash empty)), with the key kept outside the database (auditkey.go),
// and anchored: its head is also written outside the database after every
// append (anchor.go). Entries written before the key existed keep the
// unkeyed SHA-256 of [AuditHash] up to the anchor's KeyedFrom, and the first
// keyed entry links to them, so they cannot be rewritten either.

// Audit entry kinds the store writes itself.
const (
	// AuditKeyed marks where a chain written before the key became keyed.
	AuditKeyed = "audit.keyed"
	// AuditDiscrepancy records, at start, that the database and the anchor
	// disagreed (entries lost or rewritten); verify reports it for good.
	AuditDiscrepancy = "audit.discrepancy"
)

// keyedFromSetting records KeyedFrom in the database too, so that a missing
// anchor is told apart from a database that never had one.
const keyedFromSetting = "audit.keyed_from"

// AuditHash computes an entry's unkeyed chain hash, the scheme of the
// entries before the key: hex(SHA-256(PrevHash as hex text || canonical JSON
// of the entry with Hash empty)).
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

// auditMAC computes an entry's keyed chain hash.
func auditMAC(key []byte, e backend.AuditEntry) (string, error) {
	e.Hash = ""
	body, err := canon.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("audit hash: %w", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(e.PrevHash))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil)), nil
}

// auditState is the chain's key and where keyed entries start; set once
// by Open.
type auditState struct {
	key       []byte
	keyAt     string // keyInFile or keyInKeychain
	keyedFrom int64
	// startProblem is what Open found wrong between the anchor and the
	// database (recorded as an AuditDiscrepancy entry), "" when nothing.
	startProblem string
}

// AuditStartProblem says what the last Open found wrong with the audit
// chain's anchor (entries lost or rewritten), "" when nothing.
func (s *Store) AuditStartProblem() string { return s.audit.startProblem }

// AppendAudit appends e to the chain in its own transaction and returns it
// with Seq, At, PrevHash and Hash assigned.
func (s *Store) AppendAudit(ctx context.Context, e backend.AuditEntry) (backend.AuditEntry, error) {
	var out backend.AuditEntry
	err := s.auditTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = s.appendAudit(ctx, tx, s.red.audit(e))
		return err
	})
	return out, err
}

// auditTx is [Store.tx] for a transaction that appends audit entries: once
// it has committed, the anchor moves to the new head.
func (s *Store) auditTx(ctx context.Context, fn func(*sql.Tx) error) error {
	if err := s.tx(ctx, fn); err != nil {
		return err
	}
	s.anchorHead(ctx)
	return nil
}

// anchorHead writes the committed head to the anchor. A failure is logged,
// not returned: the entries are committed, and an anchor left behind is
// what a crash leaves too; the next append or start moves it forward.
func (s *Store) anchorHead(ctx context.Context) {
	seq, hash, err := readHead(ctx, s.r)
	if err == nil {
		err = writeAnchor(s.path, s.audit.key, anchor{Seq: seq, Hash: hash, KeyedFrom: s.audit.keyedFrom,
			Key: s.audit.keyAt}, false)
	}
	if err != nil {
		slog.Error("audit anchor not updated; the next append retries", "err", err)
	}
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readHead returns the newest entry's seq and hash (0 and GenesisHash for
// an empty chain).
func readHead(ctx context.Context, q queryRower) (int64, string, error) {
	var seq int64
	head := backend.GenesisHash
	err := q.QueryRowContext(ctx, `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`).Scan(&seq, &head)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, "", fmt.Errorf("read the audit head: %w", err)
	}
	return seq, head, nil
}

func (s *Store) appendAudit(ctx context.Context, tx *sql.Tx, e backend.AuditEntry) (backend.AuditEntry, error) {
	prevSeq, prev, err := readHead(ctx, tx)
	if err != nil {
		return e, fmt.Errorf("append audit: %w", err)
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
	if e.Hash, err = auditMAC(s.audit.key, e); err != nil {
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
	rows, err := s.auditRows(ctx, afterSeq, limit)
	if err != nil {
		return nil, err
	}
	out := make([]backend.AuditEntry, 0, len(rows))
	for _, r := range rows {
		if r.bad != nil {
			return nil, &backend.Error{Code: backend.CodeStoreCorrupt, Err: r.bad,
				Message: fmt.Sprintf("audit entry %d is damaged: its data is not JSON", r.Seq),
				Next:    "Run `agenthub audit verify` and `agenthub doctor`; restore the database from a backup."}
		}
		out = append(out, r.AuditEntry)
	}
	return out, nil
}

// auditRow is a stored entry; bad is set when its data column is not JSON.
type auditRow struct {
	backend.AuditEntry
	bad error
}

func (s *Store) auditRows(ctx context.Context, afterSeq int64, limit int) ([]auditRow, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx, `SELECT seq, at, actor, surface, kind, run_id, tool_call_id,
		subject_hash, data, prev_hash, hash FROM audit WHERE seq > ? ORDER BY seq LIMIT ?`, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var r auditRow
		var data []byte
		if err := rows.Scan(&r.Seq, &r.At, &r.Actor, &r.Surface, &r.Kind, &r.RunID, &r.ToolCallID,
			&r.SubjectHash, &data, &r.PrevHash, &r.Hash); err != nil {
			return nil, fmt.Errorf("list audit: %w", err)
		}
		if err := json.Unmarshal(data, &r.Data); err != nil {
			r.bad = fmt.Errorf("audit entry %d data: %w", r.Seq, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return out, nil
}

// AuditReport is the outcome of checking the chain against its key, its
// anchor and, when given, an exported head.
type AuditReport struct {
	OK        bool     `json:"ok"`
	Entries   int64    `json:"entries"`             // in the database
	Head      string   `json:"head"`                // the newest entry's hash
	BrokenSeq int64    `json:"brokenSeq,omitempty"` // the first entry that is wrong or missing
	Problems  []string `json:"problems,omitempty"`  // what changed, in plain words
	AnchorSeq int64    `json:"anchorSeq"`           // the head the anchor records
	KeyedFrom int64    `json:"keyedFrom"`           // the first entry hashed with the key
}

func (r *AuditReport) fail(seq int64, format string, args ...any) {
	if r.BrokenSeq == 0 || (seq > 0 && seq < r.BrokenSeq) {
		r.BrokenSeq = seq
	}
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// VerifyAudit checks the chain (AU3). It returns brokenSeq = 0 when the
// chain is intact and matches its anchor, otherwise the first entry that is
// wrong or missing; see [Store.CheckAudit] for what changed.
func (s *Store) VerifyAudit(ctx context.Context) (brokenSeq int64, head string, err error) {
	r, err := s.CheckAudit(ctx, nil)
	if err != nil {
		return 0, "", err
	}
	return r.BrokenSeq, r.Head, nil
}

// ExportedHead is an entry's seq and hash kept elsewhere, as `agenthub
// audit export` prints it.
type ExportedHead struct {
	Seq  int64
	Hash string
}

// CheckAudit recomputes every entry (unkeyed before KeyedFrom, keyed from
// it), checks the anchor's head is still in the chain, reports every
// discrepancy recorded at a start, and, when head is given, checks that the
// chain still holds that entry.
func (s *Store) CheckAudit(ctx context.Context, head *ExportedHead) (AuditReport, error) {
	rep := AuditReport{Head: backend.GenesisHash, KeyedFrom: s.audit.keyedFrom}
	// The anchor first: the database only grows after it was read.
	a, aerr := readAnchor(s.path)
	anchorOK := aerr == nil && a.valid(s.audit.key)
	if anchorOK {
		rep.AnchorSeq, rep.KeyedFrom = a.Seq, a.KeyedFrom
	}
	var hashes []string // by seq-1, for the anchor and the exported head
	var after int64
	broken := false // a link or hash is wrong: later hashes are moot
	for !broken {
		page, err := s.auditRows(ctx, after, 1000)
		if err != nil {
			return rep, err
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			problems := len(rep.Problems)
			switch {
			case e.Seq != after+1:
				rep.fail(after+1, "entry %d is missing (the next one stored is %d)", after+1, e.Seq)
			case e.bad != nil:
				rep.fail(e.Seq, "entry %d was changed: its data is no longer JSON", e.Seq)
			case e.PrevHash != rep.Head:
				rep.fail(e.Seq, "entry %d does not link to entry %d: entries were removed, inserted or reordered",
					e.Seq, e.Seq-1)
			default:
				want, err := s.entryHash(e.AuditEntry, rep.KeyedFrom)
				if err != nil {
					return rep, err
				}
				if e.Hash != want {
					rep.fail(e.Seq, "entry %d was changed after it was written (its hash does not match)", e.Seq)
				}
			}
			if len(rep.Problems) > problems {
				broken = true
				break
			}
			if e.Kind == AuditDiscrepancy {
				problem, _ := e.Data["problem"].(string)
				rep.fail(e.Seq, "at a start on %s: %s (recorded as entry %d)", e.At, problem, e.Seq)
			}
			rep.Head, after = e.Hash, e.Seq
			hashes = append(hashes, e.Hash)
		}
	}
	if broken { // count the rest all the same
		n, h, err := readHead(ctx, s.r)
		if err != nil {
			return rep, err
		}
		after, rep.Head = n, h
	}
	rep.Entries = after
	switch {
	case errors.Is(aerr, errNoAnchor):
		rep.fail(max(after, 1), "the anchor file %s is missing, so removed entries could not be noticed",
			anchorFileName(s.path))
	case aerr != nil || !anchorOK:
		rep.fail(max(after, 1), "the anchor file %s was changed or damaged", anchorFileName(s.path))
	case a.Seq > after:
		rep.fail(after+1, "the anchor says %d entries, the database has %d: entries %d–%d were removed",
			a.Seq, after, after+1, a.Seq)
	case a.Seq > 0 && int(a.Seq) <= len(hashes) && hashes[a.Seq-1] != a.Hash:
		rep.fail(a.Seq, "entry %d is not the one the anchor recorded: the chain was rewritten", a.Seq)
	}
	if head != nil {
		switch {
		case head.Seq > after:
			rep.fail(after+1, "the exported head is entry %d, the database has %d entries", head.Seq, after)
		case head.Seq > 0 && int(head.Seq) <= len(hashes) && hashes[head.Seq-1] != head.Hash:
			rep.fail(head.Seq, "entry %d is not the one exported (hash %s): the chain was rewritten",
				head.Seq, short(head.Hash))
		case head.Seq == 0 && head.Hash != backend.GenesisHash:
			rep.fail(1, "the exported head 0 must have the genesis hash")
		}
	}
	rep.OK = rep.BrokenSeq == 0
	return rep, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

func (s *Store) entryHash(e backend.AuditEntry, keyedFrom int64) (string, error) {
	if e.Seq < keyedFrom {
		return AuditHash(e)
	}
	return auditMAC(s.audit.key, e)
}

func anchorFileName(dbPath string) string {
	p := anchorPath(dbPath)
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' || p[i] == '\\' {
			return p[i+1:]
		}
	}
	return p
}

// openAudit loads the key and reconciles the anchor with the database at
// start, under the write lock so that no other process commits meanwhile:
// a fresh database is anchored at its empty head; a chain from before the
// key is keyed from its next entry (an AuditKeyed entry says so); a
// database behind its anchor, a rewritten entry, or a missing or damaged
// anchor is recorded as an AuditDiscrepancy entry, said in the log, and the
// anchor moved to the new head, so that it is reported by every verify
// after, never silently absorbed.
func (s *Store) openAudit(ctx context.Context) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("open the audit chain: %w", err)
	}
	defer rollback(tx)
	a, aerr := readAnchor(s.path)
	if aerr != nil && !errors.Is(aerr, errNoAnchor) {
		slog.Warn("audit anchor unreadable", "err", aerr)
	}
	var keyedSetting int64
	var v string
	switch err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, keyedFromSetting).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("open the audit chain: %w", err)
	default:
		keyedSetting, _ = strconv.ParseInt(v, 10, 64)
	}
	dbSeq, dbHead, err := readHead(ctx, tx)
	if err != nil {
		return fmt.Errorf("open the audit chain: %w", err)
	}
	where := ""
	if aerr == nil {
		where = a.Key
	}
	// A key is created only for a chain that never had one.
	create := aerr != nil && keyedSetting == 0
	key, at, err := loadAuditKey(s.path, where, create)
	if err != nil {
		return auditKeyError(s.path, where, err)
	}
	s.audit = auditState{key: key, keyAt: at}

	problem := ""
	keyedFrom := keyedSetting
	switch {
	case aerr == nil && a.valid(key):
		keyedFrom = a.KeyedFrom
		if a.Seq > dbSeq {
			problem = fmt.Sprintf("the anchor says %d entries, the database has %d: entries %d–%d were lost "+
				"(removed, a lost -wal file, or the database was restored from an older copy)",
				a.Seq, dbSeq, dbSeq+1, a.Seq)
		} else if a.Seq > 0 {
			var h string
			if err := tx.QueryRowContext(ctx, `SELECT hash FROM audit WHERE seq = ?`, a.Seq).Scan(&h); err != nil ||
				h != a.Hash {
				problem = fmt.Sprintf("entry %d is not the one the anchor recorded: the chain was rewritten", a.Seq)
			}
		}
	case aerr == nil || !errors.Is(aerr, errNoAnchor):
		problem = "the anchor file " + anchorFileName(s.path) + " was changed or damaged"
	case keyedSetting != 0:
		problem = "the anchor file " + anchorFileName(s.path) + " is missing"
	}
	if keyedFrom == 0 || keyedFrom > dbSeq+1 {
		keyedFrom = dbSeq + 1 // a new chain, one from before the key, or one that lost its keyed part
	}
	s.audit.keyedFrom = keyedFrom
	if keyedSetting != keyedFrom {
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, keyedFromSetting,
			strconv.FormatInt(keyedFrom, 10)); err != nil {
			return fmt.Errorf("open the audit chain: %w", err)
		}
	}
	force := false
	switch {
	case problem != "":
		slog.Warn("audit chain: "+problem, "anchor_file", anchorFileName(s.path))
		s.audit.startProblem = problem
		data := map[string]any{"problem": problem, "databaseEntries": dbSeq, "databaseHead": dbHead}
		if aerr == nil {
			data["anchorEntries"], data["anchorHead"] = a.Seq, a.Hash
		}
		if _, err := s.appendAudit(ctx, tx, backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine,
			Kind: AuditDiscrepancy, Data: data}); err != nil {
			return fmt.Errorf("open the audit chain: %w", err)
		}
		force = true // the anchor is ahead or untrusted: replace it
	case dbSeq > 0 && keyedFrom == dbSeq+1 && keyedSetting == 0:
		if _, err := s.appendAudit(ctx, tx, backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine,
			Kind: AuditKeyed, Data: map[string]any{"unkeyedEntries": dbSeq, "unkeyedHead": dbHead}}); err != nil {
			return fmt.Errorf("open the audit chain: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("open the audit chain: commit: %w", err)
	}
	seq, hash, err := readHead(ctx, s.w)
	if err != nil {
		return err
	}
	if err := writeAnchor(s.path, key, anchor{Seq: seq, Hash: hash, KeyedFrom: keyedFrom, Key: at}, force); err != nil {
		return fmt.Errorf("open the audit chain: %w", err)
	}
	return nil
}
